import FaultlineCore
import Logging
import ServiceLifecycle

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Symbolicates reports after they were acknowledged, never on the request path.
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

    public init(store: any SymbolicationStore, symbolicator: any AddressSymbolicating,
                reread: @escaping @Sendable (RawReport) throws -> Report, clock: any WallClock, logger: Logger,
                batchSize: Int = 64, idleDelay: Duration = .milliseconds(200)) {
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
        try await withThrowingTaskGroup(of: Void.self) { group in
            var next = 0
            func start() {
                guard next < batch.count else { return }
                let item = batch[next]
                next += 1
                group.addTask { try await self.process(item) }
            }
            for _ in 0..<max(1, concurrency) { start() }
            while try await group.next() != nil { start() }
        }
        return batch.count
    }

    func process(_ item: PendingSymbolication) async throws {
        let result: SymbolicatedReport
        do {
            let report = try reread(item.raw)
            result = await SymbolicationRules.symbolicate(report, project: item.project, with: symbolicator)
        } catch {
            logger.error("cannot re-read a stored report", metadata: [Telemetry.LogKey.error: "\(error)"])
            result = SymbolicatedReport(state: .missing, threads: [], missing: [])
        }
        try await store.save(result, reportID: item.reportID, at: clock.now())
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
