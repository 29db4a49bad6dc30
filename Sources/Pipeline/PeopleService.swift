import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// People and their roles (issue #37): invites, setting a password on an invite link, password logins, and the
/// owner's changes (roles, removal).
///
/// - Invites: a random 32-byte secret in a link, stored as its SHA-256 only, for `inviteLifetime` (3 days by
///   default); the first use sets the person's password and deletes every invite of theirs, so a link works once.
/// - Passwords: scrypt (``PasswordHash``, parameters stored with each hash), compared in constant time. An unknown
///   login costs the same scrypt work as a wrong password, so the answer's time does not say which logins exist.
/// - Logins are limited per client address (shared with the admin token's limit, ``AdminSessionService``) and per
///   account (``FailureLimit``: `maxAccountFailures` within `accountWindow`), both before any hashing: guessing one
///   person's password from many addresses is as slow as from one, and a flood of guesses does not buy scrypt work.
/// - Sessions are rows of `admin_sessions` naming the person: they survive a restart, and are checked against the
///   database on every request (``person(of:)``), so a removed person or a changed role takes effect at once.
public final class PeopleService: Sendable {
    let store: any PeopleStore
    let sessions: AdminSessionService
    let hasher: any SecretHashing
    let generator: any SecretGenerating
    let deriver: any PasswordDeriving
    let clock: any WallClock
    /// How long an invite link works.
    public let inviteLifetime: TimeInterval
    /// What new passwords are hashed with.
    let parameters: ScryptParameters
    /// Failed logins per account (its lowercased login), from any address.
    let accountFailures: FailureLimit
    /// Where invites, role changes and removals are recorded; nil records nothing (tests of other concerns).
    let audit: (any AuditTrail)?

    public init(
        store: any PeopleStore, sessions: AdminSessionService, hasher: any SecretHashing,
        generator: any SecretGenerating, deriver: any PasswordDeriving, clock: any WallClock,
        inviteLifetime: TimeInterval = 3 * 86_400, parameters: ScryptParameters = .standard,
        maxAccountFailures: Int = 10, accountWindow: TimeInterval = 900, audit: (any AuditTrail)? = nil
    ) {
        self.audit = audit
        self.store = store
        self.sessions = sessions
        self.hasher = hasher
        self.generator = generator
        self.deriver = deriver
        self.clock = clock
        self.inviteLifetime = inviteLifetime
        self.parameters = parameters
        accountFailures = FailureLimit(maxFailures: maxAccountFailures, window: accountWindow)
    }

    /// A new invite: the person it is for, and the secret of its link (shown once).
    public struct Invitation: Sendable {
        public var person: Person
        public var secret: String
        public var expiresAt: Date
    }

    /// Invites `login` (made if new) as `role` in `project`, or as a server owner when `owner` is set; `origin` is
    /// recorded as who invited them.
    public func invite(
        login: PersonLogin, role: ProjectRole?, project: ProjectID?, owner: Bool, lifetime: TimeInterval? = nil,
        by origin: AuditOrigin
    ) async throws -> Invitation {
        let now = clock.now()
        var person = try await store.ensurePerson(login: login, name: "", owner: owner, at: now)
        let formerRole = project.flatMap { person.role(in: $0) }
        if owner, !person.owner { _ = try await store.setOwner(true, person: person.id) }
        if let role, let project {
            guard try await store.setRole(role, person: person.id, project: project) else {
                throw PeopleError(.unknownProject, "no such project")
            }
        }
        try await record(
            .memberInvited, project: role == nil ? nil : project, person: person, origin,
            before: formerRole?.rawValue, after: role?.rawValue ?? (owner ? "owner" : nil))
        person = try await store.person(id: person.id) ?? person
        let secret = generator.randomHex(bytes: 32)
        let expires = now.addingTimeInterval(lifetime ?? inviteLifetime)
        try await store.createInvite(
            tokenHash: hasher.hash(secret), person: person.id, createdAt: now, expiresAt: expires)
        return Invitation(person: person, secret: secret, expiresAt: expires)
    }

    /// A new random value for a form's double-submit CSRF check (the invite page's cookie and hidden field).
    public func formSecret() -> String { generator.randomHex(bytes: 32) }

    /// The person an unused, unexpired invite link is for; nil otherwise.
    public func invitee(secret: String) async throws -> Person? {
        guard AdminSessionService.looksLikeSessionSecret(secret),
            let invite = try await store.invite(tokenHash: hasher.hash(secret), now: clock.now())
        else { return nil }
        return try await store.person(id: invite.person)
    }

    /// Sets the password (and name) of the invite's person and uses the invite up; then signs them in.
    ///
    /// - Throws: ``PeopleError`` `.weakPassword` or `.invalidName` (nothing changes), `.invalidInvite` when the link
    ///   is unknown, used or expired.
    public func acceptInvite(secret: String, password: String, name: String) async throws
        -> AdminSessionService.LoginOutcome
    {
        if let problem = PasswordRule.problem(password) { throw PeopleError(.weakPassword, problem) }
        let checkedName = try PersonName.checked(name).get()
        guard AdminSessionService.looksLikeSessionSecret(secret) else {
            throw PeopleError(.invalidInvite, "this invite link is not valid, was used, or has expired")
        }
        let hash = try newHash(password)
        guard
            let person = try await store.acceptInvite(
                tokenHash: hasher.hash(secret), passwordHash: hash.encoded,
                name: checkedName.isEmpty ? nil : checkedName,
                now: clock.now())
        else { throw PeopleError(.invalidInvite, "this invite link is not valid, was used, or has expired") }
        return try await startSession(for: person)
    }

    /// A hash of `password` under a fresh salt.
    func newHash(_ password: String) throws -> PasswordHash {
        let salt = Hex.bytes(generator.randomHex(bytes: PasswordHash.saltBytes)) ?? []
        return try PasswordHash.make(password: password, salt: salt, parameters: parameters, deriver: deriver)
    }

    /// Checks a login and password from `client`; on success starts a session for the person, or, when they have a
    /// confirmed second factor (`secondFactor`), answers a ticket for the code step
    /// (``loginSecondStep(ticket:code:client:secondFactor:)``).
    public func login(
        login rawLogin: String, password: String, client: String, secondFactor: AccountService? = nil
    ) async throws -> AdminSessionService.LoginOutcome {
        let key = PersonLogin(rawLogin)?.rawValue ?? rawLogin.lowercased()
        let waits = [sessions.throttled(client), accountFailures.retryAfter(key, now: clock.now())].compactMap { $0 }
        if let wait = waits.max() { return .throttled(retryAfter: wait) }
        let person = try await PersonLogin(rawLogin).asyncFlatMap { try await store.person(login: $0) }
        let stored = person?.passwordHash.flatMap(PasswordHash.init(encoded:))
        let matched: Bool
        if let stored, password.utf8.count <= PasswordRule.maxBytes {
            matched = try stored.verify(password, deriver: deriver)
        } else {
            // The same work as a real check, so that the time of the answer does not tell which logins exist.
            _ = try? deriver.derive(
                password: String(password.prefix(PasswordRule.maxBytes)), salt: [UInt8](repeating: 0, count: 16),
                parameters: parameters, length: PasswordHash.keyBytes)
            matched = false
        }
        guard matched, let person else {
            sessions.recordFailure(client)
            accountFailures.record(key, now: clock.now())
            return .refused
        }
        // With a second factor, failures are cleared only once its code is right: a known password must not buy more
        // guesses at codes.
        if let ticket = try await secondFactor?.challenge(person) { return .secondFactorNeeded(ticket: ticket) }
        accountFailures.clear(key)
        return try await startSession(for: person)
    }

    func startSession(for person: Person) async throws -> AdminSessionService.LoginOutcome {
        let cookie = generator.randomHex(bytes: 32)
        let now = clock.now()
        guard
            let session = try await store.createPersonSession(
                person: person.id, tokenHash: hasher.hash(cookie), secret: generator.randomHex(bytes: 32),
                createdAt: now, expiresAt: now.addingTimeInterval(sessions.lifetime))
        else { return .refused }
        return .loggedIn(cookie: cookie, session: session)
    }

    /// The person a session is for, as the database holds them now; nil for the admin token's sessions and for a
    /// person since removed.
    public func person(of session: AdminSession) async throws -> Person? {
        guard let id = session.person else { return nil }
        return try await store.person(id: id)
    }

    // MARK: The owner's changes

    public func person(login: PersonLogin) async throws -> Person? { try await store.person(login: login) }
    public func person(id: PersonID) async throws -> Person? { try await store.person(id: id) }
    public func all() async throws -> [Person] { try await store.allPeople() }

    /// Gives a person a role in a project (or takes them out of it with nil), recorded as made by `origin`.
    public func setRole(_ role: ProjectRole?, person id: PersonID, project: ProjectID, by origin: AuditOrigin)
        async throws -> Bool
    {
        guard let person = try await store.person(id: id) else { return false }
        let before = person.role(in: project)
        let changed: Bool
        if let role {
            changed = try await store.setRole(role, person: id, project: project)
        } else {
            changed = try await store.removeMembership(person: id, project: project)
        }
        if changed, before != role {
            try await record(
                role == nil ? .memberRemoved : .memberRole, project: project, person: person, origin,
                before: before?.rawValue, after: role?.rawValue)
        }
        return changed
    }

    /// Makes a person a server owner or no longer one, recorded as made by `origin`.
    public func setOwner(_ owner: Bool, person id: PersonID, by origin: AuditOrigin) async throws -> Bool {
        guard let person = try await store.person(id: id) else { return false }
        let changed = try await store.setOwner(owner, person: id)
        if changed, person.owner != owner {
            try await record(
                .personOwner, project: nil, person: person, origin, before: person.owner ? "owner" : "not owner",
                after: owner ? "owner" : "not owner")
        }
        return changed
    }

    /// Removes a person; their sessions end in the same transaction. Recorded once server-wide and once in each
    /// project they had a role in (so each project's trail says who left it).
    public func remove(_ id: PersonID, by origin: AuditOrigin) async throws -> Bool {
        guard let person = try await store.person(id: id), try await store.removePerson(id) else { return false }
        for membership in person.memberships {
            try await record(
                .memberRemoved, project: membership.project, person: person, origin,
                before: membership.role.rawValue, after: nil)
        }
        try await record(
            .personRemoved, project: nil, person: person, origin, before: person.owner ? "owner" : nil, after: nil)
        return true
    }

    /// Records a change of `person` (named by their login) in the audit trail.
    func record(
        _ kind: AuditKind, project: ProjectID?, person: Person, _ origin: AuditOrigin, before: String?, after: String?
    ) async throws {
        try await audit?.record(
            AuditEntry(
                project: project, at: clock.now(), origin: origin, kind: kind, subject: person.login.rawValue,
                before: before, after: after))
    }
}

extension Optional {
    /// `transform` of the wrapped value, awaited; nil stays nil.
    fileprivate func asyncFlatMap<T>(_ transform: (Wrapped) async throws -> T?) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
