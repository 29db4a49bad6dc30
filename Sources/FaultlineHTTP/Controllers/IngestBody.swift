import FaultlineCore
import Formats
import Hummingbird

/// Reading an ingest request body: content type and encoding checks, a hard limit on the compressed
/// bytes, then inflating under a hard limit on the output.
struct IngestBody {
    /// The inflated JSON.
    var bytes: [UInt8]
    /// How to keep the body: the client's own gzip bytes when it sent gzip (no recompression on the hot
    /// path), else the inflated bytes compressed once, fast.
    var storedPayload: () throws -> StoredPayload

    static func read(_ request: Request, limit: Int) async throws -> IngestBody {
        try checkContentType(request.headers[.contentType])
        guard let encoding = BodyDecoding.ContentEncoding(header: request.headers[.contentEncoding]) else {
            throw FormatError(.unsupportedEncoding, "Content-Encoding must be gzip, br, deflate or identity")
        }
        try DeclaredLength.check(request, limit: limit)
        let body = try await request.body.collect(upTo: limit)
        let bytes = try BodyDecoding.inflate(body, encoding: encoding, limit: limit)
        let storedPayload: () throws -> StoredPayload
        if encoding == .gzip {
            storedPayload = { StoredPayload(bytes: Array(body.readableBytesView), encoding: .gzip, inflatedSize: bytes.count) }
        } else {
            storedPayload = { StoredPayload(bytes: try BodyDecoding.deflateForStorage(bytes), encoding: .deflate, inflatedSize: bytes.count) }
        }
        return IngestBody(bytes: bytes, storedPayload: storedPayload)
    }

    /// JSON, or no content type at all (some SDKs send none); anything else is 415.
    static func checkContentType(_ header: String?) throws {
        guard let header, !header.isEmpty else { return }
        let mediaType = header.split(separator: ";", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces).lowercased()
        if mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json")) {
            return
        }
        throw FormatError(.unsupportedMediaType, "Content-Type must be application/json, not \(mediaType)")
    }
}
