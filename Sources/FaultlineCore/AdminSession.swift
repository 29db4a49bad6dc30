#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The stable id of a dashboard login session (its row id). Safe to log and to bind other values to (such as
/// CSRF tokens); it is not the secret the browser holds.
public struct AdminSessionID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(rawValue) }
}

/// A dashboard login: what the server keeps for the random session secret a browser holds in its cookie.
///
/// The cookie carries a random secret, never the admin token; the server stores only the secret's SHA-256, so a
/// copy of the database does not log anyone in. Sessions expire at `expiresAt` and end at logout or when the
/// admin token is replaced: a session belongs to the admin token it was made with (see
/// ``AdminSessionStore/createSession(tokenHash:adminTokenHash:secret:createdAt:expiresAt:)``).
public struct AdminSession: Sendable, Equatable {
    /// Stable for the session's life.
    public var id: AdminSessionID
    public var createdAt: Date
    public var expiresAt: Date
    /// A random per-session server-side secret (hex), never sent to the browser: the key for values bound to this
    /// session, such as CSRF tokens (an HMAC of the form with this key).
    public var secret: String
    /// The person signed in; nil for a session of the admin token (the break-glass owner login).
    public var person: PersonID?
    public init(id: AdminSessionID, createdAt: Date, expiresAt: Date, secret: String, person: PersonID? = nil) {
        self.id = id
        self.person = person
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.secret = secret
    }
}

/// Where dashboard sessions are kept (the `admin_sessions` table).
public protocol AdminSessionStore: Sendable {
    /// Records a new session for the cookie secret whose hash is `tokenHash`, if `adminTokenHash` is still the admin
    /// token's hash; nil (nothing stored) when it is not.
    ///
    /// The check and the insert are one transaction, ordered against `ProjectStore.setAdminTokenHash` (which ends
    /// every session in its own): so a login checked against a token that another process replaced a moment ago — a
    /// cached answer, or a rotation between the check and the insert — never leaves a session behind that outlives
    /// the rotation. Break this and a replaced token keeps a 7-day session.
    func createSession(
        tokenHash: SecretHash, adminTokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    )
        async throws -> AdminSession?
    /// The session whose cookie secret hashes to `tokenHash`, when it has not expired at `now`.
    func session(tokenHash: SecretHash, now: Date) async throws -> AdminSession?
    /// Ends the session whose cookie secret hashes to `tokenHash` (nothing when there is none).
    func revokeSession(tokenHash: SecretHash) async throws
    /// Deletes sessions that expired before `date`; returns how many.
    @discardableResult
    func pruneSessions(expiredBefore date: Date) async throws -> Int
}

/// Failed logins per client address in a sliding window: past `maxFailures` in `window`, the address is told to
/// wait. Pure: the state goes in and comes out, the caller keeps it and passes the time.
public struct LoginFailures: Sendable, Equatable {
    /// Failure times of one address, oldest first, within the window.
    public var times: [Date] = []
    public init() {}

    /// Drops failures older than `window` before `now`.
    public mutating func forget(before now: Date, window: TimeInterval) {
        times.removeAll { now.timeIntervalSince($0) >= window }
    }

    /// Records a failure at `now`, keeping at most `keep` (the newest).
    public mutating func record(_ now: Date, keep: Int) {
        times.append(now)
        if times.count > max(1, keep) { times.removeFirst(times.count - max(1, keep)) }
    }

    /// Whole seconds to wait before the next attempt is heard, or nil when it may try now.
    public func retryAfter(now: Date, maxFailures: Int, window: TimeInterval) -> Int? {
        let recent = times.filter { now.timeIntervalSince($0) < window }
        guard maxFailures > 0, recent.count >= maxFailures else { return nil }
        // Heard again once enough of the recent failures have aged out to leave fewer than `maxFailures`.
        let wait = window - now.timeIntervalSince(recent[recent.count - maxFailures])
        guard wait.isFinite else { return Int(window) }
        return max(1, Int(wait.rounded(.up)))
    }
}
