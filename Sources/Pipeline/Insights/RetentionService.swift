import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Prunes raw reports and sessions older than `days` (default 90), in small batches, every `interval`.
/// Issue and health counters were counted on arrival and stay exact.
public struct RetentionService: Service {
    let store: any RetentionStore
    let clock: any WallClock
    let days: Int
    let logger: Logger
    let telemetry: Telemetry?
    let interval: Duration
    let onChange: @Sendable () -> Void

    public init(store: any RetentionStore, clock: any WallClock, days: Int = 90, logger: Logger, telemetry: Telemetry? = nil,
                interval: Duration = .seconds(3600), onChange: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.clock = clock
        self.days = max(1, days)
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
            let result = try await store.prune(before: cutoff, limit: 500)
            total.reports += result.reports
            total.sessions += result.sessions
            if result.reports == 0 && result.sessions == 0 { break }
            await Task.yield()
        }
        telemetry?.count(Telemetry.Name.retentionPruned, by: total.reports, [("kind", "reports")])
        telemetry?.count(Telemetry.Name.retentionPruned, by: total.sessions, [("kind", "sessions")])
        if total.reports > 0 || total.sessions > 0 {
            logger.info("retention pruned", metadata: [Telemetry.LogKey.reports: "\(total.reports)"])
            onChange()
        }
        return total
    }

    /// The storage-pressure state: while the disk is full, steps pause; a disk-full error enters it (logged once
    /// there, not per step). Nil: never paused.
    public var storage: DiskGuard?

    public func run() async throws {
        // Cancelled at graceful shutdown, so a long sleep between steps never delays SIGTERM.
        try await cancelWhenGracefulShutdown { await self.loop() }
    }

    func loop() async {
        while !Task.isCancelled {
            await storage?.waitWhileFull()
            do {
                try await step(now: clock.now())
            } catch where Task.isCancelled {
                break  // graceful shutdown cancelled the step: not a failure
            } catch let error where storage?.noteFailure(error) == true {
                // The disk is full: logged once by the state; the next step waits for space.
            } catch {
                logger.error("retention step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
            }
            try? await Task.sleep(for: interval)
        }
    }
}
