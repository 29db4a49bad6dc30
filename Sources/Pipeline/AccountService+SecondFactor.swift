import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The TOTP second factor (RFC 6238, ``TOTP``): enrolment from the account page, the code step of a login, recovery
/// codes, and the owner's reset.
///
/// - Enrolment: a random 160-bit secret is stored unconfirmed and shown as an `otpauth://` URI and as base32 text; the
///   first code from the person's app confirms it, and only then does login ask for codes. Confirming makes ten
///   one-time recovery codes, shown once and stored as SHA-256 hashes.
/// - Login: a person with a confirmed factor gets a ticket instead of a session after their password
///   (``challenge(_:)``); the ticket and a code start the session (``PeopleService/loginSecondStep``). The ticket is
///   kept in the database (its SHA-256, its person, its expiry and wrong codes: `login_tickets`), so that with several
///   nodes the code may go to another node than the password; it is spent by one conditional DELETE. A code is
///   accepted once: the step it was made in is stored, and only later steps pass (one conditional UPDATE, so two
///   requests with one code cannot both win). A recovery code is deleted as it is used.
extension AccountService {
    /// How long a login waits for its code.
    public static let ticketLifetime: TimeInterval = 300
    /// Wrong codes a ticket takes before it ends (the password must be given again).
    public static let ticketAttempts = 5
    /// Recovery codes made at confirmation.
    public static let recoveryCodeCount = 10

    /// The factor of `person` (confirmed or not); nil when they have none.
    public func secondFactor(of person: PersonID) async throws -> SecondFactor? {
        try await store.secondFactor(of: person)
    }

    /// What enrolment shows: the secret as base32 text and as the URI an authenticator app reads.
    public struct Enrolment: Sendable, Equatable {
        public var secret: String
        public var uri: String
    }

    /// Starts (or restarts) enrolment with a new secret.
    /// - Throws: ``PeopleError`` `.invalidLogin` when the person's factor is already confirmed (remove it first),
    ///   `.unknownPerson`.
    public func beginSecondFactor(person id: PersonID) async throws -> Enrolment {
        guard let person = try await store.person(id: id) else { throw PeopleError(.unknownPerson, "no such person") }
        let secret = Base32.encode(Hex.bytes(generator.randomHex(bytes: TOTP.secretBytes)) ?? [])
        guard try await store.beginSecondFactor(person: id, secret: secret) else {
            throw PeopleError(.invalidLogin, "your second factor is already on: remove it first to enrol a new one")
        }
        return Enrolment(secret: secret, uri: TOTP.uri(secret: secret, account: person.login.rawValue))
    }

    /// The enrolment still waiting for its first code, to show again; nil when none waits.
    public func waitingEnrolment(person: Person) async throws -> Enrolment? {
        guard let factor = try await store.secondFactor(of: person.id), !factor.confirmed else { return nil }
        return Enrolment(secret: factor.secret, uri: TOTP.uri(secret: factor.secret, account: person.login.rawValue))
    }

    /// Confirms enrolment with the first code from the person's app; answers the recovery codes (shown once).
    /// - Throws: ``PeopleError`` `.invalidLogin` when the code is wrong or nothing waits.
    public func confirmSecondFactor(person: PersonID, code: String) async throws -> [String] {
        guard let factor = try await store.secondFactor(of: person), !factor.confirmed,
            let key = Base32.decode(factor.secret),
            let step = TOTP.accepts(code, key: key, now: clock.now(), lastStep: 0, hmac: hmac)
        else {
            throw PeopleError(.invalidLogin, "that code does not match: check the app's clock and try the next code")
        }
        let codes = (0..<Self.recoveryCodeCount).map { _ in Self.recoveryCode(generator.randomHex(bytes: 8)) }
        guard
            try await store.confirmSecondFactor(
                person: person, step: step, recoveryCodeHashes: codes.map { hasher.hash(Self.normalized($0)) },
                at: clock.now())
        else { throw PeopleError(.invalidLogin, "no enrolment waits for a code") }
        return codes
    }

    /// Turns the factor off after checking the person's password.
    /// - Throws: ``PeopleError`` `.invalidLogin` for a wrong password; `.unknownPerson`.
    public func removeSecondFactor(person id: PersonID, password: String) async throws -> Bool {
        guard let person = try await store.person(id: id) else { throw PeopleError(.unknownPerson, "no such person") }
        guard let stored = person.passwordHash.flatMap(PasswordHash.init(encoded:)),
            password.utf8.count <= PasswordRule.maxBytes, try stored.verify(password, deriver: deriver)
        else { throw PeopleError(.invalidLogin, "the password does not match") }
        return try await store.removeSecondFactor(person: id)
    }

    /// The owner's reset (`faultline users reset-totp`): removes the factor and its recovery codes.
    public func resetSecondFactor(person: PersonID) async throws -> Bool {
        try await store.removeSecondFactor(person: person)
    }

    // MARK: Login

    /// A ticket for the code step when `person` has a confirmed factor; nil when they have none (sign in at once).
    public func challenge(_ person: Person) async throws -> String? {
        guard let factor = try await store.secondFactor(of: person.id), factor.confirmed else { return nil }
        let ticket = generator.randomHex(bytes: 32)
        let now = clock.now()
        try await store.createLoginTicket(
            hasher.hash(ticket), person: person.id, expiresAt: now.addingTimeInterval(Self.ticketLifetime), now: now)
        return ticket
    }

    /// The person a live ticket is for.
    public func waitingLogin(_ ticket: String) async throws -> PersonID? {
        guard AdminSessionService.looksLikeSessionSecret(ticket) else { return nil }
        return try await store.loginTicket(hasher.hash(ticket), now: clock.now())
    }

    /// Checks a login's code (TOTP, or a recovery code `xxxxx-xxxxx`); on success spends the ticket and answers the
    /// person. A wrong code counts against the ticket, which ends after ``ticketAttempts``. The code is checked before
    /// the ticket is spent: a wrong code must not end a ticket at once; of two right codes with one ticket (two
    /// recovery codes, sent to two nodes), only the request that spends the ticket signs in.
    func verifyLoginCode(ticket: String, code: String) async throws -> PersonID? {
        guard let person = try await waitingLogin(ticket) else { return nil }
        let key = hasher.hash(ticket)
        if try await accepts(code, person: person) {
            return try await store.spendLoginTicket(key, person: person, now: clock.now()) ? person : nil
        }
        try await store.failLoginTicket(key, limit: Self.ticketAttempts)
        return nil
    }

    /// Whether `code` is the person's current TOTP code (used up now) or one of their recovery codes (deleted now).
    func accepts(_ code: String, person: PersonID) async throws -> Bool {
        guard let factor = try await store.secondFactor(of: person), factor.confirmed,
            let key = Base32.decode(factor.secret)
        else { return false }
        if let step = TOTP.accepts(code, key: key, now: clock.now(), lastStep: factor.lastStep, hmac: hmac) {
            return try await store.useSecondFactorStep(person: person, step: step)
        }
        let normalized = Self.normalized(code)
        guard normalized.count == 10 else { return false }
        return try await store.useRecoveryCode(person: person, hash: hasher.hash(normalized))
    }

    /// A recovery code from 8 random bytes (hex): ten base32 characters, shown as `xxxxx-xxxxx` (50 bits).
    static func recoveryCode(_ hex: String) -> String {
        let text = Base32.encode(Hex.bytes(hex) ?? []).lowercased().prefix(10)
        return String(text.prefix(5)) + "-" + String(text.dropFirst(5))
    }

    /// A recovery code as hashed: lowercase, without the dash or spaces.
    static func normalized(_ code: String) -> String {
        String(code.lowercased().filter { $0 != "-" && $0 != " " })
    }
}
