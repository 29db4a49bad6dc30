#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a project's settings page (`/<slug>/settings`) shows one reader: the project's people and roles, its alert
/// settings, crash-free targets, privacy and in-app rules, and (for those who may change settings) the latest entries
/// of its audit trail and the forms. Built by the HTTP edge for one request, rendered by the Dashboard module.
public struct ProjectSettingsOverview: Sendable {
    /// One person with a role in the project.
    public struct Member: Sendable, Equatable {
        public var id: PersonID
        public var login: String
        public var name: String
        public var role: ProjectRole
        /// Whether they have set a password or signed in by single sign-on (false: the invite is still open).
        public var active: Bool
        public init(id: PersonID, login: String, name: String, role: ProjectRole, active: Bool) {
            self.id = id
            self.login = login
            self.name = name
            self.role = role
            self.active = active
        }
    }

    /// An invite just made: who it is for, its link (shown on this one answer), and when it expires.
    public struct Invite: Sendable, Equatable {
        public var login: String
        public var link: String
        public var expiresAt: Date
        public init(login: String, link: String, expiresAt: Date) {
            self.login = login
            self.link = link
            self.expiresAt = expiresAt
        }
    }

    /// A project secret just replaced: the new one (shown on this one answer) and until when the old one is accepted.
    public struct Rotated: Sendable, Equatable {
        public var kind: CredentialKind
        public var secret: String
        /// The Sentry DSN with the new ingest key; nil for an upload token.
        public var dsn: String?
        /// nil: the old secret is refused from now on.
        public var oldAcceptedUntil: Date?
        public init(kind: CredentialKind, secret: String, dsn: String?, oldAcceptedUntil: Date?) {
            self.kind = kind
            self.secret = secret
            self.dsn = dsn
            self.oldAcceptedUntil = oldAcceptedUntil
        }
    }

    /// One page of the project's trail, newest first, and the `before` of the next (older) page; nil on the last.
    public struct Trail: Sendable {
        public var records: [AuditRecord]
        public var nextBefore: Int64?
        /// Whether this is an older page (`?before=`), so the page links back to the newest.
        public var older: Bool
        public init(records: [AuditRecord], nextBefore: Int64?, older: Bool) {
            self.records = records
            self.nextBefore = nextBefore
            self.older = older
        }
    }

    public var project: Project
    public var members: [Member]
    public var alerts: AlertSettings
    /// The session's CSRF token when the reader may change the settings; nil shows the page without forms.
    public var csrf: String?
    /// The trail, for readers at the settings level (it names people and their addresses); nil for the others.
    public var trail: Trail?
    public var invite: Invite?
    public var rotated: Rotated?
    public var notice: String?
    public var error: String?
    public var now: Date

    public init(
        project: Project, members: [Member], alerts: AlertSettings, csrf: String?, trail: Trail?, invite: Invite? = nil,
        notice: String? = nil, error: String? = nil, now: Date, rotated: Rotated? = nil
    ) {
        self.rotated = rotated
        self.project = project
        self.members = members
        self.alerts = alerts
        self.csrf = csrf
        self.trail = trail
        self.invite = invite
        self.notice = notice
        self.error = error
        self.now = now
    }
}
