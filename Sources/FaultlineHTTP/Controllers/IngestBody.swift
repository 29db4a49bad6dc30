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

    /// - Parameter text: whether the route's format is text too (`text/plain` is then read as it is, as Apple's `.crash`
    ///   reports are).
    static func read(_ request: Request, limit: Int, text: Bool = false) async throws -> IngestBody {
        try checkContentType(request.headers[.contentType], text: text)
        guard let encoding = BodyDecoding.ContentEncoding(header: request.headers[.contentEncoding]) else {
            throw FormatError(.unsupportedEncoding, "Content-Encoding must be gzip, br, deflate or identity")
        }
        try DeclaredLength.check(request, limit: limit)
        let body = try await request.body.collect(upTo: limit)
        let bytes = try BodyDecoding.inflate(body, encoding: encoding, limit: limit)
        let storedPayload: () throws -> StoredPayload
        if encoding == .gzip {
            storedPayload = {
                StoredPayload(bytes: Array(body.readableBytesView), encoding: .gzip, inflatedSize: bytes.count)
            }
        } else {
            storedPayload = {
                StoredPayload(
                    bytes: try BodyDecoding.deflateForStorage(bytes), encoding: .deflate, inflatedSize: bytes.count)
            }
        }
        return IngestBody(bytes: bytes, storedPayload: storedPayload)
    }

    /// JSON, no content type at all (some SDKs send none), or one of the two generic types tools send for a
    /// file's bytes: `application/octet-stream`, and `application/x-www-form-urlencoded`, which is what
    /// `curl --data-binary @file` sends unless told otherwise. The body's format is fixed per route, so these are
    /// read as the route's JSON exactly as `application/json` is (nothing is form-decoded). Anything else is 415:
    /// a `multipart/form-data` upload (`curl -F`) wraps the file in a form this route does not unpack.
    static func checkContentType(_ header: String?, text: Bool = false) throws {
        guard let header, !header.isEmpty else { return }
        let mediaType =
            header.split(separator: ";", maxSplits: 1).first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            } ?? ""
        if text, mediaType == "text/plain" { return }
        if mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
            || mediaType == "application/octet-stream" || mediaType == "application/x-www-form-urlencoded"
        {
            return
        }
        if mediaType == "multipart/form-data" {
            throw FormatError(
                .unsupportedMediaType,
                "send the JSON itself as the body (curl --data-binary @file), not as a multipart form (curl -F)")
        }
        throw FormatError(
            .unsupportedMediaType,
            "Content-Type must be application/json (application/octet-stream and application/x-www-form-urlencoded are read as JSON too), not \(mediaType)"
        )
    }
}
