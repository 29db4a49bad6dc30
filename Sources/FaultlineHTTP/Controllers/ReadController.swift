import FaultlineCore
import Formats
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The read API: one stored report by event id, a filtered, keyset-paged listing, and an issue's reports.
///
/// Listings are newest first by arrival (the report row's id) and paged by keyset (`id < cursor`): a report stored
/// while a client pages has a higher id, so it never shifts, repeats or hides the rows of later pages, and page N
/// costs what page 1 costs.
struct ReadController<Reader: ReportReader> {
    let reader: Reader
    let projects: ProjectService
    let symbolication: any SymbolicationStore
    let limits: IngestLimits

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .get("reports", use: list)
            .get("reports/{event_id}", use: get)
            .get("issues/{id}/reports", use: issueReports)
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
                let found = try await projects.project(slug: parsed)
            else {
                throw APIError.badRequest("name the project with ?project=SLUG", field: "project")
            }
            project = found
        }
        let rows = try await symbolication.missingDebugFiles(
            project: project.id, release: params["release"].map { ReleaseName.release(of: String($0)) })
        return MissingOut(
            missing: rows.map {
                .init(
                    buildID: $0.buildID.rawValue, module: $0.module, reports: $0.reports, releases: $0.releases,
                    has: $0.has.map(\.rawValue))
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
        /// The issue the report is grouped into; `null` until grouped (always written).
        var issueID: Int64?
        enum CodingKeys: String, CodingKey {
            case eventID = "event_id", projectID = "project_id", kind, timestamp, receivedAt = "received_at", release
            case environment, user, errorType = "error_type", errorMessage = "error_message", trimmed, issueID =
                "issue_id"
        }
        func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(eventID, forKey: .eventID)
            try c.encode(projectID, forKey: .projectID)
            try c.encode(kind, forKey: .kind)
            try c.encode(timestamp, forKey: .timestamp)
            try c.encode(receivedAt, forKey: .receivedAt)
            try c.encodeIfPresent(release, forKey: .release)
            try c.encodeIfPresent(environment, forKey: .environment)
            try c.encodeIfPresent(user, forKey: .user)
            try c.encodeIfPresent(errorType, forKey: .errorType)
            try c.encodeIfPresent(errorMessage, forKey: .errorMessage)
            try c.encode(trimmed, forKey: .trimmed)
            try c.encode(issueID, forKey: .issueID)
        }
    }

    struct Listing: ResponseEncodable {
        var reports: [Summary]
        /// Pass as `cursor` to get the next (older) page; absent on the last page. Opaque to clients.
        var nextCursor: String?
        /// The next page's path and query (this request's filters and limit with the cursor); absent on the last page.
        var next: String?
        enum CodingKeys: String, CodingKey {
            case reports, nextCursor = "next_cursor", next
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
        if let raw = params["issue"].map(String.init) {
            guard let value = Int64(raw), value > 0 else {
                throw APIError.badRequest("must be an issue number", field: "issue")
            }
            let issue = IssueID(value)
            query.project = try await owner(of: issue, visibleTo: query.project)
            query.issue = issue
        }
        if let kind = params["kind"].map(String.init) {
            guard let parsed = ReportKind(rawValue: kind) else {
                throw APIError.badRequest("must be crash or nonfatal", field: "kind")
            }
            query.kind = parsed
        }
        query.release = params["release"].map { ReleaseName.release(of: String($0)) }
        if let since = params["since"].map(String.init) {
            let seconds = Double(since).flatMap { $0.isFinite && abs($0) < 1e11 ? $0 : nil }
            guard let date = Timestamps.parseISO8601(since) ?? seconds.map(Date.init(timeIntervalSince1970:)) else {
                throw APIError.badRequest("must be an ISO 8601 date-time or unix seconds", field: "since")
            }
            query.since = date
        }
        return try await page(query, request: request)
    }

    /// `GET /api/v1/issues/{id}/reports[?limit=N][&cursor=C]`: the issue's reports, newest first, keyset-paged.
    /// Another project's issue is 404, exactly like a missing one.
    @Sendable func issueReports(_ request: Request, context: ReaderContext) async throws -> Listing {
        let raw = try context.parameters.require("id")
        guard let value = Int64(raw), value > 0 else {
            throw APIError.badRequest("must be an issue number", field: "id")
        }
        let issue = IssueID(value)
        let project = try await owner(of: issue, visibleTo: context.projectID)
        return try await page(ReportQuery(project: project, issue: issue), request: request)
    }

    /// The project of `issue` when the caller may see it: `project` is the caller's own (an upload token) or the one
    /// the admin named, nil for every project. Another project's issue is 404 like a missing one, never 403, so
    /// a token cannot learn which issue numbers exist elsewhere.
    func owner(of issue: IssueID, visibleTo project: ProjectID?) async throws -> ProjectID {
        guard let owner = try await reader.project(ofIssue: issue), project == nil || project == owner else {
            throw APIError.notFound("no issue \(issue)")
        }
        return owner
    }

    /// Reads `limit` and `cursor`, then one page of `query` with the cursor and link of the next.
    func page(_ query: ReportQuery, request: Request) async throws -> Listing {
        var query = query
        let params = request.uri.queryParameters
        if let limit = params["limit"].map(String.init) {
            guard let value = Int(limit), (1...PageRequest.maxReportPage).contains(value) else {
                throw APIError.badRequest("must be a number from 1 to \(PageRequest.maxReportPage)", field: "limit")
            }
            query.limit = value
        }
        if let cursor = params["cursor"].map(String.init) {
            guard let value = Int64(cursor), value > 0 else {
                throw APIError.badRequest("must be a cursor from next_cursor", field: "cursor")
            }
            query.before = value
        }
        // One row more than asked tells whether another page exists, so the last page has no cursor.
        let pageSize = query.limit
        query.limit += 1
        let rows = try await reader.reports(matching: query)
        let page = rows.prefix(pageSize)
        let next = rows.count > pageSize ? page.last.map { String($0.cursor) } : nil
        return Listing(
            reports: page.map(Self.summary), nextCursor: next,
            next: next.map { Self.link(path: request.uri.path, query: request.uri.query, cursor: $0) })
    }

    /// This request's path and query with `cursor` replaced: the other parameters are kept as the client encoded them.
    static func link(path: String, query: String?, cursor: String) -> String {
        let kept = (query ?? "").split(separator: "&").filter { item in
            !item.isEmpty && item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0] != "cursor"
        }
        return path + "?" + (kept + ["cursor=\(cursor)"]).joined(separator: "&")
    }

    @Sendable func get(_ request: Request, context: ReaderContext) async throws -> Response {
        let raw = try context.parameters.require("event_id")
        guard let eventID = EventID(raw) else {
            throw APIError.badRequest("must be a UUID or 32 hex digits", field: "event_id")
        }
        var project: ProjectID?
        if case .project(let p) = context.scope { project = p.id }
        guard let stored = try await reader.rawReport(eventID: eventID, project: project) else {
            throw APIError.notFound("no report \(eventID.rawValue)")
        }
        // A minidump report's threads are the walked ones (each frame with its `trust`), as on the dashboard.
        let (report, symbols) = try await symbolication.readBack(
            NativeReports.reread(stored.payload, range: stored.range, limits: limits),
            reportID: stored.summary.cursor, limits: limits)
        let bytes = try NativeReports.encode(
            StoredReport(
                project: stored.summary.project, report: report, receivedAt: stored.summary.receivedAt,
                issue: stored.summary.issue),
            symbolication: symbols)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func summary(_ s: ReportSummary) -> Summary {
        Summary(
            eventID: s.eventID.rawValue, projectID: s.project.rawValue, kind: s.kind.rawValue,
            timestamp: Timestamps.formatISO8601(s.timestamp), receivedAt: Timestamps.formatISO8601(s.receivedAt),
            release: s.release, environment: s.environment, user: s.userKey, errorType: s.errorType,
            errorMessage: s.errorMessage, trimmed: TrimmedOut(s.trimmed), issueID: s.issue?.rawValue)
    }
}
