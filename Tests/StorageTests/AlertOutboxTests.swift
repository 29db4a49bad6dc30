import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// The webhook outbox under a crash storm that fills the disk (issue #15): the operator's storage alerts go before
/// a backlog of issue alerts, and two dispatchers (the alert service and the storage-alert service) never queue one
/// alert twice.
@Suite struct AlertOutboxTests {
    func setUp() async throws -> (TempDatabase, SQLiteAlertStore, ProjectID) {
        let db = try TempDatabase()
        let project = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)), createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        return (db, SQLiteAlertStore(database: db.database), project.id)
    }

    func draft(_ project: ProjectID, _ kind: AlertKind, _ key: String) -> AlertDraft {
        AlertDraft(project: project, kind: kind, dedupeKey: key, issue: nil, release: nil, title: key, reason: [:])
    }

    @Test func storageAlertsAreDispatchedAndDeliveredBeforeABacklogOfIssueAlerts() async throws {
        let (db, store, project) = try await setUp()
        _ = db
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        for n in 0..<150 { #expect(try await store.record(draft(project, .newIssue, "new:\(n)"), at: at)) }
        #expect(try await store.record(draft(project, .storageFull, "storage_full:1"), at: at.addingTimeInterval(5)))

        // The storage alert is in the first batch handed to the outbox, although it is the newest.
        let first = try await store.alertsToDispatch(limit: 100)
        #expect(first.count == 100)
        #expect(first.first?.kind == .storageFull)
        #expect(first.dropFirst().allSatisfy { $0.kind == .newIssue })
        try await store.enqueue(first.map { (alert: $0.id, url: "http://hook/\($0.id)", body: Array("x".utf8)) }, dispatched: first.map(\.id), at: at)
        let rest = try await store.alertsToDispatch(limit: 100)
        #expect(rest.count == 51)
        try await store.enqueue(rest.map { (alert: $0.id, url: "http://hook/\($0.id)", body: Array("x".utf8)) }, dispatched: rest.map(\.id), at: at)

        // Its delivery is due first, although the issue alerts' deliveries are older and equally due.
        let due = try await store.dueDeliveries(now: at.addingTimeInterval(60), limit: 10)
        #expect(due.count == 10)
        #expect(due.first?.alert == first.first?.id)
        #expect(due.dropFirst().map(\.alert) == first.dropFirst().prefix(9).map(\.id))
    }

    @Test func anAlertTwoDispatchersTookIsQueuedOnce() async throws {
        let (db, store, project) = try await setUp()
        let at = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(try await store.record(draft(project, .storageFull, "storage_full:1"), at: at))
        // Both dispatchers read the alert before either queued it.
        let seenByOne = try await store.alertsToDispatch(limit: 100)
        let seenByOther = try await store.alertsToDispatch(limit: 100)
        #expect(seenByOne.map(\.id) == seenByOther.map(\.id))
        for seen in [seenByOne, seenByOther] {
            try await store.enqueue(seen.map { (alert: $0.id, url: "http://hook", body: Array("x".utf8)) }, dispatched: seen.map(\.id), at: at)
        }
        let deliveries = try await db.database.pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM webhook_deliveries") }
        #expect(deliveries == 1)
        #expect(try await store.alertsToDispatch(limit: 100).isEmpty)
    }

    @Test func underStoragePressureTheWALIsKeptSmallAndItsUsualSizeReturnsAfter() async throws {
        let db = try TempDatabase()
        func settings() async throws -> [Int] {
            try await db.database.pool.writeWithoutTransaction { db in
                [try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 0, try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") ?? 0]
            }
        }
        #expect(try await settings() == [1000, -1])
        try await db.database.enterStoragePressure()
        #expect(try await settings() == [FaultlineDatabase.pressureCheckpointPages, FaultlineDatabase.pressureCheckpointPages * 4096])

        // Many small commits (as background writers make) leave the WAL file near the limit, not at SQLite's usual
        // thousand pages.
        try await db.database.pool.write { db in try db.execute(sql: "CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)") }
        for n in 0..<400 {
            try await db.database.pool.write { db in
                try db.execute(sql: "INSERT INTO filler (id, body) VALUES (?, zeroblob(3000))", arguments: [n])
            }
        }
        let wal = try FileManager.default.attributesOfItem(atPath: db.folder + "/faultline.sqlite-wal")[.size] as? Int ?? -1
        #expect(wal >= 0 && wal <= 2 * FaultlineDatabase.pressureCheckpointPages * 4096 + 65536, "WAL of \(wal) bytes")

        try await db.database.leaveStoragePressure()
        #expect(try await settings() == [1000, -1])
    }
}
