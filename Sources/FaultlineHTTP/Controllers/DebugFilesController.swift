import FaultlineCore
import Formats
import Foundation
import HTTPTypes
import Hummingbird
import Pipeline

/// The debug-file store's API for CI: upload one file, ask which files are missing, list.
struct DebugFilesController {
    let service: DebugFileService
    /// Most bytes one upload may have after inflating.
    let maxFileBytes: UInt64

    var endpoints: RouteCollection<UploadContext> {
        RouteCollection(context: UploadContext.self)
            .put("debug-files/{build_id}", use: upload)
            .post("debug-files", use: uploadUnnamed)
            .post("debug-files/missing", use: missing)
            .get("debug-files", use: list)
    }

    struct FileOut: Codable {
        var buildID: String
        var kind: String
        var size: UInt64
        var sha256: String
        var architecture: String
        var fileType: String
        var features: [String]
        var name: String?
        var uploadedAt: String
        enum CodingKeys: String, CodingKey {
            case buildID = "build_id", kind, size, sha256, architecture, fileType = "file_type", features, name
            case uploadedAt = "uploaded_at"
        }
        init(_ f: StoredDebugFile) {
            buildID = f.buildID.rawValue
            kind = f.kind.rawValue
            size = f.size
            sha256 = f.sha256.rawValue
            architecture = f.architecture
            fileType = f.fileType
            features = f.features
            name = f.name
            uploadedAt = Timestamps.formatISO8601(f.uploadedAt)
        }
    }

    struct Stored: ResponseEncodable {
        var files: [FileOut]
    }

    /// `PUT /api/v1/debug-files/{build_id}[?name=FILE]`: the body is the ELF file, a Mach-O file or a source bundle
    /// (`SYSB`, its manifest's `code_id` must be the build-id), plain or gzip'd; it is streamed to disk, never held in
    /// memory, and checked as it arrives (`DebugFileUploadStream`). A fat Mach-O (or a ZIP of dSYMs) is stored one
    /// slice a file, and one of its slices must have the build-id. The answer describes the caller's own stored files:
    /// kinds, size and SHA-256.
    @Sendable func upload(_ request: Request, context: UploadContext) async throws -> EditedResponse<Stored> {
        let raw = try context.parameters.require("build_id")
        guard let claimed = BuildID(raw) else {
            throw APIError.badRequest("must be an even number of hex digits (2–128)", field: "build_id")
        }
        return try await receive(request, context: context, claimed: claimed)
    }

    /// `POST /api/v1/debug-files[?name=FILE]`: an upload whose build-ids are not known in advance — a fat Mach-O, a ZIP
    /// of dSYMs (App Store Connect's `dSYMs.zip`), or any file `PUT` takes. Every debug file in it is stored under its
    /// own build-id (a Mach-O slice's LC_UUID); the answer lists them all.
    @Sendable func uploadUnnamed(_ request: Request, context: UploadContext) async throws -> EditedResponse<Stored> {
        try await receive(request, context: context, claimed: nil)
    }

    /// Streams the body to disk and stores what it holds.
    func receive(_ request: Request, context: UploadContext, claimed: BuildID?) async throws -> EditedResponse<Stored> {
        // Debug files are streamed through zlib; brotli is for ingest bodies only.
        guard let encoding = BodyDecoding.ContentEncoding(header: request.headers[.contentEncoding]), encoding != .br
        else {
            throw FormatError(.unsupportedEncoding, "Content-Encoding must be gzip, deflate or identity")
        }
        let name = request.uri.queryParameters["name"].map { IngestLimits.truncate(String($0), toBytes: 255) }
        // What the project's quota leaves, counting its current files of this build-id as freed (replaced).
        let allowance = try await service.uploadAllowance(project: context.project, replacing: claimed)
        let stream = DebugFileUploadStream(
            maxFileBytes: maxFileBytes, allowance: allowance, claimed: claimed, digest: service.contentDigester(),
            quotaError: service.quotaError(context.project))
        let upload = try service.temporaryUpload()
        let written: (size: UInt64, sha256: ContentHash)
        do {
            written = try await stream.write(request.body, encoding: encoding, to: upload.path)
        } catch {
            service.discard(upload)
            throw error
        }
        let accepted = try await service.acceptAll(
            ReceivedDebugFile(upload: upload, sha256: written.sha256, size: written.size), claimed: claimed,
            project: context.project,
            name: name)
        return EditedResponse(status: .created, response: Stored(files: accepted.flatMap(\.stored).map(FileOut.init)))
    }

    struct WantIn: Decodable {
        var buildID: String
        var kinds: [String]?
        enum CodingKeys: String, CodingKey {
            case buildID = "build_id", kinds
        }
    }

    struct MissingIn: Decodable {
        var files: [WantIn]
    }

    struct WantOut: Codable {
        var buildID: String
        var kinds: [String]
        enum CodingKeys: String, CodingKey {
            case buildID = "build_id", kinds
        }
    }

    struct MissingOut: ResponseEncodable {
        var missing: [WantOut]
    }

    /// `POST /api/v1/debug-files/missing` with `{"files": [{"build_id": …, "kinds": ["debuginfo", …]}]}`.
    @Sendable func missing(_ request: Request, context: UploadContext) async throws -> MissingOut {
        let buffer = try await request.body.collect(upTo: 4 << 20)
        let input: MissingIn
        do {
            input = try JSONDecoder().decode(MissingIn.self, from: Data(buffer.readableBytesView))
        } catch {
            throw APIError.badRequest(
                "expected {\"files\": [{\"build_id\": \"…\", \"kinds\": [\"debuginfo\", \"executable\"]}]}")
        }
        guard input.files.count <= 10_000 else {
            throw APIError.badRequest("at most 10000 files per question", field: "files")
        }
        var wants: [DebugFileWant] = []
        for (i, file) in input.files.enumerated() {
            guard let id = BuildID(file.buildID) else {
                throw APIError.badRequest("must be an even number of hex digits (2–128)", field: "files[\(i)].build_id")
            }
            var kinds = Set<DebugFileKind>()
            // No kinds: the ELF kinds (a source bundle is asked for by name, `sources`).
            for kind in file.kinds ?? DebugFileKind.elfKinds.sorted().map(\.rawValue) {
                guard let parsed = DebugFileKind(rawValue: kind) else {
                    throw APIError.badRequest("must be debuginfo, executable or sources", field: "files[\(i)].kinds")
                }
                kinds.insert(parsed)
            }
            wants.append(DebugFileWant(buildID: id, kinds: kinds))
        }
        let missing = try await service.missing(wants, project: context.project)
        return MissingOut(
            missing: missing.map { WantOut(buildID: $0.buildID.rawValue, kinds: $0.kinds.sorted().map(\.rawValue)) })
    }

    @Sendable func list(_ request: Request, context: UploadContext) async throws -> Stored {
        Stored(files: try await service.list(project: context.project).map(FileOut.init))
    }
}

/// The debuginfod face: `GET /buildid/{build_id}/debuginfo|executable|section/{name}|source/{abs path}`, so
/// that gdb, eu-stack and `debuginfod-find` can fetch symbols and sources (`DEBUGINFOD_URLS=http://host:port`).
struct DebuginfodController<Context: RequestContext> {
    let service: DebugFileService
    /// Which project's files the caller may fetch (nil = any project: the admin token and `--public-debuginfod`
    /// get the file of the oldest project, lowest id, that has one).
    let scope: @Sendable (Context) -> ProjectID?
    let fileIO = FileIO()

    var endpoints: RouteCollection<Context> {
        RouteCollection(context: Context.self)
            .get("buildid/{build_id}/debuginfo") { request, context in try await serve(.debuginfo, request, context) }
            .get("buildid/{build_id}/executable") { request, context in try await serve(.executable, request, context) }
            .get("buildid/{build_id}/section/{section}", use: section)
            .get("buildid/{build_id}/source/**", use: source)
    }

    func buildID(_ context: Context) throws -> BuildID {
        guard let id = BuildID(try context.parameters.require("build_id")) else {
            throw APIError.badRequest("must be an even number of hex digits (2–128)", field: "build_id")
        }
        return id
    }

    @Sendable func serve(_ kind: DebugFileKind, _ request: Request, _ context: Context) async throws -> Response {
        let id = try buildID(context)
        guard let path = try await service.path(of: id, kind: kind, project: scope(context)) else {
            throw APIError.notFound("no \(kind.rawValue) for build-id \(id)")
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        let body = try await fileIO.loadFile(path: path, context: context)
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/octet-stream", .contentLength: String(size),
                HTTPField.Name("X-Debuginfod-Size")!: String(size),
            ],
            body: body)
    }

    /// `GET /buildid/{id}/source/{absolute path}`: one file of the build-id's source bundle, as debuginfod clients
    /// ask for it (`debuginfod-find source ID /abs/path` requests `…/source/abs/path`, percent-encoded). The path
    /// is a key into the bundle, normalised the same way on both sides (`//`, `.` and `..` are resolved lexically),
    /// never a path on the server's disk. The bundle is parsed once and read off the request's executor
    /// (`SourceBundleCache`, through the service).
    @Sendable func source(_ request: Request, context: Context) async throws -> Response {
        let id = try buildID(context)
        let raw = request.uri.path
        guard let marker = raw.range(of: "/source/") else {
            throw APIError.badRequest("expected /buildid/{id}/source/{path}")
        }
        let encoded = "/" + raw[marker.upperBound...]
        guard let decoded = encoded.removingPercentEncoding, let path = SourcePaths.normalized(decoded) else {
            throw APIError.badRequest("not a source path", field: "path")
        }
        guard let bundlePath = try await service.path(of: id, kind: .sources, project: scope(context)) else {
            throw APIError.notFound("no sources for build-id \(id)")
        }
        let bytes: [UInt8]?
        do {
            bytes = try await service.sourceFile(path, inBundleAt: bundlePath)
        } catch {
            throw APIError.notFound("the source bundle of build-id \(id) cannot be read")
        }
        guard let bytes else { throw APIError.notFound("no source \(path) for build-id \(id)") }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/octet-stream", .contentLength: String(bytes.count),
                HTTPField.Name("X-Debuginfod-Size")!: String(bytes.count),
            ],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A section's raw bytes, from the debuginfo file if it has the section, else from the executable (an ELF file's
    /// section by name, a Mach-O image's by its ELF name or its own: `DebugFileSections`).
    @Sendable func section(_ request: Request, context: Context) async throws -> Response {
        let id = try buildID(context)
        let name = try context.parameters.require("section")
        for kind in [DebugFileKind.debuginfo, .executable] {
            guard let path = try await service.path(of: id, kind: kind, project: scope(context)),
                let range = DebugFileSections.range(named: name, inFileAt: path)
            else { continue }
            guard range.size > 0 else { break }
            let body = try await fileIO.loadFile(
                path: path, range: Int(range.offset)...Int(range.offset + range.size - 1), context: context)
            return Response(
                status: .ok, headers: [.contentType: "application/octet-stream", .contentLength: String(range.size)],
                body: body)
        }
        throw APIError.notFound("no section \(name) for build-id \(id)")
    }
}
