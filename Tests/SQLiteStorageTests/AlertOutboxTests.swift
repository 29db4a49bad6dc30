import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// SQLite under a crash storm that fills the disk (issue #15): the WAL is kept small. (The outbox's order and its
/// dispatch-once rule are checked on both engines: `AlertConformanceTests`.)
@Suite struct AlertOutboxTests {
    @Test func underStoragePressureTheWALIsKeptSmallAndItsUsualSizeReturnsAfter() async throws {
        let db = try TempDatabase()
        func settings() async throws -> [Int] {
            try await db.database.pool.writeWithoutTransaction { db in
                [
                    try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint") ?? 0,
                    try Int.fetchOne(db, sql: "PRAGMA journal_size_limit") ?? 0,
                ]
            }
        }
        #expect(try await settings() == [1000, -1])
        try await db.database.enterStoragePressure()
        #expect(
            try await settings() == [SQLiteEngine.pressureCheckpointPages, SQLiteEngine.pressureCheckpointPages * 4096])

        // Many small commits (as background writers make) leave the WAL file near the limit, not at SQLite's usual
        // thousand pages.
        try await db.database.pool.write { db in
            try db.execute(sql: "CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB)")
        }
        for n in 0..<400 {
            try await db.database.pool.write { db in
                try db.execute(sql: "INSERT INTO filler (id, body) VALUES (?, zeroblob(3000))", arguments: [n])
            }
        }
        let wal =
            try FileManager.default.attributesOfItem(atPath: db.folder + "/faultline.sqlite-wal")[.size] as? Int ?? -1
        #expect(wal >= 0 && wal <= 2 * SQLiteEngine.pressureCheckpointPages * 4096 + 65536, "WAL of \(wal) bytes")

        try await db.database.leaveStoragePressure()
        #expect(try await settings() == [1000, -1])
    }
}
