import FaultlineCore
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
        /// The data folder's disk is below its free-space floor; retry later (503).
        case diskFull
        /// Storage failed; nothing of the request was stored (500, message not echoed).
        case storageFailed
    }
    public var code: Code
    public var message: String
    public var retryAfter: Int?
    public init(_ code: Code, _ message: String, retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.retryAfter = retryAfter
    }
    public var description: String { "\(code.rawValue): \(message)" }
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
}

/// The ingest use case: admission (disk floor, rate limit), then one durable group commit.
public struct IngestService: Sendable {
    let committer: GroupCommitter
    let rateLimiter: RateLimiter
    let diskGuard: DiskGuard
    let clock: any WallClock
    let telemetry: Telemetry

    public init(committer: GroupCommitter, rateLimiter: RateLimiter, diskGuard: DiskGuard, clock: any WallClock,
                telemetry: Telemetry) {
        self.committer = committer
        self.rateLimiter = rateLimiter
        self.diskGuard = diskGuard
        self.clock = clock
        self.telemetry = telemetry
    }

    /// Stores `reports` (their raw bytes in `payload`) for `project`; returns once they are durable.
    public func accept(_ reports: [PreparedReport], payload: StoredPayload, for project: Project) async throws -> ReportReceipt {
        try admit(project, cost: reports.count)
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

    /// Applies session `updates` for `project`; returns once they are durable.
    public func accept(_ updates: [SessionUpdate], for project: Project) async throws -> SessionReceipt {
        try admit(project, cost: 0)
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
        if envelope.event != nil {
            do {
                try admit(project, cost: envelope.event?.reports.count ?? 0)
            } catch let error as IngestError where error.code == .rateLimited {
                limitedFor = error.retryAfter ?? 1
                envelope.event = nil
                envelope.attachments = []
            }
        } else {
            try admit(project, cost: 0)
        }
        envelope.receivedAt = clock.now()
        if var event = envelope.event {
            event.receivedAt = envelope.receivedAt
            envelope.event = event
        }
        if envelope.event == nil && envelope.sessions.isEmpty && envelope.discarded.isEmpty && envelope.attachments.isEmpty {
            return EnvelopeReceipt(stored: [], duplicates: [], sessionsApplied: 0, attachments: 0, rateLimitedFor: limitedFor)
        }
        switch try await commit(.envelope(envelope), count: envelope.event?.reports.count ?? 0) {
        case .envelope(let stored, let duplicates, let sessions, let attachments):
            telemetry.count(Telemetry.Name.reportsAccepted, by: stored.count)
            telemetry.count(Telemetry.Name.reportsDuplicate, by: duplicates.count)
            telemetry.count(Telemetry.Name.sessionsApplied, by: sessions)
            return EnvelopeReceipt(
                stored: stored, duplicates: duplicates, sessionsApplied: sessions, attachments: attachments, rateLimitedFor: limitedFor)
        default:
            throw IngestError(.storageFailed, "storage answered an envelope write with another kind of outcome")
        }
    }

    func admit(_ project: Project, cost: Int) throws {
        if let floor = diskGuard.belowFloor() {
            telemetry.rejected(.diskFull, count: cost)
            throw IngestError(.diskFull, floor, retryAfter: 60)
        }
        // Sessions cost nothing: they are what crash-free rates are made of, so they keep flowing while
        // a crash storm is being limited.
        if cost > 0, let wait = rateLimiter.admit(project.id, rate: project.rateLimitPerSecond, cost: cost) {
            telemetry.rejected(.rateLimited, count: cost)
            throw IngestError(
                .rateLimited, "project \(project.slug) is over its limit of \(project.rateLimitPerSecond) reports/s",
                retryAfter: Int(wait.rounded(.up)))
        }
    }

    func commit(_ write: IngestWrite, count: Int) async throws -> IngestOutcome {
        let outcome: IngestOutcome
        do {
            outcome = try await committer.submit(write)
        } catch {
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

/// Refuses writes while the data folder's disk has less free space than a floor, so that SQLite never
/// meets a full disk mid-transaction. The probe runs at most once a second.
public final class DiskGuard: Sendable {
    let floorBytes: UInt64
    let probe: @Sendable () -> UInt64?
    let clock: any WallClock
    let cached = Mutex<(checked: Date, available: UInt64?)?>(nil)

    /// - Parameters:
    ///   - floorBytes: refuse writes below this many free bytes (0 disables the check).
    ///   - probe: returns the free bytes of the data folder's file system.
    public init(floorBytes: UInt64, clock: any WallClock, probe: @escaping @Sendable () -> UInt64?) {
        self.floorBytes = floorBytes
        self.probe = probe
        self.clock = clock
    }

    /// A message when free space is below the floor; nil when writes may proceed.
    public func belowFloor() -> String? {
        guard floorBytes > 0 else { return nil }
        let now = clock.now()
        let available: UInt64? = cached.withLock { state in
            if let state, now.timeIntervalSince(state.checked) < 1 { return state.available }
            let fresh = probe()
            state = (now, fresh)
            return fresh
        }
        guard let available, available < floorBytes else { return nil }
        return "the data folder has \(available / 1_048_576) MiB free, below the floor of \(floorBytes / 1_048_576) MiB"
    }
}

/// The ingest use case as the HTTP edge sees it (a protocol so controllers can be tested with fakes).
public protocol ReportIngesting: Sendable {
    func accept(_ reports: [PreparedReport], payload: StoredPayload, for project: Project) async throws -> ReportReceipt
    func accept(_ updates: [SessionUpdate], for project: Project) async throws -> SessionReceipt
    func accept(_ envelope: EnvelopeWrite, for project: Project) async throws -> EnvelopeReceipt
}

extension IngestService: ReportIngesting {}
