import FaultlineCore
import CompressNIO
import NIOCore

/// Inflates request bodies under a hard output limit.
///
/// A gzip bomb (a few MB that inflate to gigabytes) must cost no more memory than the limit: the
/// inflater writes into buffers that together never exceed `limit` and stops with `tooLarge` the moment
/// the output would.
public enum BodyDecoding {
    /// A request's `Content-Encoding`.
    public enum ContentEncoding: String, Sendable {
        case identity
        case gzip
        case deflate

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
            default: return nil
            }
        }
    }

    /// Inflates `body` (when compressed) into at most `limit` bytes.
    /// - Throws: `FormatError.tooLarge` past the limit, `.corruptCompression` for bytes that do not inflate.
    public static func inflate(_ body: ByteBuffer, encoding: ContentEncoding, limit: Int) throws -> [UInt8] {
        switch encoding {
        case .identity:
            guard body.readableBytes <= limit else { throw tooLarge(limit) }
            return Array(body.readableBytesView)
        case .gzip:
            return try inflate(body, algorithm: .gzip(), limit: limit)
        case .deflate:
            // RFC 9110's "deflate" is the zlib format, but some clients send raw deflate: sniff the header.
            var copy = body
            let looksZlib: Bool = {
                guard let b0 = copy.readInteger(as: UInt8.self), let b1 = copy.readInteger(as: UInt8.self) else { return false }
                return b0 & 0x0f == 8 && (UInt16(b0) << 8 | UInt16(b1)) % 31 == 0
            }()
            return try inflate(body, algorithm: looksZlib ? .zlib() : .deflate(), limit: limit)
        }
    }

    /// Inflates stored payload bytes (`StoredPayload.Encoding` names).
    public static func inflateStored(_ bytes: [UInt8], gzip: Bool, limit: Int) throws -> [UInt8] {
        try inflate(ByteBuffer(bytes: bytes), algorithm: gzip ? .gzip() : .zlib(), limit: limit)
    }

    /// Compresses `bytes` in the zlib format, fast (level 1): payloads are stored, rarely read.
    public static func deflateForStorage(_ bytes: [UInt8]) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        let out = try buffer.compress(with: .zlib(configuration: .init(compressionLevel: 1)))
        return Array(out.readableBytesView)
    }

    static func inflate(_ body: ByteBuffer, algorithm: CompressionAlgorithm, limit: Int) throws -> [UInt8] {
        var input = body
        guard input.readableBytes > 0 else { return [] }
        do {
            // maxSize + 1 so that exactly `limit` bytes is allowed and one more byte is detected.
            let out = try input.decompress(with: algorithm, maxSize: limit + 1)
            guard out.readableBytes <= limit else { throw tooLarge(limit) }
            return Array(out.readableBytesView)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw tooLarge(limit)
        } catch let error as CompressNIOError {
            throw FormatError(.corruptCompression, "the body does not inflate (\(error))")
        }
    }

    static func tooLarge(_ limit: Int) -> FormatError {
        FormatError(.tooLarge, "the body inflates to more than \(limit) bytes")
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
