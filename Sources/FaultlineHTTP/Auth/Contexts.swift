import FaultlineCore
import Hummingbird
import Logging
import NIOCore

/// Who a request proved to be.
public enum Principal: Sendable, Equatable {
    /// A project's ingest key: may post reports and sessions to that project.
    case ingest(Project)
    /// A project's upload token: may upload debug files and read that project's reports.
    case upload(Project)
    /// The admin token: may read everything.
    case admin
    /// A person's API token, checked for one project and one use at the edge (``BearerAuthMiddleware``).
    case personal(PersonalTokenGrantInProject)
}

/// What a personal token was found to allow in the request's project: its person as the token lets them act there
/// (``PersonalTokenGrant/narrowed(_:scopes:project:)``), so that a later ``Access`` check in a handler (alert settings:
/// `changeSettings`) answers for the token, not for the person's full role.
public struct PersonalTokenGrantInProject: Sendable, Equatable {
    public var token: PersonalTokenID
    /// What the person called the token: the audit trail names it beside the person ("Ana (token ci-upload)").
    public var tokenName: String
    public var person: Person
    public var project: Project
}

/// The request context of every route. Authentication middleware fills `principal`; child contexts
/// turn a missing or wrong principal into 401 before a handler runs.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    public var principal: Principal?
    /// The dashboard session the request's cookie named, when it was live (set by the dashboard guard).
    public var adminSession: AdminSession?
    /// Who the dashboard request acts for (set by the dashboard guard): the admin token (a Basic/Bearer header or its
    /// session) or a signed-in person, as the database holds them now. Nil without the guard (a public dashboard).
    public var requester: Requester?
    /// The peer's IP address (`unknown` when the transport has none): the key of the login rate limit. Behind a
    /// reverse proxy every client shares the proxy's address, so the limit then applies to all of them together.
    public let clientAddress: String
    public init(source: Source) {
        coreContext = .init(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}

/// Context of ingest routes: the project is known and the caller holds its ingest key.
public struct IngestContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let project: Project
    public init(context: AppRequestContext) throws {
        guard case .ingest(let project) = context.principal else {
            throw APIError.unauthorized("send the project's ingest key as 'Authorization: Bearer <key>'")
        }
        self.coreContext = context.coreContext
        self.project = project
    }
}

/// Context of read routes: an upload token (one project) or the admin token (every project).
public struct ReaderContext: ChildRequestContext {
    public enum Scope: Sendable, Equatable {
        case project(Project)
        case admin
    }
    /// Who the request acts for and from where, as the audit trail records a change it makes.
    public let origin: AuditOrigin
    public var coreContext: CoreRequestContextStorage
    public let scope: Scope
    /// The person a personal token acts for in `scope`'s project, narrowed to its scopes; nil for project and admin
    /// tokens.
    public private(set) var person: Person?
    public init(context: AppRequestContext) throws {
        switch context.principal {
        case .upload(let project): scope = .project(project)
        case .admin: scope = .admin
        case .personal(let grant):
            scope = .project(grant.project)
            person = grant.person
        default:
            throw APIError.unauthorized(
                "send the project's upload token or the admin token as 'Authorization: Bearer <token>'")
        }
        self.coreContext = context.coreContext
        guard let origin = context.auditOrigin else {
            throw APIError.unauthorized(
                "send the project's upload token or the admin token as 'Authorization: Bearer <token>'")
        }
        self.origin = origin
    }
}

/// Context of the debug-file upload routes: the caller holds a project's upload token.
public struct UploadContext: ChildRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let project: Project
    public init(context: AppRequestContext) throws {
        switch context.principal {
        case .upload(let project): self.project = project
        case .personal(let grant): self.project = grant.project
        default:
            throw APIError.unauthorized(
                "send the project's upload token or a personal token as 'Authorization: Bearer <token>'")
        }
        self.coreContext = context.coreContext
    }
}
