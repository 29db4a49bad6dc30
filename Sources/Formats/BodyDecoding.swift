import FaultlineCore
import NIOCore

/// Inflates request bodies under a hard output limit.
///
/// A gzip or brotli bomb (a few MB that inflate to gigabytes) must cost no more memory than the limit:
/// the decoder writes into buffers that together never exceed `limit` and stops with `tooLarge` the moment
/// the output would.
public enum BodyDecoding {
    /// A request's `Content-Encoding`.
    public enum ContentEncoding: String, Sendable {
        case identity
        case gzip
        case deflate
        /// Brotli (RFC 7932): what sentry-sdk sends when the app has the `brotli` package installed.
        case br

        /// Parses a `Content-Encoding` header value; nil for encodings we do not inflate (415).
        public init?(header: String?) {
            guard let raw = header?.trimmingASCIISpaces().lowercased(), !raw.isEmpty else {
                self = .identity
                return
            }
            switch raw {
            case "identity": self = .identity
            case "gzip", "x-gzip": self = .gzip
            case "deflate": self = .deflate
            case "br": self = .br
            default: return nil
            }
        }
    }

    /// Inflates `body` (when compressed) into at most `limit` bytes.
    /// - Throws: `FormatError.tooLarge` past the limit, `.corruptCompression` for bytes that do not
    ///   inflate or a stream that is cut short.
    public static func inflate(_ body: ByteBuffer, encoding: ContentEncoding, limit: Int) throws -> [UInt8] {
        let bytes = Array(body.readableBytesView)
        switch encoding {
        case .identity:
            guard bytes.count <= limit else { throw FormatError(.tooLarge, "the body is larger than \(limit) bytes") }
            return bytes
        case .gzip:
            guard bytes.count < 2 || (bytes[0] == 0x1f && bytes[1] == 0x8b) else {
                throw FormatError(.corruptCompression, "Content-Encoding is gzip but the body is not gzip")
            }
            return try Zlib.inflate(bytes, container: .gzipOrZlib, limit: limit)
        case .deflate:
            // RFC 9110's "deflate" is the zlib format, but some clients send raw deflate: sniff the header.
            let looksZlib =
                bytes.count >= 2 && bytes[0] & 0x0f == 8 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
            return try Zlib.inflate(bytes, container: looksZlib ? .gzipOrZlib : .raw, limit: limit)
        case .br:
            return try Brotli.decompress(bytes, limit: limit)
        }
    }

    /// Inflates stored payload bytes (gzip as the client sent them, or zlib as we compressed them).
    public static func inflateStored(_ bytes: [UInt8], limit: Int) throws -> [UInt8] {
        try Zlib.inflate(bytes, container: .gzipOrZlib, limit: limit)
    }

    /// Compresses `bytes` in the zlib format, fast (level 1): payloads are stored once and rarely read.
    public static func deflateForStorage(_ bytes: [UInt8]) throws -> [UInt8] {
        try Zlib.compress(bytes, level: 1)
    }
}

extension String {
    func trimmingASCIISpaces() -> Substring {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
