import CZlib

/// zlib, used directly: inflating with a hard output limit and strict end-of-stream checks, and
/// compressing stored payloads.
///
/// Direct rather than through a wrapper because two guarantees matter here and wrappers hide them: a
/// truncated stream (no end marker or checksum) is an error, not a shorter body; and the output can
/// never grow past the limit, however small the input — the gzip-bomb rule.
enum Zlib {
    /// zlib's `windowBits`: 15 + 32 auto-detects the gzip or zlib header; -15 is raw deflate.
    enum Container: Int32 {
        case gzipOrZlib = 47
        case raw = -15
    }

    /// Inflates all of `input` into at most `limit` bytes.
    static func inflate(_ input: [UInt8], container: Container, limit: Int) throws -> [UInt8] {
        guard !input.isEmpty else { return [] }
        var stream = z_stream()
        guard inflateInit2_(&stream, container.rawValue, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw FormatError(.corruptCompression, "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        let chunkSize = 64 * 1024
        var output: [UInt8] = []
        // Not zero-filled (that was 4 % of a small report's ingest): only the bytes zlib wrote are read.
        let chunk = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: chunkSize)
        defer { chunk.deallocate() }
        return try input.withUnsafeBufferPointer { inputBuffer in
            stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.avail_in = uInt(inputBuffer.count)
            while true {
                stream.next_out = chunk.baseAddress
                stream.avail_out = uInt(chunkSize)
                let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                let produced = chunkSize - Int(stream.avail_out)
                guard output.count + produced <= limit else {
                    throw FormatError(.tooLarge, "the body inflates to more than \(limit) bytes")
                }
                output.append(contentsOf: UnsafeBufferPointer(rebasing: chunk[0..<produced]))
                switch status {
                case Z_STREAM_END:
                    // gzip allows several members back to back; anything else after the end is junk.
                    if container == .gzipOrZlib, stream.avail_in >= 2, stream.next_in[0] == 0x1f,
                        stream.next_in[1] == 0x8b
                    {
                        guard inflateReset(&stream) == Z_OK else {
                            throw FormatError(.corruptCompression, "zlib reset failed")
                        }
                        continue
                    }
                    guard stream.avail_in == 0 else {
                        throw FormatError(
                            .corruptCompression, "unexpected bytes after the end of the compressed stream")
                    }
                    return output
                case Z_OK:
                    continue
                case Z_BUF_ERROR where stream.avail_in == 0:
                    throw FormatError(.corruptCompression, "the compressed stream is truncated")
                case Z_BUF_ERROR:
                    continue
                default:
                    throw FormatError(.corruptCompression, "the body does not inflate (zlib status \(status))")
                }
            }
        }
    }

    /// Compresses `input` as a raw deflate stream (no header or checksum: what a ZIP entry holds).
    static func deflateRaw(_ input: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        try deflateWhole(input, level: level, windowBits: Container.raw.rawValue, memLevel: 8)
    }

    /// `input` deflated in one call: `windowBits` as zlib takes it (8…15 with the zlib header, -8…-15 raw), the
    /// hash table `2^(memLevel + 7)` entries.
    private static func deflateWhole(_ input: [UInt8], level: Int32, windowBits: Int32, memLevel: Int32) throws
        -> [UInt8]
    {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, windowBits, memLevel, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw FormatError(.corruptCompression, "zlib could not start")
        }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var status = Z_OK
        // Not zero-filled first: zlib writes what it returns, and only that much is kept.
        let output = [UInt8](unsafeUninitializedCapacity: max(bound, 16)) { out, count in
            status = input.withUnsafeBufferPointer { inp in
                stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)  // zlib only reads it
                stream.avail_in = uInt(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
            count = status == Z_STREAM_END ? Int(stream.total_out) : 0
        }
        guard status == Z_STREAM_END else {
            throw FormatError(.corruptCompression, "zlib could not compress (status \(status))")
        }
        return output
    }

    /// The CRC-32 a ZIP entry records of its uncompressed bytes.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
    }

    /// Compresses `input` in the zlib format at `level` (1 = fastest).
    ///
    /// The window and the match-finder's hash table are sized to the input (at most zlib's defaults): a window
    /// larger than the input finds no more matches, and zlib clears the whole hash table for every stream — 64 KB
    /// at the default size, more work than compressing a 10 KB result at level 1. Any zlib reader inflates the
    /// result (the header records the window).
    static func compress(_ input: [UInt8], level: Int32 = 1) throws -> [UInt8] {
        var windowBits: Int32 = 9
        while windowBits < 15 && (1 << windowBits) < input.count { windowBits += 1 }
        // The hash table has 2^(memLevel + 7) entries: 16 KB of them under a 16 KB window, zlib's default (8) at 32 KB.
        let memLevel: Int32 = windowBits == 15 ? 8 : max(1, windowBits - 8)
        return try deflateWhole(input, level: level, windowBits: windowBits, memLevel: memLevel)
    }
}
