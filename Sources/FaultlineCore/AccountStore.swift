#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A person's TOTP second factor as stored: the shared secret (base32), whether enrolment was confirmed by a first
/// code, and the last time step a code was accepted for (``TOTP``: a code is never accepted twice).
public struct SecondFactor: Sendable, Equatable {
    public var secret: String
    public var confirmed: Bool
    public var lastStep: Int64
    /// One-time recovery codes not used yet.
    public var recoveryCodesLeft: Int
    public init(secret: String, confirmed: Bool, lastStep: Int64, recoveryCodesLeft: Int) {
        self.secret = secret
        self.confirmed = confirmed
        self.lastStep = lastStep
        self.recoveryCodesLeft = recoveryCodesLeft
    }
}

/// What a signed-in person changes about their own account (the account page): their password and their second
/// factor (`second_factors`, `recovery_codes`).
public protocol AccountStore: Sendable {
    /// Replaces the person's password hash and ends every other session of theirs (a password changed because it
    /// leaked should sign the other browser out), keeping `keep`. False when there is no such person.
    func setPassword(person: PersonID, passwordHash: String, keeping keep: AdminSessionID?) async throws -> Bool

    /// The person's second factor, confirmed or waiting for its first code; nil when they have none.
    func secondFactor(of person: PersonID) async throws -> SecondFactor?
    /// Starts enrolment with `secret` (base32), replacing an unconfirmed one; false when the person has a confirmed
    /// factor (it must be removed first) or does not exist.
    func beginSecondFactor(person: PersonID, secret: String) async throws -> Bool
    /// Confirms the waiting factor with the step of its first code and stores the recovery codes' hashes (replacing
    /// any); false when nothing waits.
    func confirmSecondFactor(person: PersonID, step: Int64, recoveryCodeHashes: [SecretHash], at date: Date)
        async throws -> Bool
    /// Records `step` as used, only when it is later than the last one used (one statement, so two requests with one
    /// code cannot both pass); false otherwise.
    func useSecondFactorStep(person: PersonID, step: Int64) async throws -> Bool
    /// Uses up a recovery code: deletes it; false when the person has no such code.
    func useRecoveryCode(person: PersonID, hash: SecretHash) async throws -> Bool
    /// Removes the person's second factor and recovery codes; false when they had none.
    func removeSecondFactor(person: PersonID) async throws -> Bool

    /// Stores a login waiting for its second factor's code: `ticket` (the SHA-256 of the browser's secret) names
    /// `person` until `expiresAt`. Expired tickets are deleted on the way, so the table holds only live ones.
    func createLoginTicket(_ ticket: SecretHash, person: PersonID, expiresAt: Date, now: Date) async throws
    /// The person a live ticket (not expired at `now`) is for; nil when there is none.
    func loginTicket(_ ticket: SecretHash, now: Date) async throws -> PersonID?
    /// Spends a live ticket of `person`: one conditional DELETE, so that of two requests (or nodes) with one ticket
    /// only one wins; false when it was spent, ended or expired already.
    func spendLoginTicket(_ ticket: SecretHash, person: PersonID, now: Date) async throws -> Bool
    /// Counts a wrong code against a ticket; the ticket ends (is deleted) at its `limit`-th wrong code.
    func failLoginTicket(_ ticket: SecretHash, limit: Int) async throws
}
