import FaultlineCore

extension StoredBlobCodec {
    /// zlib at level 1 (the fastest): a symbolication result, JSON that repeats build-ids, paths and keys frame
    /// after frame, shrinks about 9× (9.7 KB → 1.1 KB for the ingest bench's reports) for ~20–50 µs of one core,
    /// which is less than the kernel spent writing those bytes to the WAL and then to the database file.
    /// The zlib header's first byte is `0x?8` (the deflate method under the window's size, `0x18`–`0x78`: the
    /// window is sized to the blob), never `{` (`0x7b`), as the port asks.
    public static let zlib = StoredBlobCodec(
        compress: { blob in
            guard let packed = try? Zlib.compress(blob, level: 1), packed.count < blob.count else { return nil }
            return packed
        },
        decompress: { blob, limit in
            guard !blob.isEmpty else { throw StoredBlobError("a stored blob is empty") }
            do {
                return try Zlib.inflate(blob, container: .gzipOrZlib, limit: limit)
            } catch {
                throw StoredBlobError("a stored blob does not inflate: \(error)")
            }
        })
}
