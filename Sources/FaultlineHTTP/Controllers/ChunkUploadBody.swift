import FaultlineCore
import Formats
import Hummingbird
import NIOCore
import Pipeline

/// The chunks of one sentry-cli chunk request, decoded part by part while the body streams in.
///
/// The body is `multipart/form-data` with one part per chunk: `name="file_gzip"` (gzip'd) or
/// `name="file"` (plain), `filename="<sha1 of the uncompressed chunk>"`. At most one part's bytes are held
/// at a time; a gzip part inflates to at most the chunk size (a gzip bomb stops there); the whole body is
/// limited to `bodyLimit` as it arrives. Anything else in the body is refused (400).
struct ChunkUploadBody: AsyncSequence {
    typealias Element = UploadedChunk

    let body: RequestBody
    let parser: MultipartParser
    let chunkSize: Int
    let bodyLimit: Int

    /// - Throws: `FormatError` when the Content-Type is not `multipart/form-data` with a boundary.
    init(request: Request, limits: ChunkUploadLimits) throws {
        try DeclaredLength.check(request, limit: limits.requestBodyLimit)
        body = request.body
        let boundary = try MultipartParser.boundary(fromContentType: request.headers[.contentType])
        // One part more than allowed is read, so that the service names the limit.
        parser = try MultipartParser(boundary: boundary, maxParts: limits.chunksPerRequest + 1)
        chunkSize = limits.chunkSize
        bodyLimit = limits.requestBodyLimit
    }

    func makeAsyncIterator() -> Iterator {
        Iterator(source: body.makeAsyncIterator(), parser: parser, chunkSize: chunkSize, bodyLimit: bodyLimit)
    }

    struct Iterator: AsyncIteratorProtocol {
        var source: RequestBody.AsyncIterator
        var parser: MultipartParser
        let chunkSize: Int
        let bodyLimit: Int
        var events: [MultipartParser.Event] = []
        var eventIndex = 0
        var part: Part?
        var received = 0
        var ended = false

        init(source: RequestBody.AsyncIterator, parser: MultipartParser, chunkSize: Int, bodyLimit: Int) {
            self.source = source
            self.parser = parser
            self.chunkSize = chunkSize
            self.bodyLimit = bodyLimit
        }

        mutating func next() async throws -> UploadedChunk? {
            while true {
                while eventIndex < events.count {
                    let event = events[eventIndex]
                    eventIndex += 1
                    switch event {
                    case .partStart(let headers):
                        part = try Part(headers)
                    case .bodyData(let bytes):
                        let limit = chunkSize
                        try part?.append(bytes, chunkSize: limit)
                    case .partEnd:
                        guard let done = part else { continue }
                        part = nil
                        return try done.chunk(chunkSize: chunkSize)
                    }
                }
                if ended {
                    try parser.finish()
                    return nil
                }
                guard let buffer = try await source.next() else {
                    ended = true
                    continue
                }
                received += buffer.readableBytes
                guard received <= bodyLimit else {
                    throw FormatError(.tooLarge, "a chunk request may be at most \(bodyLimit) bytes")
                }
                events = try parser.feed(buffer.readableBytesView)
                eventIndex = 0
            }
        }
    }

    /// One part being read.
    struct Part {
        let checksum: ChunkChecksum
        let gzip: Bool
        var bytes: [UInt8] = []

        init(_ headers: MultipartPartHeaders) throws {
            switch headers.name {
            case "file_gzip": gzip = true
            case "file": gzip = false
            default:
                throw FormatError(
                    .invalidField, "unexpected form field \"\(headers.name)\" (expected file_gzip or file)",
                    field: "multipart")
            }
            guard let filename = headers.filename, let checksum = ChunkChecksum(filename) else {
                throw FormatError(
                    .invalidField, "each chunk's filename must be the SHA-1 of the chunk (40 hex digits)",
                    field: "multipart")
            }
            if let encoding = headers.transferEncoding, !["binary", "8bit", "7bit"].contains(encoding) {
                throw FormatError(
                    .invalidField, "Content-Transfer-Encoding \(encoding) is not supported", field: "multipart")
            }
            self.checksum = checksum
        }

        mutating func append(_ data: [UInt8], chunkSize: Int) throws {
            // Compressed chunks may be a little larger than the chunk (incompressible data); the request
            // limit bounds them. Plain ones may not.
            guard gzip || bytes.count + data.count <= chunkSize else {
                throw FormatError(.tooLarge, "chunk \(checksum) is larger than the chunk size (\(chunkSize) bytes)")
            }
            bytes.append(contentsOf: data)
        }

        func chunk(chunkSize: Int) throws -> UploadedChunk {
            guard gzip else { return UploadedChunk(claimed: checksum, bytes: bytes) }
            let inflated = try BodyDecoding.inflate(ByteBuffer(bytes: bytes), encoding: .gzip, limit: chunkSize)
            return UploadedChunk(claimed: checksum, bytes: inflated)
        }
    }
}
