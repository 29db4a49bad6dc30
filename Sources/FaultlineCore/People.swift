#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stable id of a person (the `people` row id). Safe to log and to record beside a change they made.
public struct PersonID: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(rawValue) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// What a person signs in with: an e-mail address or a user name, stored lowercased so that `Ada@X.org` and
/// `ada@x.org` are one account.
///
/// 1 to 254 bytes (the longest e-mail address SMTP carries) of printable characters without spaces, quotes, `<`,
/// `>` or `/`: the value is shown on pages and typed into a form, and an OIDC login can later match it against a
/// verified `email` claim.
public struct PersonLogin: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init?(rawValue: String) {
        let value = PersonName.trimmed(rawValue).lowercased()
        guard (1...254).contains(value.utf8.count),
            value.unicodeScalars.allSatisfy({
                $0.value > 0x20 && $0.value != 0x7f && !"\"'<>/\\".unicodeScalars.contains($0)
                    && !$0.properties.isWhitespace
            })
        else { return nil }
        self.rawValue = value
    }
    public init?(_ value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
}

/// A person's role in one project. Each role may do everything the roles before it may.
public enum ProjectRole: String, Sendable, CaseIterable, Comparable, Codable {
    /// Reads the project's pages and API.
    case viewer
    /// Also acts on issues: close, mute, reopen, notes.
    case member
    /// Also changes the project's settings: alert settings, privacy, in-app rules, tokens and members.
    case admin

    var rank: Int {
        switch self {
        case .viewer: 0
        case .member: 1
        case .admin: 2
        }
    }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// One person's role in one project.
public struct Membership: Sendable, Equatable {
    public var project: ProjectID
    public var role: ProjectRole
    public init(project: ProjectID, role: ProjectRole) {
        self.project = project
        self.role = role
    }
}

/// An account of the `people` table: made by an invite (or, later, a first single sign-on), with a password once the
/// person set one on their invite link.
public struct Person: Sendable, Equatable {
    public var id: PersonID
    public var login: PersonLogin
    /// The name shown on pages ("closed by Ada Lovelace"); empty shows the login.
    public var name: String
    /// A server owner manages projects and people, and may do everything in every project.
    public var owner: Bool
    /// The stored password hash (``PasswordHash/encoded``); nil until the person has set one.
    public var passwordHash: String?
    public var createdAt: Date
    /// The person's roles, one per project they belong to.
    public var memberships: [Membership]

    public init(
        id: PersonID, login: PersonLogin, name: String, owner: Bool, passwordHash: String?, createdAt: Date,
        memberships: [Membership]
    ) {
        self.id = id
        self.login = login
        self.name = name
        self.owner = owner
        self.passwordHash = passwordHash
        self.createdAt = createdAt
        self.memberships = memberships
    }

    /// What pages call the person: their name, else their login.
    public var displayName: String { name.isEmpty ? login.rawValue : name }

    /// The person's role in `project`, nil when they do not belong to it.
    public func role(in project: ProjectID) -> ProjectRole? {
        memberships.first { $0.project == project }?.role
    }
}

/// Longest display name a person may have, in bytes.
public enum PersonName {
    public static let maxBytes = 200

    /// `text` without white space at either end.
    static func trimmed(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[first...last])
    }

    /// `name` trimmed, or why it cannot be a display name.
    public static func checked(_ name: String) -> Result<String, PeopleError> {
        let trimmed = trimmed(name)
        guard trimmed.utf8.count <= maxBytes else {
            return .failure(PeopleError(.invalidName, "a name has at most \(maxBytes) bytes"))
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .failure(PeopleError(.invalidName, "a name has no control characters"))
        }
        return .success(trimmed)
    }
}

/// An invitation that has not been used: the person it is for and when it stops working. The link's secret is stored
/// only as its SHA-256, so a copy of the database cannot accept an invite.
public struct Invite: Sendable, Equatable {
    public var person: PersonID
    public var expiresAt: Date
    public init(person: PersonID, expiresAt: Date) {
        self.person = person
        self.expiresAt = expiresAt
    }
}

/// Why a change to people could not be made.
public struct PeopleError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidLogin = "invalid_login"
        case invalidName = "invalid_name"
        case weakPassword = "weak_password"
        case unknownPerson = "unknown_person"
        case unknownProject = "unknown_project"
        case invalidInvite = "invalid_invite"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Where people, their roles and their invites are kept (`people`, `memberships`, `invites`; sessions of a person are
/// rows of `admin_sessions` naming them).
///
/// Every change that takes access away ends the person's sessions in the same transaction: removing a person deletes
/// their sessions (a foreign key with `ON DELETE CASCADE`, and an explicit delete), so the next request of a removed
/// person's browser finds no session.
public protocol PeopleStore: Sendable {
    /// Adds a person, or returns the one with this login (whose name and owner flag are left as they are).
    func ensurePerson(login: PersonLogin, name: String, owner: Bool, at date: Date) async throws -> Person
    /// The person with this id or login, with their memberships.
    func person(id: PersonID) async throws -> Person?
    func person(login: PersonLogin) async throws -> Person?
    /// Every person, by login.
    func allPeople() async throws -> [Person]
    /// Gives `person` `role` in `project` (replacing a role they had there); false when either does not exist.
    func setRole(_ role: ProjectRole, person: PersonID, project: ProjectID) async throws -> Bool
    /// Takes `person` out of `project`; false when they were not in it.
    func removeMembership(person: PersonID, project: ProjectID) async throws -> Bool
    /// Makes `person` a server owner or not; false when there is no such person.
    func setOwner(_ owner: Bool, person: PersonID) async throws -> Bool
    /// Deletes the person, their memberships, invites and sessions, in one transaction; false when there was none.
    func removePerson(_ person: PersonID) async throws -> Bool
    /// Stores an invite whose link secret hashes to `tokenHash`.
    func createInvite(tokenHash: SecretHash, person: PersonID, createdAt: Date, expiresAt: Date) async throws
    /// The unexpired invite whose secret hashes to `tokenHash`.
    func invite(tokenHash: SecretHash, now: Date) async throws -> Invite?
    /// Uses the invite: when it exists and has not expired at `now`, deletes it (and every other invite of its
    /// person), sets the person's password hash and name, and returns the person; nil otherwise. One transaction, so
    /// two submissions of one link cannot both succeed.
    func acceptInvite(tokenHash: SecretHash, passwordHash: String, name: String?, now: Date) async throws -> Person?
    /// Starts a dashboard session for `person`, when the person still exists: the check and the insert are one
    /// transaction, ordered against ``removePerson(_:)``, so a login racing a removal never leaves a session behind.
    func createPersonSession(
        person: PersonID, tokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    ) async throws -> AdminSession?
}

/// Who changed an issue's status, as `issues.status_changed_by` records it.
///
/// A person's change is stored as `person:<id>:<name>`: the id says who it was even after they change their name or
/// are removed, the name is what the issue page shows ("closed by Ada Lovelace"). Other changers are stored as the
/// text a page shows (`the CLI`, `the API (upload token)`, `the dashboard (admin token)`), as before.
public enum StatusChanger {
    static let prefix = "person:"

    /// The stored text for a change made by `person`.
    public static func person(_ person: Person) -> String {
        "\(prefix)\(person.id.rawValue):\(person.displayName)"
    }

    /// The person a stored text names, or nil (not a person's change).
    public static func personID(_ stored: String) -> PersonID? {
        guard stored.hasPrefix(prefix) else { return nil }
        let rest = stored.dropFirst(prefix.count)
        guard let colon = rest.firstIndex(of: ":"), let id = Int64(rest[..<colon]), id > 0 else { return nil }
        return PersonID(id)
    }

    /// What a page shows for a stored text: a person's name, or the text itself.
    public static func shown(_ stored: String) -> String {
        guard personID(stored) != nil, let colon = stored.dropFirst(prefix.count).firstIndex(of: ":") else {
            return stored
        }
        return String(stored[stored.index(after: colon)...])
    }
}
