import FaultlineCore
import Formats
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The read API: one stored report by event id, and a filtered, keyset-paged listing.
struct ReadController<Reader: ReportReader> {
    let reader: Reader
    let projects: ProjectService
    let symbolication: any SymbolicationStore
    let limits: IngestLimits

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .get("reports", use: list)
            .get("reports/{event_id}", use: get)
            .get("missing-debug-files", use: missingDebugFiles)
    }

    struct MissingOut: ResponseEncodable {
        struct File: Codable {
            var buildID: String
            var module: String?
            var reports: Int
            var releases: [String]
            /// The kinds the server holds for the build-id now (`["executable"]`: only a stripped executable).
            var has: [String]
            enum CodingKeys: String, CodingKey { case buildID = "build_id", module, reports, releases, has }
        }
        var missing: [File]
    }

    /// `GET /api/v1/missing-debug-files[?release=R][&project=SLUG]`: build-ids whose reports were symbolicated
    /// without debug information, with what the server holds for each (`has`).
    @Sendable func missingDebugFiles(_ request: Request, context: ReaderContext) async throws -> MissingOut {
        let params = request.uri.queryParameters
        let project: Project
        switch context.scope {
        case .project(let p): project = p
        case .admin:
            guard let slug = params["project"].map(String.init), let parsed = ProjectSlug(slug),
                  let found = try await projects.project(slug: parsed) else {
                throw APIError.badRequest("name the project with ?project=SLUG", field: "project")
            }
            project = found
        }
        let rows = try await symbolication.missingDebugFiles(project: project.id, release: params["release"].map(String.init))
        return MissingOut(missing: rows.map {
            .init(buildID: $0.buildID.rawValue, module: $0.module, reports: $0.reports, releases: $0.releases, has: $0.has.map(\.rawValue))
        })
    }

    struct Summary: Codable {
        var eventID: String
        var projectID: Int64
        var kind: String
        var timestamp: String
        var receivedAt: String
        var release: String?
        var environment: String?
        var user: String?
        var errorType: String?
        var errorMessage: String?
        var trimmed: TrimmedOut
        enum CodingKeys: String, CodingKey {
            case eventID = "event_id", projectID = "project_id", kind, timestamp, receivedAt = "received_at", release
            case environment, user, errorType = "error_type", errorMessage = "error_message", trimmed
        }
    }

    struct Listing: ResponseEncodable {
        var reports: [Summary]
        /// Pass as `cursor` to get the next (older) page; absent on the last page.
        var nextCursor: String?
        enum CodingKeys: String, CodingKey {
            case reports, nextCursor = "next_cursor"
        }
    }

    @Sendable func list(_ request: Request, context: ReaderContext) async throws -> Listing {
        let params = request.uri.queryParameters
        var query = ReportQuery(project: nil)
        switch context.scope {
        case .project(let project): query.project = project.id
        case .admin:
            if let slug = params["project"].map(String.init) {
                guard let parsed = ProjectSlug(slug), let project = try await projects.project(slug: parsed) else {
                    throw APIError.notFound("no project \"\(slug)\"")
                }
                query.project = project.id
            }
        }
        if let kind = params["kind"].map(String.init) {
            guard let parsed = ReportKind(rawValue: kind) else { throw APIError.badRequest("must be crash or nonfatal", field: "kind") }
            query.kind = parsed
        }
        query.release = params["release"].map(String.init)
        if let since = params["since"].map(String.init) {
            let seconds = Double(since).flatMap { $0.isFinite && abs($0) < 1e11 ? $0 : nil }
            guard let date = Timestamps.parseISO8601(since) ?? seconds.map(Date.init(timeIntervalSince1970:)) else {
                throw APIError.badRequest("must be an ISO 8601 date-time or unix seconds", field: "since")
            }
            query.since = date
        }
        if let limit = params["limit"].map(String.init) {
            guard let value = Int(limit), (1...500).contains(value) else {
                throw APIError.badRequest("must be a number from 1 to 500", field: "limit")
            }
            query.limit = value
        }
        if let cursor = params["cursor"].map(String.init) {
            guard let value = Int64(cursor) else { throw APIError.badRequest("must be a cursor from next_cursor", field: "cursor") }
            query.before = value
        }
        // One row more than asked tells whether another page exists, so the last page has no cursor.
        let pageSize = query.limit
        query.limit += 1
        let rows = try await reader.reports(matching: query)
        let page = rows.prefix(pageSize)
        let next = rows.count > pageSize ? page.last.map { String($0.cursor) } : nil
        return Listing(reports: page.map(Self.summary), nextCursor: next)
    }

    @Sendable func get(_ request: Request, context: ReaderContext) async throws -> Response {
        let raw = try context.parameters.require("event_id")
        guard let eventID = EventID(raw) else { throw APIError.badRequest("must be a UUID or 32 hex digits", field: "event_id") }
        var project: ProjectID?
        if case .project(let p) = context.scope { project = p.id }
        guard let stored = try await reader.rawReport(eventID: eventID, project: project) else {
            throw APIError.notFound("no report \(eventID.rawValue)")
        }
        let report = try NativeReports.reread(stored.payload, range: stored.range, limits: limits)
        let (state, symbols) = try await symbolication.result(reportID: stored.summary.cursor)
        let bytes = try NativeReports.encode(
            StoredReport(project: stored.summary.project, report: report, receivedAt: stored.summary.receivedAt),
            symbolication: symbols ?? SymbolicatedReport(state: state, threads: [], missing: []))
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func summary(_ s: ReportSummary) -> Summary {
        Summary(
            eventID: s.eventID.rawValue, projectID: s.project.rawValue, kind: s.kind.rawValue,
            timestamp: Timestamps.formatISO8601(s.timestamp), receivedAt: Timestamps.formatISO8601(s.receivedAt),
            release: s.release, environment: s.environment, user: s.userKey, errorType: s.errorType,
            errorMessage: s.errorMessage, trimmed: TrimmedOut(s.trimmed))
    }
}
