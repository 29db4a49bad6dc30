import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// A clock the test moves by hand.
final class ManualClock: WallClock {
    let current = Mutex(Date(timeIntervalSince1970: 1_000_000))
    func now() -> Date { current.withLock { $0 } }
    func advance(_ seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

@Suite struct RateLimiterTests {
    @Test func admitsABurstThenRefusesThenRefills() {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock, burstSeconds: 2)
        let project = ProjectID(1)
        #expect(limiter.admit(project, rate: 10, cost: 20) == nil)  // full bucket: 2 s × 10/s
        let wait = limiter.admit(project, rate: 10, cost: 5)
        #expect(wait != nil && wait! >= 0.5)
        clock.advance(0.5)
        #expect(limiter.admit(project, rate: 10, cost: 5) == nil)
        #expect(limiter.admit(ProjectID(2), rate: 10, cost: 20) == nil)  // buckets are per project
    }

    @Test func aBatchLargerThanTheBucketIsNotRefusedForever() {
        let clock = ManualClock()
        let limiter = RateLimiter(clock: clock, burstSeconds: 1)
        #expect(limiter.admit(ProjectID(1), rate: 10, cost: 50) == nil)
        #expect(limiter.admit(ProjectID(1), rate: 10, cost: 1) != nil)  // in debt now
        clock.advance(6)
        #expect(limiter.admit(ProjectID(1), rate: 10, cost: 1) == nil)
    }

    @Test func eachOfSeveralNodesAllowsItsShareOfTheRate() {
        let clock = ManualClock()
        let nodes = Mutex(2)
        let limiter = RateLimiter(clock: clock, burstSeconds: 2, share: { 1 / Double(nodes.withLock { $0 }) })
        let project = ProjectID(1)
        // Two nodes: half of 2 s × 10/s at once, and 5/s after.
        #expect(limiter.admit(project, rate: 10, cost: 10) == nil)
        #expect(limiter.admit(project, rate: 10, cost: 1) != nil)
        clock.advance(1)
        #expect(limiter.admit(project, rate: 10, cost: 5) == nil)
        #expect(limiter.admit(project, rate: 10, cost: 1) != nil)
        // Alone again: the whole rate.
        nodes.withLock { $0 = 1 }
        clock.advance(1)
        #expect(limiter.admit(project, rate: 10, cost: 10) == nil)
    }

    @Test func aShareOutOfRangeCountsAsTheWholeRate() {
        for share in [0, -1, .nan, .infinity, 3] as [Double] {
            let limiter = RateLimiter(clock: ManualClock(), burstSeconds: 1, share: { share })
            #expect(limiter.admit(ProjectID(1), rate: 10, cost: 10) == nil)
            #expect(limiter.admit(ProjectID(1), rate: 10, cost: 1) != nil)
        }
    }
}

@Suite struct DiskGuardTests {
    @Test func refusesBelowTheFloorAndProbesAtMostOncePerSecond() {
        let clock = ManualClock()
        let probes = Mutex(0)
        // Far from the floor (more than 64 MiB above it) a measurement is kept for a second.
        let free = Mutex<UInt64>(200 << 20)
        let guardian = DiskGuard(floorBytes: 50 << 20, clock: clock) {
            probes.withLock { $0 += 1 }
            return free.withLock { $0 }
        }
        #expect(guardian.belowFloor() == nil)
        free.withLock { $0 = 10 << 20 }
        #expect(guardian.belowFloor() == nil)  // cached for a second
        clock.advance(1.5)
        #expect(guardian.belowFloor() != nil)
        #expect(probes.withLock { $0 } == 2)
        // Under pressure (and within 64 MiB of the floor) every check measures: a burst cannot write past the floor
        // on a stale figure.
        #expect(guardian.belowFloor() != nil)
        #expect(probes.withLock { $0 } == 3)
    }

    @Test func aZeroFloorDisablesTheCheck() {
        let guardian = DiskGuard(floorBytes: 0, clock: ManualClock()) { 0 }
        #expect(guardian.belowFloor() == nil)
    }
}

@Suite struct StoragePressureStateTests {
    struct Full: Error {}

    @Test func aDiskFullErrorEntersAndSpaceAboveFloorPlusMarginLeaves() {
        let clock = ManualClock()
        let free = Mutex<UInt64>(1 << 20)
        let guardian = DiskGuard(floorBytes: 0, marginBytes: 8 << 20, clock: clock, isDiskFull: { $0 is Full }) {
            free.withLock { $0 }
        }
        #expect(guardian.belowFloor() == nil)
        #expect(!guardian.noteFailure(CancellationError()))
        #expect(guardian.belowFloor() == nil)
        #expect(guardian.noteFailure(Full()))
        #expect(guardian.isFull)
        clock.advance(2)
        free.withLock { $0 = 6 << 20 }
        #expect(guardian.isFull)  // above the floor, not above floor + margin
        clock.advance(2)
        free.withLock { $0 = 9 << 20 }
        #expect(!guardian.isFull)
    }
}
