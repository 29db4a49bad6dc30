import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Prunes raw reports and sessions older than `days` (default 90), in small batches, every `interval`, and gives
/// the space back to the file system. Each issue keeps a few sample reports (`samples`: its first, its latest, one a
/// release, under a per-project cap), so an old issue's page is never empty. Issue and health counters were counted on
/// arrival and stay exact; the issues that lost reports are marked changed, so `onChange` renders their pages again.
/// Quota counts kept per fingerprint are folded into their day's totals past the same period (`QuotaCountKeep`).
///
/// A relief valve for a full disk (issue #15): on each entry into the storage-pressure state a pass runs at once
/// instead of waiting for the next `interval`, and it runs under pressure (deleting is what frees space); only
/// after a real disk-full error does it wait. Only what is past the retention period goes, oldest first, never a
/// report inside it.
public struct RetentionService: Service {
    let store: any RetentionStore
    let clock: any WallClock
    let days: Int
    let samples: RetentionSamplePolicy
    let logger: Logger
    let telemetry: Telemetry?
    let interval: Duration
    let onChange: @Sendable () -> Void

    public init(
        store: any RetentionStore, clock: any WallClock, days: Int = 90,
        samples: RetentionSamplePolicy = RetentionSamplePolicy(), logger: Logger, telemetry: Telemetry? = nil,
        interval: Duration = .seconds(3600), onChange: @escaping @Sendable () -> Void = {}, storage: DiskGuard? = nil,
        pressurePoll: Duration = .seconds(1)
    ) {
        self.storage = storage
        self.pressurePoll = pressurePoll
        self.store = store
        self.clock = clock
        self.days = max(1, days)
        self.samples = samples
        self.logger = logger
        self.telemetry = telemetry
        self.interval = interval
        self.onChange = onChange
    }

    /// Prunes everything older than `days` before `now`; returns what was removed.
    @discardableResult
    public func step(now: Date) async throws -> PruneResult {
        let cutoff = now.addingTimeInterval(-Double(days) * 86_400)
        var total = PruneResult()
        while true {
            let result = try await store.prune(before: cutoff, limit: 500, now: now, samples: samples)
            total.reports += result.reports
            total.sessions += result.sessions
            total.attachments += result.attachments
            total.kept += result.kept
            if result.isEmpty { break }
            await Task.yield()
        }
        // Quota counts kept per fingerprint stand beside the reports: past the same period they join their day's total.
        let folded = try await store.foldQuotaCounts(
            before: QuotaCountKeep.firstFingerprintDay(retentionDays: days, now: now))
        telemetry?.count(Telemetry.Name.retentionPruned, by: folded, [("kind", "quota_counts")])
        telemetry?.count(Telemetry.Name.retentionPruned, by: total.reports, [("kind", "reports")])
        telemetry?.count(Telemetry.Name.retentionPruned, by: total.sessions, [("kind", "sessions")])
        telemetry?.count(Telemetry.Name.retentionPruned, by: total.attachments, [("kind", "attachments")])
        if !total.isEmpty {
            let released = try await store.releaseFreeSpace(maxBytes: .max)
            logger.info(
                "retention pruned",
                metadata: [
                    Telemetry.LogKey.reports: "\(total.reports)", Telemetry.LogKey.releasedBytes: "\(released)",
                ])
            onChange()
        }
        // Then deleted entries' words leave the search index: every pass (a merge left undone goes on next time), but
        // never under storage pressure, where its rewritten pages would eat the space the prune gave back.
        if storage?.belowFloor() == nil {
            do {
                try await store.mergeSearchIndex()
            } catch {
                logger.warning(
                    "search index merge after pruning failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
        }
        return total
    }

    /// The storage-pressure state: each entry runs a pass at once; passes wait only after a real disk-full error
    /// (`DiskGuard.waitWhileWritesFail`). Nil: a pass every `interval`.
    public let storage: DiskGuard?

    /// How often the loop looks for a new entry into the storage-pressure state.
    public let pressurePoll: Duration

    public func run() async throws {
        // Cancelled at graceful shutdown, so a long sleep between steps never delays SIGTERM.
        await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        let clock = ContinuousClock()
        var seenEntries = storage?.entries ?? 0
        var next = clock.now  // a pass at start
        while !Task.isCancelled {
            let entries = storage?.entries ?? 0
            if entries != seenEntries || clock.now >= next {
                seenEntries = entries
                await storage?.waitWhileWritesFail()
                do {
                    try await step(now: self.clock.now())
                } catch  where Task.isCancelled {
                    break  // graceful shutdown cancelled the step: not a failure
                } catch let error where storage?.noteFailure(error) == true {
                    // The disk is full: logged once by the state; the next pass waits until writes can succeed.
                } catch {
                    logger.error("retention step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                }
                next = clock.now.advanced(by: interval)
            }
            try? await Task.sleep(for: storage == nil ? interval : min(interval, pressurePoll))
        }
    }
}
