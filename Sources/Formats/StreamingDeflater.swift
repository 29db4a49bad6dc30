import CZlib

/// Compresses a stream into gzip chunk by chunk (`symupload` gzips debug files while uploading them,
/// so a 2 GB file never sits in memory).
public final class StreamingDeflater {
    var stream = z_stream()
    var chunk = [UInt8](repeating: 0, count: 256 * 1024)

    /// - Parameter level: 1 (fastest) to 9 (smallest).
    public init(level: Int32 = 3) throws {
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw FormatError(.corruptCompression, "zlib could not start")
        }
    }

    deinit { deflateEnd(&stream) }

    /// Compresses `input`; with `finish`, also writes the end of the stream. Returns the compressed bytes
    /// produced so far (possibly none).
    public func compress(_ input: [UInt8], finish: Bool = false) throws -> [UInt8] {
        var output: [UInt8] = []
        var input = input
        try input.withUnsafeMutableBufferPointer { inp in
            stream.next_in = inp.baseAddress
            stream.avail_in = uInt(inp.count)
            repeat {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(out.count)
                    return deflate(&stream, finish ? Z_FINISH : Z_NO_FLUSH)
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
                    throw FormatError(.corruptCompression, "zlib could not compress (status \(status))")
                }
                output.append(contentsOf: chunk[0..<(chunk.count - Int(stream.avail_out))])
            } while stream.avail_out == 0
        }
        return output
    }
}
