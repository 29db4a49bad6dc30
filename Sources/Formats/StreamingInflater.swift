import CZlib

/// Inflates a gzip or zlib stream that arrives in chunks (an upload body), under a hard output limit.
///
/// The one-shot `Zlib.inflate` needs the whole input; uploads of debug files can be gigabytes and are
/// written to disk as they arrive, so this keeps one `z_stream` across chunks.
public final class StreamingInflater {
    var stream = z_stream()
    let limit: UInt64
    var produced: UInt64 = 0
    var finished = false
    var chunk = [UInt8](repeating: 0, count: 256 * 1024)

    /// - Parameters:
    ///   - limit: most bytes the output may have; more throws `FormatError.tooLarge`.
    ///   - raw: a raw deflate stream (a ZIP entry's data) instead of gzip or zlib.
    public init(limit: UInt64, raw: Bool = false) throws {
        self.limit = limit
        guard
            inflateInit2_(
                &stream, (raw ? Zlib.Container.raw : .gzipOrZlib).rawValue, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw FormatError(.corruptCompression, "zlib could not start")
        }
    }

    deinit { inflateEnd(&stream) }

    /// Inflates `input`, calling `output` with each piece of inflated bytes.
    public func feed(_ input: [UInt8], _ output: ([UInt8]) throws -> Void) throws {
        guard !input.isEmpty else { return }
        guard !finished else {
            throw FormatError(.corruptCompression, "unexpected bytes after the end of the compressed stream")
        }
        var input = input
        try input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = uInt(inp.count)
            while stream.avail_in > 0 || stream.avail_out == 0 {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let n = chunk.count - Int(stream.avail_out)
                produced += UInt64(n)
                guard produced <= limit else {
                    throw FormatError(.tooLarge, "the body inflates to more than \(limit) bytes")
                }
                if n > 0 { try output(Array(chunk[0..<n])) }
                switch status {
                case Z_STREAM_END:
                    guard stream.avail_in == 0 else {
                        throw FormatError(
                            .corruptCompression, "unexpected bytes after the end of the compressed stream")
                    }
                    finished = true
                    return
                case Z_OK:
                    continue
                case Z_BUF_ERROR:
                    if stream.avail_in == 0 { return }
                default:
                    throw FormatError(.corruptCompression, "the body does not inflate (zlib status \(status))")
                }
            }
        }
    }

    /// Checks that the stream ended properly (not truncated).
    public func finish() throws {
        guard finished else { throw FormatError(.corruptCompression, "the compressed stream is truncated") }
    }
}
