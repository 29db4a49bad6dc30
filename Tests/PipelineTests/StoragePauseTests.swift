import FaultlineCore
import Foundation
import Logging
import Pipeline
import ServiceLifecycle
import Synchronization
import Testing

/// Background writers pause while the disk is full and resume by themselves (issue #15), shown on the render
/// scheduler and the retention service (the relief valve: it runs under pressure) over in-memory fakes.
@Suite struct StoragePauseTests {
    struct DiskFull: Error {}

    final class CountingStore: RetentionStore {
        let calls = Mutex(0)
        let failWithDiskFull = Mutex(false)
        func prune(before cutoff: Date, limit: Int, now: Date, samples: RetentionSamplePolicy) async throws
            -> PruneResult
        {
            calls.withLock { $0 += 1 }
            if failWithDiskFull.withLock({ $0 }) { throw DiskFull() }
            return PruneResult()
        }
        func foldQuotaCounts(before day: DayNumber) async throws -> Int { 0 }
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

    @Test func theRendererWaitsBelowItsShareOfTheFloorAndResumesWhenSpaceReturns() async {
        let clock = ManualClock()
        let free = Mutex<UInt64>(1 << 20)
        let probes = Mutex(0)
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock) {
            probes.withLock { $0 += 1 }
            return free.withLock { $0 }
        }
        let renders = Mutex(0)
        let service = RenderScheduler(
            render: { _, _ in
                renders.withLock { $0 += 1 }
                return RenderScheduler.Outcome(pages: 1, complete: true)
            }, clock: clock, debounce: .milliseconds(1), logger: Logger(label: "test"), storage: guardian)
        let task = Task { try await service.run() }
        defer { task.cancel() }
        // The loop measured the disk several times and never wrote (1 MiB free, below its 4 MiB share).
        #expect(await eventually(clock) { probes.withLock { $0 } >= 3 })
        #expect(renders.withLock { $0 } == 0)
        free.withLock { $0 = 100 << 20 }
        #expect(await eventually(clock) { renders.withLock { $0 } > 0 })
    }

    /// Under pressure (ingest refused) a render leaves its issue pages, a full render too, even while the background
    /// writers' share (half the floor) is not used up: the full render at start once wrote thousands of issue pages
    /// into a nearly full disk, first down to 0 bytes free, later down to that share, eating the space retention had
    /// given back for ingest, which then never resumed (CI, DiskFullEndToEndTests). Newer data cuts short an
    /// incremental render only: a full render is the one that removes the pages of issues that are gone.
    @Test func aFullRenderLeavesItsIssuePagesWhenTheDiskIsFullButNotForNewerData() async throws {
        let clock = ManualClock()
        let free = Mutex<UInt64>(100 << 20)
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock) { free.withLock { $0 } }
        let scheduler = Mutex<RenderScheduler?>(nil)
        let seen = Mutex<[(full: Bool, stopsForNewerData: Bool, stopsForFullDisk: Bool)]>([])
        let service = RenderScheduler(
            render: { since, stop in
                // A change arrives while this render runs.
                scheduler.withLock { $0 }?.notify()
                let newer = stop()
                // Its own pages used the disk down to below the floor, still above the background writers' share
                // (half the floor).
                free.withLock { $0 = 6 << 20 }
                clock.advance(2)
                let full = stop()
                free.withLock { $0 = 100 << 20 }
                clock.advance(2)
                seen.withLock { $0.append((since == nil, newer, full)) }
                return RenderScheduler.Outcome(pages: 1, complete: !newer && !full)
            }, clock: clock, debounce: .milliseconds(1), logger: Logger(label: "test"), storage: guardian)
        scheduler.withLock { $0 = service }

        // Incomplete: no start time to continue from, so the next render is a full one again.
        #expect(try await service.renderNow(since: nil) == nil)
        #expect(try await service.renderNow(since: clock.now()) == nil)
        let renders = seen.withLock { $0 }
        #expect(renders.map(\.full) == [true, false])
        #expect(renders.map(\.stopsForNewerData) == [false, true])
        #expect(renders.map(\.stopsForFullDisk) == [true, true])
        #expect(!guardian.isFull)  // the space came back
    }

    @Test func retentionRunsAtOnceOnEachEntryAndUnderThePressureItRelieves() async {
        let clock = ManualClock()
        let free = Mutex<UInt64>(100 << 20)
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock) { free.withLock { $0 } }
        let store = CountingStore()
        // An hour between passes: only the entries can explain more than the pass at start.
        let service = RetentionService(
            store: store, clock: clock, logger: Logger(label: "test"), interval: .seconds(3600), storage: guardian,
            pressurePoll: .milliseconds(10))
        let task = Task { try await service.run() }
        defer { task.cancel() }
        #expect(await eventually(clock) { store.calls.withLock { $0 } == 1 })
        // Below the floor and below the background writers' share: retention still runs, at once.
        free.withLock { $0 = 1 << 20 }
        #expect(await eventually(clock) { store.calls.withLock { $0 } == 2 })
        for _ in 0..<20 { clock.advance(2); try? await Task.sleep(for: .milliseconds(10)) }
        #expect(store.calls.withLock { $0 } == 2)  // once per entry, not in a loop
        free.withLock { $0 = 100 << 20 }
        #expect(await eventually(clock) { !guardian.isFull })
        free.withLock { $0 = 2 << 20 }
        #expect(await eventually(clock) { store.calls.withLock { $0 } == 3 })
    }

    /// A writer paused on a full disk does not hold up SIGTERM: the waits end on graceful shutdown (the symbolication
    /// worker's loop is not cancelled at shutdown, it ends when it sees it; it once waited there forever).
    @Test func aPausedWriterLetsTheServerStop() async throws {
        struct PausedWriter: Service {
            let guardian: DiskGuard
            let ended: CountingStore
            func run() async throws {
                await guardian.waitWhileFull(poll: .milliseconds(10))
                await guardian.waitUntilSpace(poll: .milliseconds(10))
                ended.calls.withLock { $0 += 1 }
            }
        }
        let clock = ManualClock()
        let guardian = DiskGuard(floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock) { 1 << 20 }
        #expect(guardian.backgroundPaused)
        let ended = CountingStore()  // only its counter
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: PausedWriter(guardian: guardian, ended: ended))],
                logger: Logger(label: "test")))
        let running = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(ended.calls.withLock { $0 } == 0)  // still paused: the disk is full
        await group.triggerGracefulShutdown()
        #expect(await eventually(clock) { ended.calls.withLock { $0 } == 1 })
        running.cancel()
    }

    @Test func aDiskFullErrorFromAWriterEntersTheState() async {
        let clock = ManualClock()
        let guardian = DiskGuard(floorBytes: 0, clock: clock, isDiskFull: { $0 is DiskFull }) { 0 }
        let store = CountingStore()
        store.failWithDiskFull.withLock { $0 = true }
        let service = RetentionService(
            store: store, clock: clock, logger: Logger(label: "test"), interval: .milliseconds(10), storage: guardian)
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
        let guardian = DiskGuard(
            floorBytes: 8 << 20, marginBytes: 4 << 20, clock: clock, isDiskFull: { $0 is DiskFull }
        ) {
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
