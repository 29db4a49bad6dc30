/// Who a dashboard or API request acts for, as far as authorisation cares.
public enum Requester: Sendable, Equatable {
    /// The break-glass admin token (a fresh install, scripts): a server owner.
    case adminToken
    /// A signed-in person, with their roles as the database held them when the request began.
    case person(Person)
    /// A project's upload token (CI): reads its project and may change its issues' status.
    case uploadToken(ProjectID)
    /// A dashboard nobody needs to sign in to (`--public-dashboard`, a server nobody else can reach): reads only.
    case publicReader
}

/// What a request wants to do. Each is allowed from one role up (``ProjectRole``).
public enum AccessAction: String, Sendable, CaseIterable {
    /// Read a project's pages, issues, releases, alerts and settings.
    case read
    /// Close, mute or reopen an issue, or change its note.
    case changeIssues
    /// Change alert settings, privacy, in-app rules, tokens or members of a project.
    case changeSettings
    /// Create projects, invite and remove people, make owners: the server's, not a project's.
    case manageServer

    /// The least role that may do this in a project; nil when no project role may (server actions).
    public var leastRole: ProjectRole? {
        switch self {
        case .read: .viewer
        case .changeIssues: .member
        case .changeSettings: .admin
        case .manageServer: nil
        }
    }
}

/// The answer of ``Access/decide(_:_:project:)``.
public enum AccessDecision: Sendable, Equatable {
    case allowed
    /// The requester may see the project but not do this (answered 403, nothing changes).
    case forbidden
    /// The requester has nothing to do with the project: answered as if it did not exist (404), so that a person of
    /// one project cannot learn which other projects a server holds.
    case hidden
}

/// The authorisation rule: one pure decision from who asks, what they want, and in which project, applied at the
/// HTTP edge before anything is read or changed.
///
/// | requester | read | changeIssues | changeSettings | manageServer |
/// |---|---|---|---|---|
/// | admin token, owner | ✓ | ✓ | ✓ | ✓ |
/// | admin of the project | ✓ | ✓ | ✓ | 403 |
/// | member of the project | ✓ | ✓ | 403 | 403 |
/// | viewer of the project | ✓ | 403 | 403 | 403 |
/// | upload token of the project | ✓ | ✓ | 403 | 403 |
/// | public dashboard | ✓ | 403 | 403 | 403 |
/// | anyone else (another project) | 404 | 404 | 404 | 403 |
public enum Access {
    /// Whether `requester` may do `action` in `project` (nil: a server-wide action, or a page of no project).
    public static func decide(_ requester: Requester, _ action: AccessAction, project: ProjectID?) -> AccessDecision {
        switch requester {
        case .adminToken:
            return .allowed
        case .person(let person) where person.owner:
            return .allowed
        case .publicReader:
            return action == .read ? .allowed : .forbidden
        case .uploadToken(let own):
            guard let project, project == own else { return action == .manageServer ? .forbidden : .hidden }
            return action == .read || action == .changeIssues ? .allowed : .forbidden
        case .person(let person):
            guard let least = action.leastRole else { return .forbidden }
            guard let project else { return action == .read ? .allowed : .forbidden }
            guard let role = person.role(in: project) else { return .hidden }
            return role >= least ? .allowed : .forbidden
        }
    }

    /// Whether `requester` may see `project` at all (its pages and lists).
    public static func canRead(_ requester: Requester, project: ProjectID) -> Bool {
        decide(requester, .read, project: project) == .allowed
    }
}
