import FaultlineCore
import Formats
import Hummingbird
import Pipeline

/// `GET /api/v1/audit`: the audit trail, newest first (``AuditTrail``).
///
/// - `?project=SLUG` names the project (the admin token; a project's token reads its own). The admin token without
///   `project` reads every entry, server-wide ones (people, owners, the admin token) included.
/// - `?kind=issue` or `?kind=issue.status`: one group or one kind; `?before=ID`: entries older than that id (the
///   answer's `next_before` pages on); `?limit=N` (1–500, default 50).
///
/// The trail names people and their addresses, so it is read at the level that changes settings (``Access``,
/// `changeSettings`: a project's admin, an owner, the admin token). A project's upload token gets 403.
struct AuditController {
    let audit: any AuditTrail
    let projects: ProjectService

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self).get("audit", use: list)
    }

    struct ListOut: ResponseEncodable {
        var entries: [AuditEntryOut]
        /// The `before` of the next (older) page; nil on the last page.
        var nextBefore: Int64?
        enum CodingKeys: String, CodingKey {
            case entries, nextBefore = "next_before"
        }
    }

    @Sendable func list(_ request: Request, context: ReaderContext) async throws -> ListOut {
        let params = request.uri.queryParameters
        var project: Project?
        if case .admin = context.scope, params["project"] == nil {
            project = nil
        } else {
            project = try await context.project(request, projects: projects)
        }
        if let project, Access.decide(context.requester, .changeSettings, project: project.id) != .allowed {
            throw APIError.forbidden("the audit trail is read by the project's admins (an upload token may not)")
        }
        let query = try Self.query(params, project: project?.id)
        let records = try await audit.entries(query)
        let slugs = Dictionary(
            try await projects.all().map { ($0.id, $0.slug.rawValue) }, uniquingKeysWith: { first, _ in first })
        return ListOut(
            entries: records.map { AuditEntryOut($0, slug: $0.entry.project.flatMap { slugs[$0] }) },
            nextBefore: records.count == query.limit ? records.last?.id : nil)
    }

    /// The query of `kind`, `before` and `limit` (400 naming the parameter when one is not usable).
    static func query(_ params: Parameters, project: ProjectID?) throws -> AuditQuery {
        let kind = params["kind"].map(String.init)
        if let kind, !AuditKind.isGroupOrKind(kind) {
            throw APIError.badRequest("must be a kind like issue.status or a group like issue", field: "kind")
        }
        var before: Int64?
        if let raw = params["before"] {
            guard let value = Int64(raw), value > 0 else {
                throw APIError.badRequest("must be an entry id (a positive number)", field: "before")
            }
            before = value
        }
        var limit = 50
        if let raw = params["limit"] {
            guard let value = Int(raw), (1...500).contains(value) else {
                throw APIError.badRequest("must be from 1 to 500", field: "limit")
            }
            limit = value
        }
        return AuditQuery(project: project, kind: kind, before: before, limit: limit)
    }

}

/// One audit entry as the API (`GET /api/v1/audit`) and `faultline projects audit --json` write it.
public struct AuditEntryOut: Codable, Sendable, Equatable {
    public var id: Int64
    /// ISO 8601, UTC.
    public var at: String
    /// The project's slug; nil for a server-wide entry.
    public var project: String?
    /// Who, as a page shows it ("Ada Lovelace", "the admin token", "the CLI").
    public var actor: String
    /// `person`, `personal-token`, `admin-token`, `project-token` or `cli`.
    public var actorKind: String
    public var actorPersonID: Int64?
    /// The client's address; nil for the CLI.
    public var address: String?
    public var kind: String
    public var subject: String?
    public var before: String?
    public var after: String?
    enum CodingKeys: String, CodingKey {
        case id, at, project, actor, actorKind = "actor_kind", actorPersonID = "actor_person_id", address, kind
        case subject, before, after
    }

    public init(_ record: AuditRecord, slug: String?) {
        let entry = record.entry
        id = record.id
        at = Timestamps.formatISO8601(entry.at)
        project = slug
        actor = entry.origin.actor.shown
        actorKind = entry.origin.actor.kind
        actorPersonID = entry.origin.actor.person?.rawValue
        address = entry.origin.address
        kind = entry.kind.rawValue
        subject = entry.subject
        before = entry.before
        after = entry.after
    }
}
