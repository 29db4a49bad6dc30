#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a personal API token may be used for. A token acts for its person and never for more than their roles allow;
/// its scopes narrow that further (``PersonalTokenGrant``).
public enum TokenScope: String, Sendable, CaseIterable, Comparable, Codable {
    /// Reads the API (issues, reports, health, releases, alerts) of the person's projects.
    case read
    /// Also closes, mutes, reopens, merges and annotates issues (where the person is a member or admin).
    case writeIssues = "write:issues"
    /// Uploads debug files with symupload or sentry-cli (where the person is a member or admin); reads nothing.
    case uploadSymbols = "upload:symbols"
    /// Everything the person may do, alert settings included.
    case admin

    /// The least role a person needs in some project before a token may carry this scope.
    public var leastRole: ProjectRole {
        switch self {
        case .read: .viewer
        case .writeIssues, .uploadSymbols: .member
        case .admin: .admin
        }
    }

    var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }

    /// Scopes from their names (`read,write:issues` or separate values); nil names the first unknown one.
    public static func parse(_ names: [String]) -> Result<Set<TokenScope>, PersonalTokenError> {
        var out: Set<TokenScope> = []
        for name in names.flatMap({ $0.split(separator: ",") }) {
            let trimmed = PersonName.trimmed(String(name))
            guard let scope = TokenScope(rawValue: trimmed) else {
                return .failure(
                    PersonalTokenError(
                        .invalidScope,
                        "unknown scope \"\(trimmed.prefix(40))\": use read, write:issues, upload:symbols or admin"))
            }
            out.insert(scope)
        }
        guard !out.isEmpty else {
            return .failure(PersonalTokenError(.invalidScope, "a token needs at least one scope"))
        }
        return .success(out)
    }

    /// The stored form: the names, sorted, joined by commas (`read,write:issues`).
    public static func encode(_ scopes: Set<TokenScope>) -> String {
        scopes.sorted().map(\.rawValue).joined(separator: ",")
    }

    /// Scopes from their stored form; unknown names are dropped (a newer server's scope grants nothing here).
    public static func decode(_ stored: String) -> Set<TokenScope> {
        Set(stored.split(separator: ",").compactMap { TokenScope(rawValue: String($0)) })
    }
}

/// What an API route asks of a personal token: which scope covers it and which ``AccessAction`` the person's role in
/// the project must allow.
public enum TokenUse: String, Sendable, CaseIterable {
    /// A read route (`GET` under `/api/v1/`, `/buildid/…`).
    case read
    /// A route that changes issues (`PATCH /api/v1/issues/{id}`, merge, unmerge) or settings (the controller asks
    /// ``Access`` again for `changeSettings`).
    case writeIssues
    /// symupload's and sentry-cli's debug-file upload routes.
    case uploadSymbols

    /// Whether a token with `scopes` may be used for this: `admin` covers everything, `write:issues` covers reads.
    public func allowed(by scopes: Set<TokenScope>) -> Bool {
        if scopes.contains(.admin) { return true }
        switch self {
        case .read: return scopes.contains(.read) || scopes.contains(.writeIssues)
        case .writeIssues: return scopes.contains(.writeIssues)
        case .uploadSymbols: return scopes.contains(.uploadSymbols)
        }
    }

    /// The scope to name when a token lacks it.
    public var scope: TokenScope {
        switch self {
        case .read: .read
        case .writeIssues: .writeIssues
        case .uploadSymbols: .uploadSymbols
        }
    }

    /// The action the person's role must allow in the project (an upload needs what changing issues needs: member).
    public var action: AccessAction {
        switch self {
        case .read: .read
        case .writeIssues, .uploadSymbols: .changeIssues
        }
    }
}

/// The stable id of a personal token (its row id): listed, and named to revoke it. Not a secret.
public struct PersonalTokenID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(rawValue) }
}

/// A personal API token as stored: never the secret, only its SHA-256 (``PersonalTokenSecret``).
public struct PersonalToken: Sendable, Equatable {
    public var id: PersonalTokenID
    public var person: PersonID
    /// What the person called it ("CI of the iOS app").
    public var name: String
    public var scopes: Set<TokenScope>
    public var createdAt: Date
    /// When it was last accepted, to the minute (nil: never used).
    public var lastUsedAt: Date?
    /// When it stops working; nil: until revoked.
    public var expiresAt: Date?

    public init(
        id: PersonalTokenID, person: PersonID, name: String, scopes: Set<TokenScope>, createdAt: Date,
        lastUsedAt: Date?, expiresAt: Date?
    ) {
        self.id = id
        self.person = person
        self.name = name
        self.scopes = scopes
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
    }
}

/// The secret of a personal token: `flp_` and 64 lowercase hex digits (32 random bytes).
///
/// The prefix tells the server at once that a bearer secret is a personal token (no lookup in the project tables),
/// and lets secret scanners find a token pasted into a repository. 256 random bits need no slow hash: the server
/// stores the SHA-256 of the whole value, as it does for upload tokens and session cookies, so checking a token costs
/// one indexed lookup, and a copy of the database cannot be used to sign in (decision 0067).
public enum PersonalTokenSecret {
    public static let prefix = "flp_"
    public static let randomBytes = 32

    /// Whether `secret` has the shape of a personal token (checked before any lookup).
    public static func looksLikeToken(_ secret: String) -> Bool {
        guard secret.hasPrefix(prefix) else { return false }
        let hex = secret.utf8.dropFirst(prefix.utf8.count)
        return hex.count == randomBytes * 2
            && hex.allSatisfy {
                ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
                    || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "f"))
            }
    }
}

/// Longest token name, in bytes.
public enum PersonalTokenName {
    public static let maxBytes = 100

    /// `name` trimmed, or why it cannot name a token.
    public static func checked(_ name: String) -> Result<String, PersonalTokenError> {
        let trimmed = PersonName.trimmed(name)
        guard (1...maxBytes).contains(trimmed.utf8.count) else {
            return .failure(PersonalTokenError(.invalidName, "a token's name has 1 to \(maxBytes) bytes"))
        }
        guard !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .failure(PersonalTokenError(.invalidName, "a token's name has no control characters"))
        }
        return .success(trimmed)
    }
}

/// What a personal token may do in one project, decided at each use from the person as the database holds them now:
/// the person's roles, each lowered to what the token's scopes allow. ``Access/decide(_:_:project:)`` then answers for
/// the token exactly as it would for that narrower person, so a token never does more than its person may.
public enum PersonalTokenGrant {
    /// The highest role `scopes` let a token act with.
    public static func cap(_ scopes: Set<TokenScope>) -> ProjectRole? {
        if scopes.contains(.admin) { return .admin }
        if scopes.contains(.writeIssues) || scopes.contains(.uploadSymbols) { return .member }
        if scopes.contains(.read) { return .viewer }
        return nil
    }

    /// `person` as a token with `scopes` lets them act in `project`: their role there (an owner: any role) lowered to
    /// the cap, and no other project; server ownership only with `admin`.
    public static func narrowed(_ person: Person, scopes: Set<TokenScope>, project: ProjectID) -> Person {
        var out = person
        out.owner = person.owner && scopes.contains(.admin)
        let role = person.owner ? ProjectRole.admin : person.role(in: project)
        if let role, let cap = cap(scopes) {
            out.memberships = [Membership(project: project, role: min(role, cap))]
        } else {
            out.memberships = []
        }
        return out
    }

    /// Scopes a person may give a token now: those whose least role they hold in some project (all of them for an
    /// owner). Nil when every scope in `wanted` is allowed; else the first that is not, to name it.
    public static func refused(_ wanted: Set<TokenScope>, for person: Person) -> TokenScope? {
        guard !person.owner else { return nil }
        let best = person.memberships.map(\.role).max()
        return wanted.sorted().first { scope in best.map { $0 < scope.leastRole } ?? true }
    }
}

/// Why a personal token could not be made or used.
public struct PersonalTokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case invalidScope = "invalid_scope"
        case invalidName = "invalid_name"
        case invalidExpiry = "invalid_expiry"
        case scopeAboveRole = "scope_above_role"
        case unknownPerson = "unknown_person"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// Where personal tokens are kept (`personal_tokens`, migrations `v33-personal-tokens-totp` /
/// `pg18-personal-tokens-totp`). Deleting a person deletes their tokens (`ON DELETE CASCADE`).
public protocol PersonalTokenStore: Sendable {
    /// Stores a token for `person` whose secret hashes to `tokenHash`; nil when the person does not exist (checked in
    /// the same transaction, ordered against a removal).
    func createToken(
        person: PersonID, name: String, scopes: Set<TokenScope>, tokenHash: SecretHash, createdAt: Date,
        expiresAt: Date?
    ) async throws -> PersonalToken?
    /// The live token whose secret hashes to `tokenHash` (not expired at `now`) and its person as the database holds
    /// them now. Records `now` as its last use when the one stored is a minute older or more.
    func useToken(tokenHash: SecretHash, now: Date) async throws -> (PersonalToken, Person)?
    /// The person's tokens (nil: everyone's), newest first.
    func tokens(of person: PersonID?) async throws -> [PersonalToken]
    /// Deletes the token (only when it is `person`'s, unless `person` is nil); false when there was none.
    func revokeToken(_ id: PersonalTokenID, of person: PersonID?) async throws -> Bool
}
