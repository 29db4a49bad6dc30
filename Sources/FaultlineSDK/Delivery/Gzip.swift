import CZlib

/// gzip (RFC 1952) over zlib: request bodies are stored and sent compressed (`Content-Encoding: gzip`).
package enum Gzip {
    /// Compresses `input` into one gzip member (`deflateInit2` with `windowBits` 31).
    package static func compress(_ input: [UInt8], level: Int32 = 6) throws -> [UInt8] {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw SDKError(.io, "zlib could not start compressing") }
        defer { deflateEnd(&stream) }
        let bound = Int(deflateBound(&stream, uLong(input.count)))
        var output = [UInt8](repeating: 0, count: max(bound, 64))
        let status = input.withUnsafeBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { out -> Int32 in
                stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
                stream.avail_in = uInt(inp.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { throw SDKError(.io, "zlib could not compress (status \(status))") }
        output.removeSubrange(Int(stream.total_out)...)
        return output
    }

    /// Inflates a gzip body into at most `limit` bytes; nil when it is not a complete gzip stream or is larger.
    package static func decompress(_ input: [UInt8], limit: Int = 16 << 20) -> [UInt8]? {
        guard input.count >= 18, input[0] == 0x1f, input[1] == 0x8b else { return nil }
        var stream = z_stream()
        guard inflateInit2_(&stream, 31, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK else { return nil }
        defer { inflateEnd(&stream) }
        let chunkSize = 64 * 1024
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        return input.withUnsafeBufferPointer { inp -> [UInt8]? in
            stream.next_in = UnsafeMutablePointer(mutating: inp.baseAddress)
            stream.avail_in = uInt(inp.count)
            // Each round makes progress or ends; the bound only guards against a zlib that would not.
            for _ in 0..<(limit / chunkSize + 2 + inp.count) {
                let status = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
                    stream.next_out = out.baseAddress
                    stream.avail_out = uInt(chunkSize)
                    return inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunkSize - Int(stream.avail_out)
                guard output.count + produced <= limit else { return nil }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END: return stream.avail_in == 0 ? output : nil
                case Z_OK: continue
                case Z_BUF_ERROR where stream.avail_in > 0 && produced > 0: continue
                default: return nil
                }
            }
            return nil
        }
    }
}
