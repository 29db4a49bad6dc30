import CBrotli

/// Brotli decoding (`Content-Encoding: br`) with a hard output limit and strict end-of-stream checks.
///
/// sentry-sdk compresses with brotli whenever the application happens to have the `brotli` package
/// installed, so the server must take it. The rules are the gzip ones (`Zlib.inflate`): the output
/// never grows past `limit`, however small the input (a brotli bomb stops at the limit), a stream that
/// is cut short is an error rather than a shorter body, and bytes after the end of the stream are junk.
///
/// Memory: besides the output, the decoder holds one ring buffer of the stream's window, at most 16 MiB
/// (the large-window extension, which could ask for 1 GiB, is never enabled).
enum Brotli {
    /// Decodes all of `input` into at most `limit` bytes.
    /// - Throws: `FormatError.tooLarge` past the limit, `.corruptCompression` for corrupt, truncated or
    ///   trailing bytes.
    static func decompress(_ input: [UInt8], limit: Int) throws -> [UInt8] {
        guard !input.isEmpty else { return [] }
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw FormatError(.corruptCompression, "brotli could not start")
        }
        defer { BrotliDecoderDestroyInstance(state) }
        let chunkSize = 64 * 1024
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        return try input.withUnsafeBufferPointer { inputBuffer in
            var nextIn: UnsafePointer<UInt8>? = inputBuffer.baseAddress
            var availableIn = inputBuffer.count
            while true {
                var availableOut = chunkSize
                let result = chunk.withUnsafeMutableBufferPointer { out -> BrotliDecoderResult in
                    var nextOut: UnsafeMutablePointer<UInt8>? = out.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                let produced = chunkSize - availableOut
                guard output.count + produced <= limit else {
                    throw FormatError(.tooLarge, "the body decompresses to more than \(limit) bytes")
                }
                output.append(contentsOf: chunk[0..<produced])
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS:
                    guard availableIn == 0 else {
                        throw FormatError(.corruptCompression, "unexpected bytes after the end of the brotli stream")
                    }
                    return output
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
                    continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT:
                    // All input was given at once: asking for more means the stream was cut short.
                    throw FormatError(.corruptCompression, "the brotli stream is truncated")
                default:
                    let code = BrotliDecoderGetErrorCode(state)
                    let reason = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error \(code.rawValue)"
                    throw FormatError(.corruptCompression, "the body does not decompress as brotli (\(reason))")
                }
            }
        }
    }
}
