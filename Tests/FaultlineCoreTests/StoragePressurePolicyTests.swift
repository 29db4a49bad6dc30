import FaultlineCore
import Testing

@Suite struct StoragePressurePolicyTests {
    let policy = StoragePressurePolicy(floorBytes: 100, marginBytes: 20)

    @Test func entersBelowTheFloorOnly() {
        #expect(policy.isFull(wasFull: false, available: 99))
        #expect(!policy.isFull(wasFull: false, available: 100))
        #expect(!policy.isFull(wasFull: false, available: 110))
    }

    @Test func leavesOnlyAboveTheFloorPlusTheMargin() {
        #expect(policy.isFull(wasFull: true, available: 100))
        #expect(policy.isFull(wasFull: true, available: 120))
        #expect(!policy.isFull(wasFull: true, available: 121))
    }

    @Test func aFailedMeasurementKeepsTheState() {
        #expect(policy.isFull(wasFull: true, available: nil))
        #expect(!policy.isFull(wasFull: false, available: nil))
    }

    @Test func aZeroFloorNeverEntersByMeasurementButLeavesWithTheMargin() {
        let zero = StoragePressurePolicy(floorBytes: 0, marginBytes: 20)
        #expect(!zero.isFull(wasFull: false, available: 0))
        #expect(zero.isFull(wasFull: true, available: 20))
        #expect(!zero.isFull(wasFull: true, available: 21))
    }

    @Test func aHugeFloorDoesNotOverflow() {
        let huge = StoragePressurePolicy(floorBytes: .max, marginBytes: .max)
        #expect(huge.isFull(wasFull: true, available: .max))
        #expect(StoragePressurePolicy.defaultMargin(floorBytes: 0) == 4 << 20)
        #expect(StoragePressurePolicy.defaultMargin(floorBytes: 64 << 20) == 16 << 20)
    }
}
