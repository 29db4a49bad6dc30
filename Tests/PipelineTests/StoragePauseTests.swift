import FaultlineCore
import Foundation
import Logging
import Pipeline
import Synchronization
import Testing

/// Background writers pause while the disk is full and resume by themselves (issue #15), shown on the
/// retention service over an in-memory store.
@Suite struct StoragePauseTests {
    struct DiskFull: Error {}

    final class CountingStore: RetentionStore {
        let calls = Mutex(0)
        let failWithDiskFull = Mutex(false)
        func prune(before cutoff: Date, limit: Int) async throws -> PruneResult {
            calls.withLock { $0 += 1 }
            if failWithDiskFull.withLock({ $0 }) { throw DiskFull() }
            return PruneResult()
        }
    }

    /// Polls `condition` (moving the manual clock so the guard measures again), at most ~10 s.
    func eventually(_ clock: ManualClock, _ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            clock.advance(2)
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    @Test func retentionWaitsWhileFullAndResumesWhenSpaceReturns() async {
        let clock = ManualClock()
        let free = Mutex<UInt64>(1 << 20)
        let probes = Mutex(0)
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock) {
            probes.withLock { $0 += 1 }
            return free.withLock { $0 }
        }
        let store = CountingStore()
        var service = RetentionService(store: store, clock: clock, logger: Logger(label: "test"), interval: .milliseconds(10))
        service.storage = guardian
        let task = Task { try await service.run() }
        defer { task.cancel() }
        // The loop measured the disk several times and never wrote.
        #expect(await eventually(clock) { probes.withLock { $0 } >= 3 })
        #expect(store.calls.withLock { $0 } == 0)
        free.withLock { $0 = 100 << 20 }
        #expect(await eventually(clock) { store.calls.withLock { $0 } > 0 })
    }

    @Test func aDiskFullErrorFromAWriterEntersTheState() async {
        let clock = ManualClock()
        let guardian = DiskGuard(floorBytes: 0, clock: clock, isDiskFull: { $0 is DiskFull }) { 0 }
        let store = CountingStore()
        store.failWithDiskFull.withLock { $0 = true }
        var service = RetentionService(store: store, clock: clock, logger: Logger(label: "test"), interval: .milliseconds(10))
        service.storage = guardian
        let task = Task { try await service.run() }
        defer { task.cancel() }
        #expect(await eventually(clock) { guardian.isFull })
        // Paused now: a free disk of 0 bytes keeps the state, so no write is retried in a loop.
        let calls = store.calls.withLock { $0 }
        #expect(calls >= 1)
        for _ in 0..<20 { clock.advance(2); try? await Task.sleep(for: .milliseconds(10)) }
        #expect(store.calls.withLock { $0 } == calls)
    }

    @Test func eachEntryAndLeaveIsKeptOnceForTheAlertWriterAndBackgroundWritersKeepHalfTheFloor() {
        let clock = ManualClock()
        let free = Mutex<UInt64>(100 << 20)
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock, isDiskFull: { $0 is DiskFull }) {
            free.withLock { $0 }
        }
        #expect(!guardian.isFull)
        #expect(guardian.takeNotices().isEmpty)
        // Under the floor: ingest is refused, background writers still have their share (down to 4 MiB).
        free.withLock { $0 = 6 << 20 }
        clock.advance(2)
        #expect(guardian.isFull)
        #expect(!guardian.backgroundPaused)
        free.withLock { $0 = 3 << 20 }
        #expect(guardian.backgroundPaused)  // measured at once near the floor: no stale second
        free.withLock { $0 = 6 << 20 }
        #expect(!guardian.backgroundPaused)
        // A real disk-full error pauses them whatever the measure, and is not a second entry.
        #expect(guardian.noteFailure(DiskFull()))
        #expect(guardian.backgroundPaused)
        for _ in 0..<5 { _ = guardian.isFull }
        let entered = guardian.takeNotices()
        #expect(entered.map(\.full) == [true])
        #expect(entered.first?.availableBytes == 6 << 20)
        // The writer could not record it: kept, before what comes next.
        guardian.keepNotices(entered)
        free.withLock { $0 = 50 << 20 }
        #expect(!guardian.isFull)
        #expect(!guardian.backgroundPaused)
        #expect(guardian.takeNotices().map(\.full) == [true, false])
        #expect(guardian.takeNotices().isEmpty)
    }
}
