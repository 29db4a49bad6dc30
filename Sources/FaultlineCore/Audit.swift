#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The audit trail (issue #37, decision 0068): every change of state, with who made it, when, from where and what
// changed. How other code records a change:
//
// ```swift
// try await audit.record(
//     AuditEntry(
//         project: project.id, at: clock.now(), origin: origin,   // origin: who (AuditActor) + client address
//         kind: .tokenCreated, subject: "token \(token.label)", before: nil, after: "scopes read, write:issues"))
// ```
//
// `audit` is an `any AuditTrail` (both engines: `EngineStores.audit`); HTTP handlers get their `AuditOrigin` from the
// request (`AppRequestContext.auditOrigin`), the CLI uses `AuditOrigin.cli`. A kind that does not exist yet is added
// as a `static let` in an extension of ``AuditKind`` beside the code that records it: the database checks only the
// kind's shape, so a new kind needs no migration.

/// Who made a change the audit trail records.
public enum AuditActor: Sendable, Equatable {
    /// A signed-in person (a dashboard session); `name` is their name at the time of the change.
    case person(PersonID, name: String)
    /// A person's personal API token: the person, their name, and the token's label or id as the token list shows it.
    case personalToken(PersonID, name: String, token: String)
    /// The break-glass admin token (its dashboard session or a Bearer header).
    case adminToken
    /// A project's upload token (CI).
    case projectToken(ProjectID)
    /// `faultline` commands run on the data folder (or the database) by whoever can reach it.
    case cli

    /// The stored `actor_kind`.
    public var kind: String {
        switch self {
        case .person: "person"
        case .personalToken: "personal-token"
        case .adminToken: "admin-token"
        case .projectToken: "project-token"
        case .cli: "cli"
        }
    }

    /// The person behind the change, when it was one.
    public var person: PersonID? {
        switch self {
        case .person(let id, _), .personalToken(let id, _, _): id
        default: nil
        }
    }

    /// What a page shows: "Ada Lovelace", "Ada Lovelace (token ci-bot)", "the admin token", …
    public var shown: String {
        switch self {
        case .person(_, let name): name
        case .personalToken(_, let name, let token): "\(name) (token \(token))"
        case .adminToken: "the admin token"
        case .projectToken: "the project's upload token"
        case .cli: "the CLI"
        }
    }

    /// The actor of a request made for `requester`; nil for a reader who changes nothing (a public dashboard).
    public init?(_ requester: Requester) {
        switch requester {
        case .adminToken: self = .adminToken
        case .person(let person): self = .person(person.id, name: person.displayName)
        case .uploadToken(let project): self = .projectToken(project)
        case .publicReader: return nil
        }
    }

    /// Reads the stored columns back (`actor_kind`, `actor_person_id`, `actor_name`, `actor_token`, and the entry's
    /// project for a project token); nil for a kind this build does not know.
    public init?(kind: String, person: Int64?, name: String?, token: String?, project: ProjectID?) {
        switch kind {
        case "person":
            guard let person else { return nil }
            self = .person(PersonID(person), name: name ?? "")
        case "personal-token":
            guard let person else { return nil }
            self = .personalToken(PersonID(person), name: name ?? "", token: token ?? "")
        case "admin-token": self = .adminToken
        case "project-token":
            guard let project else { return nil }
            self = .projectToken(project)
        case "cli": self = .cli
        default: return nil
        }
    }

    /// The stored `actor_name` (the person's name then), `actor_token`.
    public var storedName: String? {
        switch self {
        case .person(_, let name), .personalToken(_, let name, _): name
        default: nil
        }
    }
    public var storedToken: String? {
        if case .personalToken(_, _, let token) = self { return token }
        return nil
    }
}

/// Who made a change and from where: the actor and the client's address (nil for the CLI).
public struct AuditOrigin: Sendable, Equatable {
    public var actor: AuditActor
    /// The peer's IP address as the server saw it (a reverse proxy's, behind one).
    public var address: String?
    public init(actor: AuditActor, address: String?) {
        self.actor = actor
        self.address = address
    }
    /// A `faultline` command on the data folder.
    public static let cli = AuditOrigin(actor: .cli, address: nil)
}

/// What kind of change an entry records: `group.change`, lowercase (`issue.status`, `project.privacy`,
/// `member.role`). Filters take a whole kind or a group (`issue`). Open: code that records a new kind declares it
/// in an extension beside itself.
public struct AuditKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    /// `group.change`: 3–64 bytes of `a-z`, `0-9`, `-`, `_`, one or more dots, not at either end. The databases
    /// check the same shape.
    public init?(rawValue: String) {
        guard Self.isGroupOrKind(rawValue), rawValue.contains(".") else { return nil }
        self.rawValue = rawValue
    }
    public var description: String { rawValue }
    /// The part before the first dot (`issue` of `issue.status`).
    public var group: String { String(rawValue.prefix { $0 != "." }) }

    /// Whether `text` is a kind or a group as a filter may name it.
    public static func isGroupOrKind(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count) && text.first != "." && text.last != "."
            && !text.contains("..")
            && text.utf8.allSatisfy {
                (0x61...0x7a).contains($0) || (0x30...0x39).contains($0) || "._-".utf8.contains($0)
            }
    }

    init(known: String) { self.rawValue = known }

    public static let issueStatus = AuditKind(known: "issue.status")
    public static let issueNote = AuditKind(known: "issue.note")
    public static let issueTrackerURL = AuditKind(known: "issue.tracker_url")
    public static let issueMerge = AuditKind(known: "issue.merge")
    public static let issueUnmerge = AuditKind(known: "issue.unmerge")
    public static let projectCreated = AuditKind(known: "project.created")
    public static let projectPrivacy = AuditKind(known: "project.privacy")
    public static let projectInApp = AuditKind(known: "project.in_app")
    public static let projectTargets = AuditKind(known: "project.targets")
    public static let projectQuotas = AuditKind(known: "project.quotas")
    public static let projectTracker = AuditKind(known: "project.tracker")
    public static let projectMinidumps = AuditKind(known: "project.minidumps")
    public static let projectAlerts = AuditKind(known: "project.alerts")
    public static let projectWebhook = AuditKind(known: "project.webhook")
    public static let projectGroupingRules = AuditKind(known: "project.grouping_rules")
    /// A project's ingest key replaced (`after` says until when the old one is accepted; never a secret).
    public static let projectIngestKeyRotated = AuditKind(known: "project.ingest_key_rotated")
    /// A project's upload token replaced (the old one is refused at once).
    public static let projectUploadTokenRotated = AuditKind(known: "project.upload_token_rotated")
    public static let tokenCreated = AuditKind(known: "token.created")
    public static let tokenRevoked = AuditKind(known: "token.revoked")
    public static let adminTokenRotated = AuditKind(known: "token.admin_rotated")
    public static let memberInvited = AuditKind(known: "member.invited")
    public static let memberRole = AuditKind(known: "member.role")
    public static let memberRemoved = AuditKind(known: "member.removed")
    public static let personOwner = AuditKind(known: "person.owner")
    public static let personRemoved = AuditKind(known: "person.removed")
}

/// One change, as it is recorded.
public struct AuditEntry: Sendable, Equatable {
    /// Most UTF-8 bytes kept of `subject`, `before` and `after` each: longer values are cut (on a character) with `…`.
    public static let maxValueBytes = 2048

    /// The project the change was made in; nil for a server-wide change (people, owners, the admin token).
    public var project: ProjectID?
    public var at: Date
    public var origin: AuditOrigin
    public var kind: AuditKind
    /// What was changed, as a page names it: `issue 12`, `ada@example.org`, `webhook https://…`.
    public var subject: String?
    /// The value before and after the change, where that makes sense (`open` → `closed`); nil when there was none or
    /// it is not shown (secrets never are: a token entry names the token, never its value).
    public var before: String?
    public var after: String?

    public init(
        project: ProjectID?, at: Date, origin: AuditOrigin, kind: AuditKind, subject: String?,
        before: String? = nil, after: String? = nil
    ) {
        self.project = project
        self.at = at
        self.origin = origin
        self.kind = kind
        self.subject = subject.map(Self.clipped)
        self.before = before.map(Self.clipped)
        self.after = after.map(Self.clipped)
    }

    /// `value` cut to ``maxValueBytes`` UTF-8 bytes on a character boundary, with `…` when cut.
    public static func clipped(_ value: String) -> String {
        guard value.utf8.count > maxValueBytes else { return value }
        var kept = ""
        var bytes = 0
        for character in value {
            let size = character.utf8.count
            guard bytes + size <= maxValueBytes - 3 else { break }
            kept.append(character)
            bytes += size
        }
        return kept + "…"
    }
}

/// A stored entry: its id (increasing: newest has the highest) and the entry.
public struct AuditRecord: Sendable, Equatable {
    public var id: Int64
    public var entry: AuditEntry
    public init(id: Int64, entry: AuditEntry) {
        self.id = id
        self.entry = entry
    }
}

/// Which entries to read: newest first, keyset-paged by id.
public struct AuditQuery: Sendable, Equatable {
    /// Only this project's entries; nil: every entry, server-wide ones included (the owner's view).
    public var project: ProjectID?
    /// A kind (`issue.status`) or a group (`issue`); nil for every kind.
    public var kind: String?
    /// Entries older than this id (the last id of the previous page).
    public var before: Int64?
    /// At most this many entries (1…500).
    public var limit: Int
    public init(project: ProjectID?, kind: String? = nil, before: Int64? = nil, limit: Int = 50) {
        self.project = project
        self.kind = kind
        self.before = before
        self.limit = min(max(limit, 1), 500)
    }
}

/// Where the audit trail is kept (`audit_log`, migrations `v34-audit` / `pg19-audit`).
///
/// Entries are only added, never changed; deleting a project deletes its entries. ``record(_:)`` writes one entry in
/// its own transaction, right after the change it describes committed (the services and handlers that make changes
/// call it): a crash between the two loses the entry, never the change (decision 0068).
public protocol AuditTrail: Sendable {
    /// Adds `entry`; returns its id.
    @discardableResult func record(_ entry: AuditEntry) async throws -> Int64
    /// Entries matching `query`, newest first.
    func entries(_ query: AuditQuery) async throws -> [AuditRecord]
}

extension AuditRecord {
    /// A stored row of `audit_log` read back (both engines); nil when its actor or kind is one this build does not
    /// know (a newer server's row), which readers skip.
    public init?(
        id: Int64, project: Int64?, at: Int64, actorKind: String, actorPerson: Int64?, actorName: String?,
        actorToken: String?, address: String?, kind: String, subject: String?, before: String?, after: String?
    ) {
        let project = project.map { ProjectID(rawValue: $0) }
        guard let kind = AuditKind(rawValue: kind),
            let actor = AuditActor(
                kind: actorKind, person: actorPerson, name: actorName, token: actorToken, project: project)
        else { return nil }
        self.init(
            id: id,
            entry: AuditEntry(
                project: project, at: Millis.date(at), origin: AuditOrigin(actor: actor, address: address), kind: kind,
                subject: subject, before: before, after: after))
    }
}

extension AuditQuery {
    /// The group a ``kind`` filter names, with its dot (`issue.` for `issue`), matched as a prefix beside the kind
    /// itself; nil without a filter.
    public var kindPrefix: String? { kind.map { $0 + "." } }
}
