import FaultlineCore
import Foundation
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

    @Test func backgroundWritersKeepHalfTheFloorThenPause() {
        // Not under pressure: never paused, whatever the measure.
        #expect(!policy.backgroundPaused(full: false, hardFull: false, available: 0))
        // Under pressure: they go on down to half the floor (their share), and pause below it.
        #expect(!policy.backgroundPaused(full: true, hardFull: false, available: 99))
        #expect(!policy.backgroundPaused(full: true, hardFull: false, available: 50))
        #expect(policy.backgroundPaused(full: true, hardFull: false, available: 49))
        // After a real disk-full error, or without a measure, they pause whatever the measure says.
        #expect(policy.backgroundPaused(full: true, hardFull: true, available: 99))
        #expect(policy.backgroundPaused(full: true, hardFull: false, available: nil))
        // A zero floor leaves background writers no share: they pause on entering.
        let zero = StoragePressurePolicy(floorBytes: 0, marginBytes: 20)
        #expect(zero.backgroundPaused(full: true, hardFull: true, available: 1 << 30))
    }

    @Test func measurementsAreReusedOnlyFarFromTheFloor() {
        let floor = StoragePressurePolicy(floorBytes: 8 << 20, marginBytes: 4 << 20)
        #expect(floor.measurementLifetime(available: 1 << 30, full: false) == 1)
        #expect(floor.measurementLifetime(available: 72 << 20, full: false) == 0)
        #expect(floor.measurementLifetime(available: 1 << 30, full: true) == 0)
        #expect(floor.measurementLifetime(available: nil, full: false) == 0)
        let huge = StoragePressurePolicy(floorBytes: .max, marginBytes: 0)
        #expect(huge.measurementLifetime(available: .max, full: false) == 0)
    }

    @Test func storageAlertsNameTheirEntryAndCarryTheNumbers() {
        let at = Date(timeIntervalSince1970: 1_700_000_000.5)
        let full = StorageAlerts.draft(
            project: ProjectID(3), full: true, at: at, availableBytes: 3 << 20, floorBytes: 8 << 20)
        #expect(full.kind == .storageFull)
        #expect(full.dedupeKey == "storage_full:1700000000500")
        #expect(full.reason == ["free_mib": 3, "floor_mib": 8])
        let ok = StorageAlerts.draft(project: ProjectID(3), full: false, at: at, availableBytes: nil, floorBytes: 0)
        #expect(ok.kind == .storageOK)
        #expect(ok.dedupeKey == "storage_ok:1700000000500")
        #expect(ok.reason == ["floor_mib": 0])
        // A date no clock gives must not trap.
        let absurd = StorageAlerts.draft(
            project: ProjectID(3), full: true, at: Date(timeIntervalSince1970: 1e300), availableBytes: .max,
            floorBytes: .max)
        #expect(absurd.dedupeKey == "storage_full:0")
        let text = AlertRules.text(
            project: "shop", kind: .storageFull, title: full.title, release: nil, reason: full.reason, link: nil)
        #expect(
            text
                == "[shop] Storage full on the Faultline server: ingest answers 507 until space returns (3 MiB free, floor 8 MiB)"
        )
    }
}
