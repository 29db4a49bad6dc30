import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Symbolicates and groups reports after they were acknowledged, never on the request path.
///
/// `run()` only loops and calls `step()`; everything it does is in `step()`, which tests call directly.
/// The queue is in the database, so a restart loses nothing: pending reports are picked up again.
public struct SymbolicationWorker: Service {
    let store: any SymbolicationStore
    let symbolicator: any AddressSymbolicating
    /// Re-reads a stored report from its raw payload (Formats, wired by the composition root).
    let reread: @Sendable (RawReport) throws -> Report
    let clock: any WallClock
    let logger: Logger
    let batchSize: Int
    let idleDelay: Duration
    let telemetry: Telemetry?
    /// Called after a batch changed issues (tells the dashboard renderer).
    let onChange: @Sendable () -> Void

    public init(store: any SymbolicationStore, symbolicator: any AddressSymbolicating,
                reread: @escaping @Sendable (RawReport) throws -> Report, clock: any WallClock, logger: Logger,
                batchSize: Int = 64, idleDelay: Duration = .milliseconds(200), telemetry: Telemetry? = nil,
                onChange: @escaping @Sendable () -> Void = {}) {
        self.telemetry = telemetry
        self.onChange = onChange
        self.store = store
        self.symbolicator = symbolicator
        self.reread = reread
        self.clock = clock
        self.logger = logger
        self.batchSize = batchSize
        self.idleDelay = idleDelay
    }

    /// Symbolicates one batch of pending reports, `concurrency` at a time (the symbolicator's module owners
    /// then work in parallel); returns how many were processed.
    @discardableResult
    public func step(concurrency: Int = 2) async throws -> Int {
        let batch = try await store.pending(limit: batchSize)
        guard !batch.isEmpty else { return 0 }
        var outcomes: [SymbolicationOutcome] = []
        outcomes.reserveCapacity(batch.count)
        try await withThrowingTaskGroup(of: SymbolicationOutcome.self) { group in
            var next = 0
            func start() {
                guard next < batch.count else { return }
                let item = batch[next]
                next += 1
                group.addTask { await self.process(item) }
            }
            for _ in 0..<max(1, concurrency) { start() }
            while let outcome = try await group.next() {
                outcomes.append(outcome)
                start()
            }
        }
        // One transaction (one fsync) for the whole batch: grouping keeps up with ingest.
        try await store.saveAll(outcomes.sorted { $0.reportID < $1.reportID }, at: clock.now())
        telemetry?.count(Telemetry.Name.reportsGrouped, by: batch.count)
        onChange()
        return batch.count
    }

    func process(_ item: PendingSymbolication) async -> SymbolicationOutcome {
        do {
            let report = try reread(item.raw)
            let result = await SymbolicationRules.symbolicate(report, project: item.project, with: symbolicator)
            // Grouping needs the symbolicated frames, so it happens here and commits with them.
            return SymbolicationOutcome(reportID: item.reportID, result: result, grouping: GroupingInput.make(report, symbols: result))
        } catch {
            logger.error("cannot re-read a stored report", metadata: [Telemetry.LogKey.error: "\(error)"])
            return SymbolicationOutcome(
                reportID: item.reportID, result: SymbolicatedReport(state: .missing, threads: [], missing: []), grouping: nil)
        }
    }

    public func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            let done: Int
            do {
                done = try await step()
            } catch {
                logger.error("symbolication step failed", metadata: [Telemetry.LogKey.error: "\(error)"])
                done = 0
            }
            if done == 0 {
                try? await Task.sleep(for: idleDelay)
            }
        }
    }
}
