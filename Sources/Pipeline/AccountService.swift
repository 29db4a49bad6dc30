import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a person manages of their own account (issue #37): personal API tokens, their password and their TOTP second
/// factor (``AccountService+SecondFactor.swift``).
///
/// Tokens are made for a person, shown once, stored as the SHA-256 of the secret, listed and revoked on the account
/// page and with `faultline tokens`.
///
/// A token is checked again at every use (``authenticate(_:)``): the row must still exist and not have expired, and
/// its person is read as the database holds them now, so a revoked token, a removed person or a lowered role takes
/// effect on the next request. What the token may do in a project is its person's role there, lowered to what its
/// scopes allow (``PersonalTokenGrant``), decided by ``Access`` like every other request.
public final class AccountService: Sendable {
    let store: any PeopleStore & PersonalTokenStore & AccountStore
    let hasher: any SecretHashing
    let generator: any SecretGenerating
    let clock: any WallClock
    let deriver: any PasswordDeriving
    let parameters: ScryptParameters
    /// What TOTP codes are made with (HMAC-SHA-1).
    let hmac: any HMACSHA1Computing
    /// Where making and revoking tokens is recorded; nil records nothing.
    let audit: (any AuditTrail)?
    /// The longest lifetime a token may be given, in days.
    public static let maxDays = 3650

    public init(
        store: any PeopleStore & PersonalTokenStore & AccountStore, hasher: any SecretHashing,
        generator: any SecretGenerating,
        clock: any WallClock, deriver: any PasswordDeriving, hmac: any HMACSHA1Computing,
        parameters: ScryptParameters = .standard, audit: (any AuditTrail)? = nil
    ) {
        self.audit = audit
        self.hmac = hmac
        self.deriver = deriver
        self.parameters = parameters
        self.store = store
        self.hasher = hasher
        self.generator = generator
        self.clock = clock
    }

    /// A token just made: its row and its secret, which is shown once and never stored.
    public struct Created: Sendable {
        public var token: PersonalToken
        public var secret: String
    }

    /// Makes a token for `person`.
    ///
    /// - Parameters:
    ///   - expiresInDays: nil for a token that works until revoked; else 1 to ``maxDays``.
    /// - Throws: ``PersonalTokenError``: a bad name or expiry, a scope above every role of the person
    ///   (`scopeAboveRole`), an unknown person. Nothing is stored then.
    ///   - origin: who made it, for the audit trail.
    public func create(
        person id: PersonID, name: String, scopes: Set<TokenScope>, expiresInDays: Int?, by origin: AuditOrigin
    ) async throws -> Created {
        let checkedName = try PersonalTokenName.checked(name).get()
        guard !scopes.isEmpty else { throw PersonalTokenError(.invalidScope, "a token needs at least one scope") }
        if let days = expiresInDays, !(1...Self.maxDays).contains(days) {
            throw PersonalTokenError(.invalidExpiry, "a token expires after 1 to \(Self.maxDays) days, or never")
        }
        guard let person = try await store.person(id: id) else {
            throw PersonalTokenError(.unknownPerson, "no such person")
        }
        if let scope = PersonalTokenGrant.refused(scopes, for: person) {
            throw PersonalTokenError(
                .scopeAboveRole,
                "the scope \(scope.rawValue) needs the \(scope.leastRole.rawValue) role in some project, which "
                    + "\(person.displayName) does not have")
        }
        let secret = PersonalTokenSecret.prefix + generator.randomHex(bytes: PersonalTokenSecret.randomBytes)
        let now = clock.now()
        guard
            let token = try await store.createToken(
                person: id, name: checkedName, scopes: scopes, tokenHash: hasher.hash(secret), createdAt: now,
                expiresAt: expiresInDays.map { now.addingTimeInterval(Double($0) * 86_400) })
        else { throw PersonalTokenError(.unknownPerson, "no such person") }
        try await record(.tokenCreated, token, of: person, origin, after: TokenScope.encode(scopes))
        return Created(token: token, secret: secret)
    }

    /// The live token `secret` names and its person now; nil for anything else (not a token's shape, unknown,
    /// revoked, expired, its person removed).
    public func authenticate(_ secret: String) async throws -> (token: PersonalToken, person: Person)? {
        guard PersonalTokenSecret.looksLikeToken(secret) else { return nil }
        guard let (token, person) = try await store.useToken(tokenHash: hasher.hash(secret), now: clock.now()) else {
            return nil
        }
        return (token, person)
    }

    /// The person's tokens, newest first; everyone's with nil (the owner's CLI).
    public func tokens(of person: PersonID?) async throws -> [PersonalToken] {
        try await store.tokens(of: person)
    }

    /// Revokes a token: only `person`'s own, or any with nil (the owner's CLI). False when there was none.
    public func revoke(_ id: PersonalTokenID, of person: PersonID?, by origin: AuditOrigin) async throws -> Bool {
        guard let token = try await store.tokens(of: person).first(where: { $0.id == id }),
            try await store.revokeToken(id, of: person)
        else { return false }
        if let owner = try await store.person(id: token.person) {
            try await record(.tokenRevoked, token, of: owner, origin, after: nil)
        }
        return true
    }

    /// Records a change of a person's token in the audit trail: the token by id and name, never its secret.
    func record(_ kind: AuditKind, _ token: PersonalToken, of person: Person, _ origin: AuditOrigin, after: String?)
        async throws
    {
        try await audit?.record(
            AuditEntry(
                project: nil, at: clock.now(), origin: origin, kind: kind,
                subject: "token \(token.id) \"\(token.name)\" of \(person.login.rawValue)", after: after))
    }

    /// The person with this login (the CLI names people by login).
    public func person(login: PersonLogin) async throws -> Person? { try await store.person(login: login) }
    public func person(id: PersonID) async throws -> Person? { try await store.person(id: id) }

    /// Changes the password of `person` after checking their current one; their other sessions end, `keep` stays.
    ///
    /// - Throws: ``PeopleError`` `.weakPassword` (the new one), `.invalidLogin` (the current one does not match),
    ///   `.unknownPerson`. Nothing changes then.
    public func changePassword(
        person id: PersonID, current: String, new password: String, keeping keep: AdminSessionID?
    )
        async throws
    {
        guard let person = try await store.person(id: id) else { throw PeopleError(.unknownPerson, "no such person") }
        guard let stored = person.passwordHash.flatMap(PasswordHash.init(encoded:)),
            current.utf8.count <= PasswordRule.maxBytes, try stored.verify(current, deriver: deriver)
        else { throw PeopleError(.invalidLogin, "the current password does not match") }
        if let problem = PasswordRule.problem(password) { throw PeopleError(.weakPassword, problem) }
        let salt = Hex.bytes(generator.randomHex(bytes: PasswordHash.saltBytes)) ?? []
        let hash = try PasswordHash.make(password: password, salt: salt, parameters: parameters, deriver: deriver)
        guard try await store.setPassword(person: id, passwordHash: hash.encoded, keeping: keep) else {
            throw PeopleError(.unknownPerson, "no such person")
        }
    }
}
