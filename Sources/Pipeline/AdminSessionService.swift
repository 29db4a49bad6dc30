import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dashboard logins: exchanges the admin token for a random session secret (the cookie), checks and ends
/// sessions, and slows down guessing.
///
/// The cookie never holds the admin token: a leaked cookie (a proxy log, a shared browser profile) gives at most one
/// session until it expires or logs out, and the token itself stays usable only where it is typed. Only the
/// secret's SHA-256 is stored. Sessions are checked in the database on every request (no cache), so logout and
/// token rotation take effect at once, also when another process (`faultline admin-token`) rotates: a login is
/// checked against the admin token in the same transaction that stores its session.
///
/// Failed attempts are counted per client address (``FailureLimit``: `maxFailures` within `failureWindow`), for every
/// place a secret is presented: `/login` (a person's password too, ``PeopleService``), a Basic or Bearer header on
/// the dashboard, and a bearer token the API or `/buildid` refuses (``recordFailure(_:)``).
public final class AdminSessionService: Sendable {
    let store: any AdminSessionStore
    let projects: ProjectService
    let hasher: any SecretHashing
    let generator: any SecretGenerating
    let clock: any WallClock
    /// How long a session lasts after login.
    public let lifetime: TimeInterval
    /// Failed attempts per client address.
    let failures: FailureLimit

    public init(
        store: any AdminSessionStore, projects: ProjectService, hasher: any SecretHashing,
        generator: any SecretGenerating,
        clock: any WallClock, lifetime: TimeInterval = 7 * 86_400, maxFailures: Int = 10,
        failureWindow: TimeInterval = 60
    ) {
        self.store = store
        self.projects = projects
        self.hasher = hasher
        self.generator = generator
        self.clock = clock
        self.lifetime = lifetime
        failures = FailureLimit(maxFailures: maxFailures, window: failureWindow)
    }

    /// What a login attempt came to.
    public enum LoginOutcome: Sendable, Equatable {
        /// A new session: `cookie` is the secret to set in the browser (shown once; only its hash is kept).
        case loggedIn(cookie: String, session: AdminSession)
        /// Not the admin token.
        case refused
        /// Too many failures from this address: try again after this many seconds.
        case throttled(retryAfter: Int)
        /// The password was right and the person has a second factor: no session yet; `ticket` (a secret, for the
        /// browser only) names the login waiting for its code.
        case secondFactorNeeded(ticket: String)
    }

    /// Seconds `client` must wait before its next attempt is heard, or nil.
    public func throttled(_ client: String) -> Int? {
        failures.retryAfter(client, now: clock.now())
    }

    /// Records a failed attempt by `client` (a wrong token at `/login`, in a Basic/Bearer header on the dashboard, or a
    /// bearer token that the API or `/buildid` refuses).
    public func recordFailure(_ client: String) {
        failures.record(client, now: clock.now())
    }

    /// Checks `token` for `client`; on success starts a session.
    public func login(token: String, client: String) async throws -> LoginOutcome {
        if let wait = throttled(client) { return .throttled(retryAfter: wait) }
        let cookie = generator.randomHex(bytes: 32)
        let now = clock.now()
        // The store checks the token and stores the session in one transaction (no cached answer can let a replaced
        // token in).
        guard !token.isEmpty,
            let session = try await store.createSession(
                tokenHash: hasher.hash(cookie), adminTokenHash: hasher.hash(token),
                secret: generator.randomHex(bytes: 32),
                createdAt: now, expiresAt: now.addingTimeInterval(lifetime))
        else {
            recordFailure(client)
            return .refused
        }
        failures.clear(client)
        // Expired rows are of no use; dropping them at login keeps the table small without a timer.
        try await store.pruneSessions(expiredBefore: now)
        return .loggedIn(cookie: cookie, session: session)
    }

    /// The live session a cookie value names, or nil (unknown, expired or logged out).
    public func session(cookie: String) async throws -> AdminSession? {
        guard Self.looksLikeSessionSecret(cookie) else { return nil }
        return try await store.session(tokenHash: hasher.hash(cookie), now: clock.now())
    }

    /// Ends the session a cookie value names.
    public func logout(cookie: String) async throws {
        guard Self.looksLikeSessionSecret(cookie) else { return }
        try await store.revokeSession(tokenHash: hasher.hash(cookie))
    }

    /// 64 lowercase hex digits: anything else is not one of ours and is not looked up.
    public static func looksLikeSessionSecret(_ value: String) -> Bool {
        value.utf8.count == 64 && value.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
