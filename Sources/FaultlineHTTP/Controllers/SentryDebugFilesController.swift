import FaultlineCore
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import Pipeline

/// sentry-cli's debug-file upload (`sentry-cli debug-files upload`), under `/api/0/`, with the project's
/// upload token as the auth token:
///
/// - `GET  organizations/{org}/chunk-upload/`: the chunk options (where and how to upload chunks);
/// - `POST organizations/{org}/chunk-upload/`: chunks, `multipart/form-data`;
/// - `POST projects/{org}/{project}/files/difs/assemble/`: assemble files from chunks and store them;
/// - `GET  /api/0/`: who the token is (`sentry-cli info`).
///
/// The organization is ignored (the token decides the project); `{project}` must be the token's project.
/// Errors are answered as Sentry does, `{"detail": "…"}`, which sentry-cli prints.
struct SentryDebugFilesController {
    let service: ChunkUploadService
    /// The base URL clients reach the server at; nil: a URL relative to the API root (see `baseURL`).
    let publicURL: String?
    /// The largest debug file the server accepts (`--max-debug-file-mb`).
    let maxFileBytes: UInt64

    var endpoints: RouteCollection<UploadContext> {
        RouteCollection(context: UploadContext.self)
            .get("organizations/{org}/chunk-upload", use: options)
            .post("organizations/{org}/chunk-upload", use: upload)
            .post("projects/{org}/{project}/files/difs/assemble", use: assemble)
            .get("", use: info)
    }

    // MARK: Options

    struct Options: ResponseEncodable {
        var url: String
        var chunkSize: Int
        var chunksPerRequest: Int
        var maxFileSize: UInt64
        var maxRequestSize: Int
        var concurrency: Int
        var hashAlgorithm: String
        var compression: [String]
        var accept: [String]
    }

    /// `GET /api/0/organizations/{org}/chunk-upload/`.
    @Sendable func options(_ request: Request, context: UploadContext) async throws -> Options {
        let org = try organization(context)
        let limits = service.limits
        return Options(
            url: baseURL(request) + "/organizations/\(org)/chunk-upload/", chunkSize: limits.chunkSize,
            chunksPerRequest: limits.chunksPerRequest, maxFileSize: maxFileBytes,
            maxRequestSize: limits.maxRequestBytes,
            concurrency: limits.concurrency, hashAlgorithm: "sha1", compression: ["gzip"],
            // sentry-cli 3.x ignores `accept`; older versions need "debug_files" in it to use chunks at all, and
            // "sources" to send the source bundles of `--include-sources` through them.
            accept: ["debug_files", "sources"])
    }

    /// The organization path segment, as it will be echoed in the upload URL: Sentry's slug characters only.
    func organization(_ context: UploadContext) throws -> String {
        let org = try context.parameters.require("org")
        guard (1...64).contains(org.utf8.count),
            org.utf8.allSatisfy({ b in
                (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
                    || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "-")
                    || b == UInt8(ascii: "_")
                    || b == UInt8(ascii: ".")
            })
        else { throw APIError.notFound("organization names are letters, digits, '-', '_' and '.' (any name works)") }
        return org
    }

    /// `publicURL` + `/api/0`, else nothing: sentry-cli resolves a URL without a scheme against the server it
    /// was pointed at (its `--url`) plus `/api/0/`, as with Sentry's own relative chunk-upload URL. The request's
    /// `Host` header is never echoed (a forged one would send the upload, with its token, elsewhere).
    func baseURL(_ request: Request) -> String {
        if let publicURL, !publicURL.isEmpty {
            var url = Substring(publicURL)
            while url.hasSuffix("/") { url = url.dropLast() }
            return String(url) + "/api/0"
        }
        return ""
    }

    // MARK: Chunks

    struct Empty: ResponseEncodable {}

    /// `POST /api/0/organizations/{org}/chunk-upload/`: every chunk is checked against its name and stored.
    @Sendable func upload(_ request: Request, context: UploadContext) async throws -> Empty {
        let chunks = try ChunkUploadBody(request: request, limits: service.limits)
        _ = try await service.receive(chunks, project: context.project)
        return Empty()
    }

    // MARK: Assemble

    struct FileIn: Decodable {
        var name: String
        var debugID: String?
        var chunks: [String]
        enum CodingKeys: String, CodingKey {
            case name, debugID = "debug_id", chunks
        }
    }

    /// `POST /api/0/projects/{org}/{project}/files/difs/assemble/` with `{"<sha1>": {name, debug_id, chunks}}`.
    @Sendable func assemble(_ request: Request, context: UploadContext) async throws -> Response {
        _ = try organization(context)
        let slug = try context.parameters.require("project")
        guard slug == context.project.slug.rawValue else {
            throw APIError.notFound(
                "project \(slug) not found: this upload token belongs to project \(context.project.slug)")
        }
        try DeclaredLength.check(request, limit: 16 << 20)
        let buffer = try await request.body.collect(upTo: 16 << 20)
        let input: [String: FileIn]
        do {
            input = try JSONDecoder().decode([String: FileIn].self, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest(
                "expected {\"<sha1>\": {\"name\": …, \"debug_id\": …, \"chunks\": [\"<sha1>\", …]}}")
        }
        var files: [DifAssembleRequest] = []
        for (key, file) in input.sorted(by: { $0.key < $1.key }) {
            guard let checksum = ChunkChecksum(key) else {
                throw APIError.badRequest("must be the SHA-1 of the file (40 hex digits)", field: key)
            }
            var chunks: [ChunkChecksum] = []
            for chunk in file.chunks {
                guard let parsed = ChunkChecksum(chunk) else {
                    throw APIError.badRequest("must be SHA-1 checksums (40 hex digits)", field: "\(key).chunks")
                }
                chunks.append(parsed)
            }
            files.append(DifAssembleRequest(checksum: checksum, name: file.name, debugID: file.debugID, chunks: chunks))
        }
        let results = try await service.assemble(files, project: context.project, maxFileBytes: maxFileBytes)
        return try Self.json(AssembleOut(results: results))
    }

    /// The answer: the request's keys, each `{state, missingChunks, detail, dif?}`.
    struct AssembleOut: Encodable {
        let results: [DifAssembleResult]

        struct Key: CodingKey {
            let stringValue: String
            init(stringValue: String) { self.stringValue = stringValue }
            var intValue: Int? { nil }
            init?(intValue: Int) { nil }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for result in results {
                try container.encode(FileOut(result), forKey: Key(stringValue: result.checksum.rawValue))
            }
        }
    }

    struct FileOut: Encodable {
        let result: DifAssembleResult
        init(_ result: DifAssembleResult) { self.result = result }
        enum CodingKeys: String, CodingKey {
            case state, missingChunks, detail, dif
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(result.state.rawValue, forKey: .state)
            try c.encode(result.missingChunks.map(\.rawValue), forKey: .missingChunks)
            try c.encode(result.detail, forKey: .detail)  // null when absent, as Sentry answers
            if let dif = result.dif { try c.encode(DifOut(dif), forKey: .dif) }
        }
    }

    /// Sentry's debug-file serializer shape; sentry-cli reads `debugId`/`uuid`, `objectName`, `cpuName`,
    /// `sha1` and `data.type` (which must be one of Sentry's object classes).
    struct DifOut: Encodable {
        var id: String
        var uuid: String
        var debugId: String
        var codeId: String
        var cpuName: String
        var objectName: String
        var symbolType = "elf"
        var headers = ["Content-Type": "application/octet-stream"]
        var size: UInt64
        var sha1: String
        var dateCreated: String
        var data: DataOut

        struct DataOut: Encodable {
            var type: String
            var features: [String]
        }

        init(_ dif: DifDescription) {
            id = dif.id
            uuid = dif.debugID
            debugId = dif.debugID
            codeId = dif.codeID.rawValue
            cpuName = dif.cpuName
            objectName = dif.objectName
            size = dif.size
            sha1 = dif.sha1.rawValue
            dateCreated = Timestamps.formatISO8601(dif.createdAt)
            data = DataOut(type: dif.objectClass.rawValue, features: dif.features)
            symbolType = dif.format.rawValue
        }
    }

    // MARK: Info

    struct Info: ResponseEncodable {
        struct Auth: Encodable {
            var scopes: [String]
        }
        var version: String
        var auth: Auth
        var user: String?

        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(version, forKey: .version)
            try c.encode(auth, forKey: .auth)
            try c.encode(user, forKey: .user)
        }
        enum CodingKeys: String, CodingKey {
            case version, auth, user
        }
    }

    /// `GET /api/0/`: an upload token may upload debug files of its project (`sentry-cli info`).
    @Sendable func info(_ request: Request, context: UploadContext) async throws -> Info {
        Info(version: "0", auth: Info.Auth(scopes: ["project:read", "project:releases", "project:write"]), user: nil)
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Response(
            status: .ok, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}
