import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// Poison-pill accounting on SQLite (migration v8-symbolication-attempts): attempts are counted durably,
/// reset by a clean result, kept by a failure, and the failure reason is read back.
@Suite struct SymbolicationAttemptsTests {
    @Test func attemptsAreCountedResetByACleanResultAndKeptWithAFailure() async throws {
        let rollups = RollupTests()
        let (db, p) = try await rollups.setUp()
        try await rollups.store(db, p, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
        let store = SQLiteSymbolicationStore(database: db.database)
        let one = try await rollups.rowID(db, 1)
        let two = try await rollups.rowID(db, 2)

        #expect(try await store.pending(limit: 10).map(\.attempts) == [0, 0])
        try await store.recordAttempt(reportIDs: [one, two])
        try await store.recordAttempt(reportIDs: [two])
        // A fresh connection sees the counts: they were committed.
        let reopened = try FaultlineDatabase(path: db.folder + "/faultline.sqlite")
        #expect(try await SQLiteSymbolicationStore(database: reopened).pending(limit: 10).map(\.attempts) == [1, 2])

        try await store.saveAll([
            SymbolicationOutcome(reportID: one, result: SymbolicatedReport(state: .missing, threads: [], missing: []), grouping: nil),
            SymbolicationOutcome(reportID: two, result: .failed("stopped 3 times"), grouping: rollups.grouping("lib+0x10")),
        ], at: Date())
        #expect(try await store.pending(limit: 10).isEmpty)
        let attempts = try await db.database.pool.read { db in
            try Int.fetchAll(db, sql: "SELECT symbolication_attempts FROM reports ORDER BY id")
        }
        #expect(attempts == [0, 2])
        let (state, result) = try await store.result(reportID: two)
        #expect(state == .missing)
        #expect(result?.failure == "stopped 3 times")
        #expect(try await store.result(reportID: one).report?.failure == nil)
        // The failed report is still grouped.
        let issue = try await db.database.pool.read { db in try Int64.fetchOne(db, sql: "SELECT issue_id FROM reports WHERE id = ?", arguments: [two]) }
        #expect(issue != nil)
    }
}
