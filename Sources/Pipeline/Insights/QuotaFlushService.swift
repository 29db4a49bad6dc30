import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Writes what the `SpikeGuard` counted: every `interval` its tally of accepted and dropped events is added to the
/// database (`QuotaCountStore`, one transaction), and each quota reached becomes a `quota_reached` alert, handed to
/// the webhook outbox at once. Once more on shutdown, so a graceful stop loses no count.
///
/// A failed write keeps the tally and the notices for the next step (the guard bounds what it keeps). The alert's
/// dedupe key names the window, so a retried or a second node's notice records nothing twice. At start the month's
/// accepted events are read back from the database first (``restoreMonth()``), so a restart keeps the month's quota.
public struct QuotaFlushService: Service {
    let spikeGuard: SpikeGuard
    let store: any QuotaCountStore
    let alerts: AlertService
    let clock: any WallClock
    let logger: Logger
    let interval: Duration
    /// The storage-pressure state: below the disk floor the tally stays in memory (the guard bounds it) and is written
    /// once the disk has room again.
    public let storage: DiskGuard?

    public init(
        spikeGuard: SpikeGuard, store: any QuotaCountStore, alerts: AlertService, clock: any WallClock,
        logger: Logger, interval: Duration = .seconds(2), storage: DiskGuard? = nil
    ) {
        self.storage = storage
        self.spikeGuard = spikeGuard
        self.store = store
        self.alerts = alerts
        self.clock = clock
        self.logger = logger
        self.interval = interval
    }

    /// Adds the tally to the database and records the quota alerts; returns the rows added and the alerts recorded.
    @discardableResult
    public func step() async throws -> (counts: Int, alerts: Int) {
        let counts = spikeGuard.takeCounts()
        do {
            try await store.addQuotaCounts(counts, at: clock.now())
        } catch {
            spikeGuard.keep(counts)
            throw error
        }
        let notices = spikeGuard.takeNotices()
        var recorded = 0
        do {
            for notice in notices {
                let draft = QuotaAlerts.draft(
                    project: notice.project, window: notice.window, windowStart: notice.windowStart,
                    quota: notice.quota, retryAfter: notice.retryAfter, server: notice.server)
                if try await alerts.store.record(draft, at: clock.now()) { recorded += 1 }
            }
        } catch {
            spikeGuard.keepNotices(notices)
            throw error
        }
        if recorded > 0 {
            alerts.telemetry?.count(Telemetry.Name.alerts, by: recorded)
            try await alerts.dispatch(now: clock.now())
        }
        if recorded > 0 || counts.contains(where: { $0.dropped > 0 }) { alerts.onChange() }
        return (counts.count, recorded)
    }

    /// Gives the guard this month's accepted events from the database (what this node and the others counted before
    /// a restart), so that a restart does not give a project its month's quota again. Called once, before the first
    /// flush adds this run's counts to the same rows; returns the projects restored.
    @discardableResult
    public func restoreMonth() async throws -> Int {
        let now = clock.now()
        let accepted = try await store.acceptedEvents(from: QuotaWindow.firstDayOfMonth(now))
        spikeGuard.restoreMonth(accepted, at: now)
        return accepted.count
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            // Nothing of this run is flushed before the month is read back: it would be read back too, and counted twice.
            var restored = await restoreMonthLogging()
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if !restored { restored = await restoreMonthLogging() }
                if restored { await flush() }
            }
        }
        await flush()  // the last counts of a graceful stop
    }

    /// ``restoreMonth()``, a failure logged (the tally waits in memory, bounded by the guard, for the next try).
    func restoreMonthLogging() async -> Bool {
        do {
            try await restoreMonth()
            return true
        } catch {
            logger.error("reading this month's quota counts failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            return false
        }
    }

    func flush() async {
        guard storage?.belowFloor() == nil else { return }
        do {
            try await step()
        } catch {
            logger.error("quota count flush failed", metadata: [Telemetry.LogKey.error: "\(error)"])
        }
    }
}
