import FaultlineCore
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why ingest refused work it could otherwise have taken. The HTTP module maps these to statuses.
public struct IngestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The project is over its rate limit; retry after `retryAfter` seconds (429).
        case rateLimited
        /// The data folder's disk is full or below its free-space floor; retry later (507).
        case diskFull
        /// Storage failed; nothing of the request was stored (500, message not echoed).
        case storageFailed
        /// The database cannot be reached now or did not commit within the deadline (503 with `Retry-After`): a
        /// retry is safe (a report stored after all is answered as a duplicate, a session update applies once).
        case unavailable
        /// What the request carries does not fit the project's storage quota (a minidump over the quota it shares with
        /// debug files); nothing was stored. 429 `quota_exceeded`, so a client such as Crashpad keeps it and retries.
        case quotaExceeded
    }
    public var code: Code
    public var message: String
    public var retryAfter: Int?
    /// With `.rateLimited`: which limit refused.
    public var limitedBy = IngestLimit.rateLimit
    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }
    public var description: String { "\(code.rawValue): \(message)" }
}

/// Which limit refused a request's events; the raw value is its scope and reason as Relay names them
/// (`X-Sentry-Rate-Limits`).
public enum IngestLimit: String, Sendable, Equatable {
    /// The project's per-second rate limit (`429 rate_limited`).
    case rateLimit = "project:rate_limited"
    /// One of the project's event quotas (`429 quota_reached`).
    case projectQuota = "project:usage_exceeded"
    /// The server's ceiling over every project (`429 quota_reached`).
    case serverCeiling = "organization:usage_exceeded"

    /// True past a quota or the ceiling: its window may last up to a month, and sessions are still accepted.
    public var isQuota: Bool { self != .rateLimit }
}

/// What a report request achieved.
public struct ReportReceipt: Sendable, Equatable {
    /// Newly stored ids.
    public var stored: [EventID]
    /// Ids that were stored by an earlier request (retries): accepted, not stored again.
    public var duplicates: [EventID]
}

/// What a session request achieved.
public struct SessionReceipt: Sendable, Equatable {
    public var applied: Int
    public var unchanged: Int
}

/// What an envelope request achieved.
public struct EnvelopeReceipt: Sendable, Equatable {
    public var stored: [EventID]
    public var duplicates: [EventID]
    public var sessionsApplied: Int
    public var attachments: Int
    /// Set when the event was over the project's rate limit and dropped: seconds until events are accepted.
    public var rateLimitedFor: Int?
    /// Set when the sessions were over the project's session budget and dropped: seconds until sessions are accepted.
    public var sessionsLimitedFor: Int? = nil
    /// With `rateLimitedFor`: which limit refused the event.
    public var limitedBy = IngestLimit.rateLimit
}

/// The ingest use case: admission (disk floor, rate limit, quotas), then one durable group commit.
public struct IngestService: Sendable {
    let committer: GroupCommitter
    let rateLimiter: RateLimiter
    /// Event quotas and the tally of accepted and dropped events (`SpikeGuard`); sessions never pass it.
    public let spikeGuard: SpikeGuard
    let diskGuard: DiskGuard
    let clock: any WallClock
    let telemetry: Telemetry

    public init(
        committer: GroupCommitter, rateLimiter: RateLimiter, diskGuard: DiskGuard, clock: any WallClock,
        telemetry: Telemetry, spikeGuard: SpikeGuard
    ) {
        self.committer = committer
        self.rateLimiter = rateLimiter
        self.spikeGuard = spikeGuard
        self.diskGuard = diskGuard
        self.clock = clock
        self.telemetry = telemetry
    }

    /// Stores `reports` (their raw bytes in `payload`) for `project`; returns once they are durable.
    public func accept(_ reports: [PreparedReport], payload: StoredPayload, for project: Project) async throws
        -> ReportReceipt
    {
        try admit(project, reports: reports.map(\.report))
        let batch = ReportBatch(project: project.id, receivedAt: clock.now(), payload: payload, reports: reports)
        switch try await commit(.reports(batch), count: reports.count) {
        case .reports(let stored, let duplicates):
            telemetry.count(Telemetry.Name.reportsAccepted, by: stored.count)
            telemetry.count(Telemetry.Name.reportsDuplicate, by: duplicates.count)
            return ReportReceipt(stored: stored, duplicates: duplicates)
        default:
            throw IngestError(.storageFailed, "storage answered a report write with another kind of outcome")
        }
    }

    /// Sessions a project may add per second for each report per second of its rate limit
    /// (``Project/rateLimitPerSecond``): sessions outnumber crashes by far, and must keep flowing while a crash storm is
    /// limited, yet one public DSN key must not add sessions without bound (a 189-byte aggregate counted 10,000).
    public static let sessionsPerReport: Double = 100

    /// The `Retry-After` of a `503` while the database cannot be reached: soon, since a restart takes seconds, and
    /// the SDKs keep what they could not send.
    public static let unavailableRetryAfterSeconds = 5

    /// The session budget of `project` per second.
    static func sessionRate(_ project: Project) -> Double { project.rateLimitPerSecond * sessionsPerReport }

    /// Applies session `updates` for `project`; returns once they are durable.
    /// - Throws: `IngestError` `.rateLimited` when their sessions (an aggregate's count each) exceed the project's
    ///   session budget (``sessionsPerReport``), `.diskFull`, `.storageFailed`.
    public func accept(_ updates: [SessionUpdate], for project: Project) async throws -> SessionReceipt {
        try admit(project, reports: [])
        if let wait = admitSessions(updates, for: project) {
            throw IngestError(
                .rateLimited, "project \(project.slug) is over its limit of \(Self.sessionRate(project)) sessions/s",
                retryAfter: wait)
        }
        let batch = SessionBatch(project: project.id, receivedAt: clock.now(), updates: updates)
        switch try await commit(.sessions(batch), count: 0) {
        case .sessions(let applied, let unchanged):
            telemetry.count(Telemetry.Name.sessionsApplied, by: applied)
            return SessionReceipt(applied: applied, unchanged: unchanged)
        default:
            throw IngestError(.storageFailed, "storage answered a session write with another kind of outcome")
        }
    }

    /// Stores what one Sentry envelope carries. Its event (and the event's attachments) pass the project's
    /// rate limit; when they are over it, they are dropped and the receipt says for how long, while the
    /// envelope's sessions and client reports are still stored (crash-free rates keep flowing).
    public func accept(_ envelope: EnvelopeWrite, for project: Project) async throws -> EnvelopeReceipt {
        var envelope = envelope
        var limitedFor: Int?
        var limitedBy = IngestLimit.rateLimit
        if let event = envelope.event {
            do {
                try admit(project, reports: event.reports.map(\.report))
            } catch let error as IngestError where error.code == .rateLimited {
                limitedFor = error.retryAfter ?? 1
                limitedBy = error.limitedBy
                envelope.event = nil
                envelope.attachments = []
            }
        } else {
            try admit(project, reports: [])
        }
        var sessionsLimitedFor: Int?
        if let wait = admitSessions(envelope.sessions, for: project) {
            sessionsLimitedFor = wait
            envelope.sessions = []
        }
        envelope.receivedAt = clock.now()
        if var event = envelope.event {
            event.receivedAt = envelope.receivedAt
            envelope.event = event
        }
        if envelope.event == nil && envelope.sessions.isEmpty && envelope.discarded.isEmpty
            && envelope.attachments.isEmpty
        {
            return EnvelopeReceipt(
                stored: [], duplicates: [], sessionsApplied: 0, attachments: 0, rateLimitedFor: limitedFor,
                sessionsLimitedFor: sessionsLimitedFor, limitedBy: limitedBy)
        }
        switch try await commit(.envelope(envelope), count: envelope.event?.reports.count ?? 0) {
        case .envelope(let stored, let duplicates, let sessions, let attachments):
            telemetry.count(Telemetry.Name.reportsAccepted, by: stored.count)
            telemetry.count(Telemetry.Name.reportsDuplicate, by: duplicates.count)
            telemetry.count(Telemetry.Name.sessionsApplied, by: sessions)
            return EnvelopeReceipt(
                stored: stored, duplicates: duplicates, sessionsApplied: sessions, attachments: attachments,
                rateLimitedFor: limitedFor,
                sessionsLimitedFor: sessionsLimitedFor, limitedBy: limitedBy)
        default:
            throw IngestError(.storageFailed, "storage answered an envelope write with another kind of outcome")
        }
    }

    /// Charges `updates`' sessions to `project`'s session budget; nil when admitted, else whole seconds to wait.
    func admitSessions(_ updates: [SessionUpdate], for project: Project) -> Int? {
        let count = updates.sessionCount
        guard count > 0,
            let wait = rateLimiter.admit(project.id, rate: Self.sessionRate(project), cost: count, budget: .sessions)
        else { return nil }
        telemetry.count(Telemetry.Name.sessionsRateLimited, by: count)
        return Int(min(wait.rounded(.up), 86_400))
    }

    /// Admits `reports` (none for a request of sessions only): the disk floor, the per-second rate limit, then the
    /// quotas (`SpikeGuard`), which tally every event admitted or refused.
    func admit(_ project: Project, reports: [Report]) throws {
        let cost = reports.count
        if let floor = diskGuard.belowFloor() {
            telemetry.rejected(.diskFull, count: cost)
            throw IngestError(.diskFull, floor, retryAfter: diskGuard.retryAfterSeconds)
        }
        // Sessions are charged to their own budget (`admitSessions`) and never to a quota: they are what crash-free
        // rates are made of, so they keep flowing while a crash storm is being limited.
        guard cost > 0 else { return }
        if let wait = rateLimiter.admit(project.id, rate: project.rateLimitPerSecond, cost: cost) {
            telemetry.rejected(.rateLimited, count: cost)
            spikeGuard.countDropped(reports, for: project.id)
            throw IngestError(
                .rateLimited, "project \(project.slug) is over its limit of \(project.rateLimitPerSecond) reports/s",
                retryAfter: Int(wait.rounded(.up)))
        }
        if let refusal = spikeGuard.admit(reports, for: project) {
            telemetry.rejected(.quotaReached, count: cost)
            let whose = refusal.server ? "the server's ceiling" : "project \(project.slug)'s quota"
            var error = IngestError(
                .rateLimited, "\(whose) of \(refusal.quota) events per \(refusal.window.rawValue) is reached",
                retryAfter: refusal.retryAfter)
            error.limitedBy = refusal.server ? .serverCeiling : .projectQuota
            throw error
        }
    }

    func commit(_ write: IngestWrite, count: Int) async throws -> IngestOutcome {
        let outcome: IngestOutcome
        do {
            outcome = try await committer.submit(write)
        } catch {
            if diskGuard.noteFailure(error) {
                telemetry.rejected(.diskFull, count: count)
                throw IngestError(
                    .diskFull, "the disk is full; nothing of the request was stored",
                    retryAfter: diskGuard.retryAfterSeconds)
            }
            if (error as? StorageError)?.code == .unavailable {
                telemetry.rejected(.databaseUnavailable, count: count)
                throw IngestError(.unavailable, "\(error)", retryAfter: Self.unavailableRetryAfterSeconds)
            }
            telemetry.rejected(.storageFailed, count: count)
            throw IngestError(.storageFailed, "the database refused the commit: \(error)")
        }
        if case .failed(let reason) = outcome {
            telemetry.rejected(.storageFailed, count: count)
            throw IngestError(.storageFailed, reason)
        }
        return outcome
    }
}

/// One change of the storage-pressure state, kept until the alert writer has recorded it (`StorageAlertService`).
public struct StorageNotice: Sendable, Equatable {
    /// True on entering the state (`storage_full`), false on leaving it (`storage_ok`).
    public var full: Bool
    /// When the state changed (also the alert's identity: one alert per entry and per leave).
    public var at: Date
    /// Free bytes measured then (nil: not measured, e.g. entered on a write error before any probe).
    public var availableBytes: UInt64?
    public var floorBytes: UInt64
    public init(full: Bool, at: Date, availableBytes: UInt64?, floorBytes: UInt64) {
        self.full = full
        self.at = at
        self.availableBytes = availableBytes
        self.floorBytes = floorBytes
    }
}

/// The server's one storage-pressure state ("the disk is full"), shared by ingest, the HTTP edge and the
/// background writers. Entered when the data folder's file system has less free space than a floor, or on the
/// first write that met a real disk-full error (`noteFailure`); left when free space is back above the floor
/// plus a margin (`StoragePressurePolicy`). One log line on entering, one on leaving; the
/// `faultline_storage_full` gauge is 1 while in it. The probe runs at most once a second far from the floor, and
/// on every check near it or under pressure (`StoragePressurePolicy.measurementLifetime`).
///
/// Ingest is refused at the floor; background writers (`waitWhileFull`) go on down to half the floor and pause
/// below it, or at once after a real disk-full error, so the server's own writes never fill the disk. Each change
/// is kept as a `StorageNotice` for the alert writer (`takeNotices`), and `onEnter` runs (off the caller's
/// thread) on entering: the server truncates the WAL there.
public final class DiskGuard: Sendable {
    struct State {
        var checked: Date?
        var available: UInt64?
        var full = false
        /// A real disk-full error was met since entering: nothing can be written, background writers pause.
        var hardFull = false
        var reason = ""
        var notices = NoticeQueue<StorageNotice>(capacity: DiskGuard.maxNotices)
        /// Times the state was entered since start (retention runs at once on each entry).
        var entries = 0
    }
    let policy: StoragePressurePolicy
    let probe: @Sendable () -> UInt64?
    let clock: any WallClock
    let logger: Logger?
    let telemetry: Telemetry?
    let isDiskFull: @Sendable (any Error) -> Bool
    let onEnter: @Sendable () async -> Void
    let onLeave: @Sendable () async -> Void
    let state = Mutex(State())
    /// Notices kept at most (a disk flapping for days without any write succeeding must not grow memory).
    static let maxNotices = 64
    /// Seconds clients are told to wait (`Retry-After`) while the disk is full.
    public let retryAfterSeconds: Int

    /// - Parameters:
    ///   - floorBytes: refuse writes below this many free bytes (0: only a real disk-full error enters the state).
    ///   - marginBytes: free bytes above the floor needed to leave the state (default: a quarter of the floor, ≥ 4 MiB).
    ///   - isDiskFull: whether a storage error is a full disk (SQLITE_FULL, ENOSPC); from the Storage module.
    ///   - onEnter: run in a detached task on each entry (e.g. a WAL checkpoint that gives the WAL's space back).
    ///   - onLeave: run in a detached task on each leave (e.g. the WAL's usual size again).
    ///   - probe: returns the free bytes of the data folder's file system.
    public init(
        floorBytes: UInt64, marginBytes: UInt64? = nil, clock: any WallClock, logger: Logger? = nil,
        telemetry: Telemetry? = nil, retryAfterSeconds: Int = 30,
        isDiskFull: @escaping @Sendable (any Error) -> Bool = { _ in false },
        onEnter: @escaping @Sendable () async -> Void = {},
        onLeave: @escaping @Sendable () async -> Void = {},
        probe: @escaping @Sendable () -> UInt64?
    ) {
        policy = StoragePressurePolicy(
            floorBytes: floorBytes,
            marginBytes: marginBytes ?? StoragePressurePolicy.defaultMargin(floorBytes: floorBytes))
        self.probe = probe
        self.clock = clock
        self.logger = logger
        self.telemetry = telemetry
        self.isDiskFull = isDiskFull
        self.onEnter = onEnter
        self.onLeave = onLeave
        self.retryAfterSeconds = retryAfterSeconds
        telemetry?.gauge(Telemetry.Name.storageFull, 0)
    }

    /// Measures (at most once a second) and returns the state; the change, if any, is announced.
    func refreshed() -> State {
        let now = clock.now()
        let (snapshot, change) = state.withLock { (state: inout State) -> (State, Bool?) in
            let lifetime = policy.measurementLifetime(available: state.available, full: state.full)
            let fresh = state.checked.map { now.timeIntervalSince($0) < lifetime && $0 <= now } ?? false
            if !fresh && (state.full || policy.floorBytes > 0) {
                state.checked = now
                state.available = probe()
                let full = policy.isFull(wasFull: state.full, available: state.available)
                if full != state.full {
                    state.full = full
                    if full { state.reason = "free space below the floor" } else { state.hardFull = false }
                    record(&state, full: full, at: now)
                    return (state, full)
                }
            }
            return (state, nil)
        }
        if let change { announce(full: change) }
        return snapshot
    }

    /// A message when the server is under storage pressure; nil when writes may proceed.
    public func belowFloor() -> String? {
        let snapshot = refreshed()
        return snapshot.full ? describe(snapshot) : nil
    }

    /// How many times the state was entered since start, measured now (a change is an entry since last looked).
    public var entries: Int { refreshed().entries }

    /// Whether the server is under storage pressure now (ingest is refused).
    public var isFull: Bool { belowFloor() != nil }

    /// Whether background writers must pause now: under pressure and below their reserve (half the floor), or
    /// after a real disk-full error (`StoragePressurePolicy.backgroundPaused`).
    public var backgroundPaused: Bool {
        let snapshot = refreshed()
        return policy.backgroundPaused(full: snapshot.full, hardFull: snapshot.hardFull, available: snapshot.available)
    }

    /// Returns once background writers may write (at once when they may), checking every `poll`; background
    /// writers call it at the top of each step, so they pause instead of failing in a loop. Under pressure they may
    /// still go on down to half the floor, so that the work on what was accepted completes.
    public func waitWhileFull(poll: Duration = .seconds(1)) async {
        while !Self.stopping && backgroundPaused {
            try? await Task.sleep(for: poll)
        }
    }

    /// Returns once writes can succeed: only after a real disk-full error (`hardFull`) or while free space is
    /// unknown under pressure does this wait. For the webhook outbox, whose writes are a row update per delivery
    /// (the WAL kept small under pressure): the operator's `storage_full` message goes out while ingest is refused.
    public func waitWhileWritesFail(poll: Duration = .seconds(1)) async {
        while !Self.stopping {
            let snapshot = refreshed()
            guard snapshot.full, snapshot.hardFull || snapshot.available == nil else { return }
            try? await Task.sleep(for: poll)
        }
    }

    /// Returns once ingest is no longer refused (the state was left), checking every `poll`.
    public func waitUntilSpace(poll: Duration = .seconds(1)) async {
        while !Self.stopping && isFull {
            try? await Task.sleep(for: poll)
        }
    }

    /// The waits return when the task is cancelled or the server shuts down gracefully: a writer paused on a full
    /// disk must not hold up SIGTERM (the caller's loop then sees the same and ends).
    static var stopping: Bool { Task.isCancelled || Task.isShuttingDownGracefully }

    /// Enters the state when `error` is a full disk (the first one logs); returns whether it was one. Background
    /// writers pause from then until the state is left.
    @discardableResult
    public func noteFailure(_ error: any Error) -> Bool {
        guard isDiskFull(error) else { return false }
        let now = clock.now()
        let entered = state.withLock { (state: inout State) -> Bool in
            // The next measurement is at least a second away: the write that just failed is the fresher news.
            state.checked = now
            state.hardFull = true
            guard !state.full else { return false }
            state.full = true
            state.reason = "a write failed: the disk is full"
            record(&state, full: true, at: now)
            return true
        }
        if entered { announce(full: true) }
        return true
    }

    /// The changes not yet recorded as alerts, oldest first; the caller gives back what it could not write
    /// (`keepNotices`).
    public func takeNotices() -> [StorageNotice] {
        state.withLock { $0.notices.take() }
    }

    /// Puts back notices `takeNotices` returned that could not be recorded (before any newer ones).
    public func keepNotices(_ notices: [StorageNotice]) {
        state.withLock { $0.notices.giveBack(notices) }
    }

    func record(_ state: inout State, full: Bool, at date: Date) {
        if full { state.entries &+= 1 }
        state.notices.append(
            StorageNotice(full: full, at: date, availableBytes: state.available, floorBytes: policy.floorBytes))
    }

    func describe(_ state: State) -> String {
        let free = state.available.map { "\($0 / 1_048_576) MiB free" } ?? "free space unknown"
        return "the data folder's disk is full (\(state.reason); \(free), floor \(policy.floorBytes / 1_048_576) MiB)"
    }

    func announce(full: Bool) {
        telemetry?.gauge(Telemetry.Name.storageFull, full ? 1 : 0)
        let snapshot = state.withLock { $0 }
        let metadata: Logger.Metadata = [
            Telemetry.LogKey.freeBytes: "\(snapshot.available.map(String.init) ?? "unknown")",
            Telemetry.LogKey.floorBytes: "\(policy.floorBytes)",
        ]
        if full {
            logger?.error(
                "storage full: ingest answers 507, background writers keep half the floor then pause (\(snapshot.reason))",
                metadata: metadata)
            let onEnter = onEnter
            Task.detached { await onEnter() }
        } else {
            logger?.notice("storage full no more: ingest and background writers resume", metadata: metadata)
            let onLeave = onLeave
            Task.detached { await onLeave() }
        }
    }
}

/// The ingest use case as the HTTP edge sees it (a protocol so controllers can be tested with fakes).
public protocol ReportIngesting: Sendable {
    func accept(_ reports: [PreparedReport], payload: StoredPayload, for project: Project) async throws -> ReportReceipt
    func accept(_ updates: [SessionUpdate], for project: Project) async throws -> SessionReceipt
    func accept(_ envelope: EnvelopeWrite, for project: Project) async throws -> EnvelopeReceipt
}

extension IngestService: ReportIngesting {}
