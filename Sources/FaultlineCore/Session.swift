#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The state of one run of the app. `ok` while running; the other three are terminal.
public enum SessionStatus: String, Sendable, Codable, CaseIterable {
    case ok
    case exited
    case crashed
    case abnormal

    /// Terminal states are final: once a session has ended, later updates cannot change it.
    public var isTerminal: Bool { self != .ok }
}

/// One update of a session, as a client sends it (several per session: start, progress, end).
public struct SessionUpdate: Sendable, Equatable {
    public var sessionID: SessionID
    /// The user id, else the install id.
    public var distinctID: String?
    public var release: String
    public var environment: String?
    public var started: Date
    public var status: SessionStatus
    public var errors: Int
    /// Seconds the session has run, when the client knows.
    public var duration: Double?
    /// A client sequence number; a lower `seq` than what is stored is a stale update and ignored.
    public var seq: Int64?
    /// How many sessions this update stands for: 1 for a session of its own; a request-mode aggregate's count of one
    /// status (Sentry's `sessions` item) is stored as one row of that many sessions, not as that many rows.
    public var count: Int

    public init(
        sessionID: SessionID, distinctID: String? = nil, release: String, environment: String? = nil, started: Date,
        status: SessionStatus, errors: Int = 0, duration: Double? = nil, seq: Int64? = nil, count: Int = 1
    ) {
        self.count = max(1, count)
        self.sessionID = sessionID
        self.distinctID = distinctID
        self.release = release
        self.environment = environment
        self.started = started
        self.status = status
        self.errors = errors
        self.duration = duration
        self.seq = seq
    }
}

extension Collection where Element == SessionUpdate {
    /// How many sessions the updates stand for: their counts added (saturating), what a request is charged.
    public var sessionCount: Int {
        reduce(0) { total, update in
            let (sum, overflow) = total.addingReportingOverflow(update.count)
            return overflow ? Int.max : sum
        }
    }
}

/// What is stored about a session after all its updates.
public struct SessionState: Sendable, Equatable {
    public var sessionID: SessionID
    public var distinctID: String?
    public var release: String
    public var environment: String?
    public var started: Date
    public var status: SessionStatus
    public var errors: Int
    public var duration: Double?
    public var seq: Int64?
    /// How many sessions the row stands for (see ``SessionUpdate/count``); fixed by the first update.
    public var count: Int

    public init(
        sessionID: SessionID, distinctID: String?, release: String, environment: String?, started: Date,
        status: SessionStatus, errors: Int, duration: Double?, seq: Int64?, count: Int = 1
    ) {
        self.count = max(1, count)
        self.sessionID = sessionID
        self.distinctID = distinctID
        self.release = release
        self.environment = environment
        self.started = started
        self.status = status
        self.errors = errors
        self.duration = duration
        self.seq = seq
    }

    /// Errored = ended normally (or still running) but with at least one handled error.
    public var isErrored: Bool { (status == .ok || status == .exited) && errors > 0 }

    /// Applies `update` to `existing` (nil for a new session) following Sentry's release-health rules.
    ///
    /// - Returns: the new state, or nil when the update changes nothing (a retry, a stale `seq`, or any
    ///   update after a terminal state). Returning nil for retries is what makes the endpoint idempotent.
    public static func merging(_ update: SessionUpdate, into existing: SessionState?) -> SessionState? {
        guard let existing else {
            return SessionState(
                sessionID: update.sessionID, distinctID: update.distinctID, release: update.release,
                environment: update.environment, started: update.started, status: update.status,
                errors: max(0, update.errors), duration: update.duration, seq: update.seq, count: update.count)
        }
        if existing.status.isTerminal { return nil }
        if let old = existing.seq, let new = update.seq, new < old { return nil }
        var next = existing
        next.status = update.status
        next.errors = max(existing.errors, update.errors)
        next.duration = update.duration ?? existing.duration
        next.seq = update.seq ?? existing.seq
        next.distinctID = existing.distinctID ?? update.distinctID
        next.environment = existing.environment ?? update.environment
        return next == existing ? nil : next
    }
}
