import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// The spike guard (`SpikeGuard`): quotas decided on in-memory counters with an injected clock, every event tallied
/// accepted or dropped by day, release and (dropped, when the client sent one) fingerprint, and a quota reached
/// announced once per window.
@Suite struct SpikeGuardTests {
    /// 2026-11-29T10:00:05Z: five seconds into a minute and an hour.
    static let start = Date(timeIntervalSince1970: 1_795_860_005)

    static func project(_ id: Int64 = 1, quotas: EventQuotas) -> Project {
        Project(
            id: ProjectID(id), slug: ProjectSlug("p\(id)")!, createdAt: start, rateLimitPerSecond: 1000,
            quotas: quotas)
    }

    static func reports(_ count: Int, release: String = "2.0", fingerprint: [String]? = nil) -> [Report] {
        (0..<count).map { n in
            Report(
                eventID: EventID(String(format: "%032x", n))!, kind: .crash, timestamp: start,
                app: AppInfo(version: release), fingerprint: fingerprint)
        }
    }

    func clock() -> ManualClock {
        let clock = ManualClock()
        clock.current.withLock { $0 = Self.start }
        return clock
    }

    @Test func refusesPastTheQuotaAndCountsEveryEvent() {
        let clock = clock()
        let guarder = SpikeGuard(clock: clock)
        let project = Self.project(quotas: EventQuotas(perMinute: 10))
        // Given 10 events admitted in the minute
        #expect(guarder.admit(Self.reports(4), for: project) == nil)
        #expect(guarder.admit(Self.reports(6), for: project) == nil)
        // When 3 more come, one with a client fingerprint batch and one without
        let refusal = guarder.admit(Self.reports(2, fingerprint: ["db-timeout"]), for: project)
        #expect(refusal == SpikeGuard.Refusal(window: .minute, retryAfter: 55, server: false, quota: 10))
        #expect(guarder.admit(Self.reports(1), for: project) != nil)
        // Then the tally says 10 accepted, 3 dropped, 2 of them under the fingerprint
        let day = DayNumber(Self.start)
        let fingerprint = Grouping.fingerprint(kind: .crash, source: .client, components: ["db-timeout"])
        #expect(
            Set(guarder.takeCounts()) == [
                QuotaCount(project: project.id, day: day, release: "2.0", accepted: 10, dropped: 1),
                QuotaCount(project: project.id, day: day, release: "2.0", fingerprint: fingerprint, dropped: 2),
            ])
        // and a take empties it.
        #expect(guarder.takeCounts().isEmpty)
        // The next minute admits again.
        clock.advance(55)
        #expect(guarder.admit(Self.reports(10), for: project) == nil)
    }

    @Test func aQuotaReachedIsAnnouncedOncePerWindow() {
        let clock = clock()
        let guarder = SpikeGuard(clock: clock)
        let project = Self.project(quotas: EventQuotas(perMinute: 1))
        #expect(guarder.admit(Self.reports(1), for: project) == nil)
        for _ in 0..<50 { _ = guarder.admit(Self.reports(1), for: project) }
        let notices = guarder.takeNotices()
        #expect(notices.count == 1)
        #expect(notices.first?.window == .minute)
        #expect(notices.first?.windowStart == 1_795_860_000)
        #expect(notices.first?.quota == 1)
        #expect(guarder.takeNotices().isEmpty)
        // A notice whose alert could not be written is kept, not announced twice.
        guarder.keepNotices(notices)
        _ = guarder.admit(Self.reports(1), for: project)
        #expect(guarder.takeNotices() == notices)
        // The next window is a new notice.
        clock.advance(60)
        #expect(guarder.admit(Self.reports(1), for: project) == nil)
        _ = guarder.admit(Self.reports(1), for: project)
        #expect(guarder.takeNotices().map(\.windowStart) == [1_795_860_060])
    }

    @Test func theServerCeilingCoversEveryProjectTogether() {
        let clock = clock()
        let guarder = SpikeGuard(clock: clock, ceiling: EventQuotas(perMinute: 5))
        let a = Self.project(1, quotas: EventQuotas())
        let b = Self.project(2, quotas: EventQuotas(perMinute: 100))
        #expect(guarder.admit(Self.reports(3), for: a) == nil)
        #expect(guarder.admit(Self.reports(2), for: b) == nil)
        let refusal = guarder.admit(Self.reports(1), for: b)
        #expect(refusal?.server == true)
        #expect(refusal?.quota == 5)
        // Refused by the ceiling, the project's own quota was not charged: b has admitted 2, not 3.
        clock.advance(60)
        #expect(guarder.admit(Self.reports(5), for: b) == nil)
        #expect(guarder.takeNotices().map(\.server) == [true])
    }

    @Test func eachNodeEnforcesItsShare() {
        let nodes = Mutex(4.0)
        let guarder = SpikeGuard(clock: clock(), share: { 1 / nodes.withLock { $0 } })
        let project = Self.project(quotas: EventQuotas(perMinute: 100))
        #expect(guarder.admit(Self.reports(25), for: project) == nil)
        #expect(guarder.admit(Self.reports(1), for: project) != nil)
        nodes.withLock { $0 = 1 }
        #expect(guarder.admit(Self.reports(75), for: project) == nil)
    }

    @Test func eventsDroppedElsewhereAndKeptCountsAreTallied() {
        let guarder = SpikeGuard(clock: clock())
        let project = Self.project(quotas: EventQuotas())
        // No quota: admitted and counted.
        #expect(guarder.admit(Self.reports(3, release: "1.0"), for: project) == nil)
        // Refused by the per-second rate limit: counted as dropped.
        guarder.countDropped(Self.reports(2, release: "1.0"), for: project.id)
        let counts = guarder.takeCounts()
        #expect(counts.map(\.accepted).reduce(0, +) == 3)
        #expect(counts.map(\.dropped).reduce(0, +) == 2)
        // A failed flush puts them back; the next take has them with what came since.
        guarder.keep(counts)
        #expect(guarder.admit(Self.reports(1, release: "1.0"), for: project) == nil)
        #expect(
            guarder.takeCounts() == [
                QuotaCount(project: project.id, day: DayNumber(Self.start), release: "1.0", accepted: 4, dropped: 2)
            ])
    }

    @Test func fingerprintsPerDayAreBounded() {
        let guarder = SpikeGuard(clock: clock())
        let project = Self.project(quotas: EventQuotas(perMinute: 1))
        #expect(guarder.admit(Self.reports(1), for: project) == nil)
        // A hostile client sends a new fingerprint with every event.
        for n in 0..<(SpikeGuard.maxFingerprintsPerDay + 50) {
            _ = guarder.admit(Self.reports(1, fingerprint: ["f\(n)"]), for: project)
        }
        let counts = guarder.takeCounts()
        #expect(counts.filter { $0.fingerprint != nil }.count == SpikeGuard.maxFingerprintsPerDay)
        #expect(counts.first { $0.fingerprint == nil }?.dropped == 50)
        #expect(counts.map(\.dropped).reduce(0, +) == SpikeGuard.maxFingerprintsPerDay + 50)
    }

    @Test func aRestartedGuardStartsTheMonthFromTheStoredCount() {
        let clock = clock()
        let project = Self.project(quotas: EventQuotas(perMonth: 100))
        let other = Self.project(2, quotas: EventQuotas())
        // Given a restarted guard, 97 events of the project already accepted this month (by every node)
        let guarder = SpikeGuard(clock: clock, ceiling: EventQuotas(perMonth: 1000))
        #expect(guarder.admit(Self.reports(1), for: project) == nil)  // admitted before the counts were read back
        guarder.restoreMonth([project.id: 97, other.id: 900], at: Self.start)
        // Then 2 more fit its month (97 + 1 + 2 = 100), the next is refused until the month ends
        #expect(guarder.admit(Self.reports(2), for: project) == nil)
        let refusal = guarder.admit(Self.reports(1), for: project)
        #expect(refusal?.window == .month)
        #expect(refusal?.server == false)
        // and the server's ceiling counts every project's (997 + 1 + 2 of 1000): the other project gets 0 more
        #expect(guarder.admit(Self.reports(1), for: other)?.server == true)
        // Next month starts empty.
        clock.advance(3 * 86_400)
        #expect(guarder.admit(Self.reports(50), for: project) == nil)
    }

    @Test func aNodeRestoresItsShareOfTheMonth() {
        let project = Self.project(quotas: EventQuotas(perMonth: 100))
        // Two nodes: each enforces 50 of the 100, and takes half of the 90 stored.
        let guarder = SpikeGuard(clock: clock(), share: { 0.5 })
        guarder.restoreMonth([project.id: 90], at: Self.start)
        #expect(guarder.admit(Self.reports(5), for: project) == nil)
        #expect(guarder.admit(Self.reports(1), for: project)?.window == .month)
    }
}
