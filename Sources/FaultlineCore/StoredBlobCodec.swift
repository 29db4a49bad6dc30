/// How a store compresses the bulky things it makes itself (today: symbolication results), so that a report costs
/// less disk and less write-ahead log. A port: the codec that compresses lives in `Formats` (zlib), the store only
/// calls it, and the composition root passes it in (as it passes the hasher).
///
/// The rule a codec must keep: what `compress` returns never starts with `{`, so that a reader tells a compressed
/// blob from JSON written before compression (or by a store without a codec) by its first byte. zlib's header
/// byte is `0x18`–`0x78` (the deflate method and the window's size).
public struct StoredBlobCodec: Sendable {
    /// Compresses a blob; nil keeps it as it is (a codec that does not compress, or a blob it would not shrink).
    public let compress: @Sendable ([UInt8]) -> [UInt8]?
    /// Restores what `compress` made, in at most `limit` bytes; throws on a damaged blob or one that would exceed
    /// the limit.
    public let decompress: @Sendable (_ blob: [UInt8], _ limit: Int) throws -> [UInt8]

    public init(
        compress: @escaping @Sendable ([UInt8]) -> [UInt8]?,
        decompress: @escaping @Sendable (_ blob: [UInt8], _ limit: Int) throws -> [UInt8]
    ) {
        self.compress = compress
        self.decompress = decompress
    }

    /// Keeps blobs as they are, and cannot read a compressed one (a store's tests, tools that need no codec).
    public static let none = StoredBlobCodec(
        compress: { _ in nil },
        decompress: { _, _ in throw StoredBlobError("the blob is compressed, and this store was opened without a codec")
        })

    /// True when `blob` is as written without compression: JSON, whose first byte is `{`.
    public static func isPlain(_ blob: some Collection<UInt8>) -> Bool { blob.first == UInt8(ascii: "{") }
}

/// A stored blob that cannot be read back (damaged, or compressed with no codec to restore it).
public struct StoredBlobError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public init(_ description: String) { self.description = description }
}
