import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Spike protection that still counts: each project's event quotas per minute, hour and month, and the server's
/// ceiling, decided by ``QuotaPolicy`` on counters kept in memory; every event it admits or refuses is tallied per
/// project, day and release (and, for a refused event, its issue fingerprint when the client sent one), and the
/// tally is added to the database by ``QuotaFlushService`` every few seconds. Sessions never come here.
///
/// Cheap by design: one mutex, a few dictionary updates per request, no database work on the refusing path, so a
/// burst is answered at memory speed. What is lost on a crash is at most one flush interval of tallies (never an
/// event: a refused event was never acknowledged).
///
/// Several nodes sharing one PostgreSQL database each count in memory and enforce `share()` of each quota (1 ÷ the
/// live nodes, as ``RateLimiter`` does): with a balancer spreading a project's requests evenly, the project gets
/// about its quota in all. The tallies are additive upserts, so their sums are exact whatever the node count; the
/// quota alert's dedupe key names the window, so it is recorded once however many nodes refused in it.
///
/// After a restart the minute and hour windows start empty, which errs on the side of accepting (as the token buckets
/// do); the month's counters start from the accepted events stored this month (``restoreMonth(_:at:)``).
public final class SpikeGuard: Sendable {
    /// Why a request's events were refused.
    public struct Refusal: Sendable, Equatable {
        public var window: QuotaWindow
        /// Whole seconds until the window ends.
        public var retryAfter: Int
        /// True when the server's ceiling refused, not the project's quota.
        public var server: Bool
        /// The quota (or ceiling) of the window, before the node's share.
        public var quota: Int

        public init(window: QuotaWindow, retryAfter: Int, server: Bool, quota: Int) {
            self.window = window
            self.retryAfter = retryAfter
            self.server = server
            self.quota = quota
        }
    }

    /// One quota reached, kept until the alert writer records it.
    public struct Notice: Sendable, Equatable, Hashable {
        public var project: ProjectID
        public var window: QuotaWindow
        public var windowStart: Int64
        public var quota: Int
        public var retryAfter: Int
        public var server: Bool
    }

    struct TallyKey: Hashable {
        var project: ProjectID
        var day: DayNumber
        var release: String
        var fingerprint: Fingerprint?
    }

    struct State {
        var projects: [ProjectID: QuotaCounts] = [:]
        var server = QuotaCounts()
        var tally: [TallyKey: (accepted: Int, dropped: Int)] = [:]
        /// Windows already announced (pruned once they have passed).
        var announced: Set<Notice> = []
        var notices = NoticeQueue<Notice>(capacity: SpikeGuard.maxNotices)
        /// The fingerprints tallied per project and day: a hostile client sending a new fingerprint with every event
        /// must not grow the table without bound; past ``maxFingerprintsPerDay`` a dropped event counts by release.
        var fingerprints: [ProjectID: (day: DayNumber, seen: Set<Fingerprint>)] = [:]
    }

    /// Distinct fingerprints tallied per project and day; more fall back to the release alone.
    public static let maxFingerprintsPerDay = 1000
    /// Tally rows kept in memory at most between flushes (rows beyond it fall back to the release alone; a database
    /// that stays away does not grow memory without bound: past twice this, new keys are not counted).
    public static let maxTallyKeys = 10_000
    /// Notices kept at most for the alert writer (`NoticeQueue`: past it the oldest go).
    static let maxNotices = 256

    let clock: any WallClock
    /// The server-wide ceiling (`faultline serve --events-per-minute …`), over every project together.
    public let ceiling: EventQuotas
    let share: @Sendable () -> Double
    let state = Mutex(State())

    public init(
        clock: any WallClock, ceiling: EventQuotas = EventQuotas(), share: @escaping @Sendable () -> Double = { 1 }
    ) {
        self.clock = clock
        self.ceiling = ceiling
        self.share = share
    }

    /// Admits `reports` of `project` whole, or refuses them whole, and tallies them either way.
    /// - Returns: nil when admitted; else why they were refused.
    public func admit(_ reports: [Report], for project: Project) -> Refusal? {
        guard !reports.isEmpty else { return nil }
        let now = clock.now()
        let part = share()
        let releases = reports.map { $0.release ?? "" }  // parsed outside the lock
        return state.withLock { state in
            var counts = state.projects[project.id] ?? QuotaCounts()
            var server = state.server
            var refusal: Refusal?
            var start: Int64 = 0
            if case .refuse(let window, let wait, let windowStart) = QuotaPolicy.decide(
                project.quotas, counts: &counts, cost: reports.count, at: now, share: part)
            {
                refusal = Refusal(window: window, retryAfter: wait, server: false, quota: project.quotas[window] ?? 0)
                start = windowStart
            } else if case .refuse(let window, let wait, let windowStart) = QuotaPolicy.decide(
                ceiling, counts: &server, cost: reports.count, at: now, share: part)
            {
                refusal = Refusal(window: window, retryAfter: wait, server: true, quota: ceiling[window] ?? 0)
                start = windowStart
            }
            if let refusal {
                Self.tally(reports, releases, of: project.id, at: now, accepted: false, &state)
                Self.announce(
                    Notice(
                        project: project.id, window: refusal.window, windowStart: start, quota: refusal.quota,
                        retryAfter: refusal.retryAfter, server: refusal.server), at: now, &state)
            } else {
                if !project.quotas.isEmpty { state.projects[project.id] = counts }
                if !ceiling.isEmpty { state.server = server }
                Self.tally(reports, releases, of: project.id, at: now, accepted: true, &state)
            }
            return refusal
        }
    }

    /// Tallies `reports` of `project` as dropped by another guard (the per-second rate limit), so that every event
    /// refused is counted.
    public func countDropped(_ reports: [Report], for project: ProjectID) {
        let now = clock.now()
        let releases = reports.map { $0.release ?? "" }
        state.withLock { Self.tally(reports, releases, of: project, at: now, accepted: false, &$0) }
    }

    /// The tally since the last take, as rows to add to the database; the tally is emptied.
    public func takeCounts() -> [QuotaCount] {
        let tally = state.withLock { state in
            defer { state.tally = [:] }
            return state.tally
        }
        return tally.map { key, value in
            QuotaCount(
                project: key.project, day: key.day, release: key.release, fingerprint: key.fingerprint,
                accepted: value.accepted, dropped: value.dropped)
        }
    }

    /// Puts back counts whose write failed, to be added with the next flush.
    public func keep(_ counts: [QuotaCount]) {
        state.withLock { state in
            for count in counts {
                let key = TallyKey(
                    project: count.project, day: count.day, release: count.release, fingerprint: count.fingerprint)
                let old = state.tally[key] ?? (0, 0)
                state.tally[key] = (old.accepted &+ count.accepted, old.dropped &+ count.dropped)
            }
        }
    }

    /// Adds what the database holds of this month's accepted events (`accepted`, per project; read before this run's
    /// first flush) to the month's counters, so that a restart does not give a project its month's quota again. Each
    /// node counts its share of a quota, so it takes its share of the stored count (the counts of every node). The
    /// server's ceiling takes the sum of all projects the same way.
    public func restoreMonth(_ accepted: [ProjectID: Int], at now: Date) {
        let second = QuotaWindow.second(now)
        let part = share()
        let fraction = part.isFinite && part > 0 && part <= 1 ? part : 1
        let mine = { (stored: Int) in Int((Double(max(stored, 0)) * fraction).rounded(.down)) }
        state.withLock { state in
            var all = 0
            for (project, stored) in accepted {
                state.projects[project, default: QuotaCounts()].addToMonth(mine(stored), at: second)
                let (sum, overflow) = all.addingReportingOverflow(max(stored, 0))
                all = overflow ? .max : sum
            }
            state.server.addToMonth(mine(all), at: second)
        }
    }

    /// The quotas reached since the last take.
    public func takeNotices() -> [Notice] {
        state.withLock { $0.notices.take() }
    }

    /// Puts back notices whose alert could not be written.
    public func keepNotices(_ notices: [Notice]) {
        state.withLock { $0.notices.giveBack(notices) }
    }

    /// Counts `reports` (of `releases`, one each) under their day and release, and a dropped one under its fingerprint
    /// when the request gives it (hashed only then: an accepted event's issue counts it).
    static func tally(
        _ reports: [Report], _ releases: [String], of project: ProjectID, at now: Date, accepted: Bool,
        _ state: inout State
    ) {
        let day = DayNumber(now)
        for (report, release) in zip(reports, releases) {
            var fingerprint = accepted ? nil : QuotaCount.cheapFingerprint(report)
            if let known = fingerprint {
                var seen = state.fingerprints[project].flatMap { $0.day == day ? $0.seen : nil } ?? []
                if !seen.contains(known) {
                    if seen.count < maxFingerprintsPerDay {
                        seen.insert(known)
                    } else {
                        fingerprint = nil
                    }
                }
                state.fingerprints[project] = (day, seen)
            }
            var key = TallyKey(project: project, day: day, release: release, fingerprint: fingerprint)
            if state.tally[key] == nil && state.tally.count >= maxTallyKeys {
                key.fingerprint = nil
                if state.tally[key] == nil && state.tally.count >= 2 * maxTallyKeys { continue }
            }
            let old = state.tally[key] ?? (0, 0)
            state.tally[key] = accepted ? (old.accepted &+ 1, old.dropped) : (old.accepted, old.dropped &+ 1)
        }
    }

    static func announce(_ notice: Notice, at now: Date, _ state: inout State) {
        let second = QuotaWindow.second(now)
        var key = notice
        key.retryAfter = 0  // one notice per window, whatever the wait said
        guard !state.announced.contains(key) else { return }
        state.announced = state.announced.filter { $0.window.end(ofWindowStartingAt: $0.windowStart) > second }
        state.announced.insert(key)
        state.notices.append(notice)
    }
}
