import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// Retention gives space back to the file system (issue #15's relief valve): new databases are in incremental
/// auto-vacuum mode, a prune followed by `releaseFreeSpace` shrinks the file, and `compact` converts an old one.
@Suite struct RetentionSpaceTests {
    func fileSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
    }

    /// `count` payloads of one report each with `bytes` of payload, received at `receivedAt`.
    func fill(_ db: SQLiteEngine, project: ProjectID, from first: Int, count: Int, bytes: Int, receivedAt: Date)
        async throws
    {
        let store = SQLiteIngestStore(database: db)
        for n in first..<(first + count) {
            let body = StoredPayload(
                bytes: (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ n) }, encoding: .deflate,
                inflatedSize: bytes)
            var r = Report(eventID: eventID(n), kind: .crash, timestamp: receivedAt)
            r.app = AppInfo(version: "1.0")
            _ = try await store.commit([
                .reports(
                    ReportBatch(
                        project: project, receivedAt: receivedAt, payload: body,
                        reports: [PreparedReport(report: r, range: 0..<bytes)]))
            ])
        }
    }

    @Test func pruningPastRetentionGivesTheSpaceBackAndKeepsWhatIsInside() async throws {
        let db = try TempDatabase()
        #expect(try await db.database.autoVacuum() == "incremental")
        let project = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        let old = Date(timeIntervalSince1970: 1_700_000_000)
        let recent = old.addingTimeInterval(100 * 86_400)
        try await fill(db.database, project: project.id, from: 0, count: 200, bytes: 20_000, receivedAt: old)
        try await fill(db.database, project: project.id, from: 1000, count: 20, bytes: 20_000, receivedAt: recent)
        try await db.database.checkpointTruncatingWAL()
        let path = db.folder + "/faultline.sqlite"
        let full = fileSize(path)
        #expect(full > 200 * 20_000)

        let store = SQLiteRetentionStore(database: db.database)
        var pruned = 0
        while true {
            let result = try await store.prune(
                before: old.addingTimeInterval(86_400), limit: 50, now: Date(timeIntervalSince1970: 1_800_000_000))
            if result.reports == 0 { break }
            pruned += result.reports
        }
        #expect(pruned == 200)
        // Deleting alone keeps the pages inside the file; giving them back shrinks it.
        try await db.database.checkpointTruncatingWAL()
        #expect(fileSize(path) == full)
        let released = try await store.releaseFreeSpace(maxBytes: .max)
        #expect(released >= 180 * 20_000)
        #expect(fileSize(path) <= full - 180 * 20_000, "\(full) → \(fileSize(path)) bytes")
        #expect(fileSize(db.folder + "/faultline.sqlite-wal") <= 0)
        // Nothing inside the retention period went.
        #expect(try await SQLiteReportReader(database: db.database).counts().reports == 20)
        #expect(try await store.releaseFreeSpace(maxBytes: .max) == 0)
    }

    @Test func compactConvertsADatabaseMadeBeforeAutoVacuum() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-compact-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/faultline.sqlite"
        // A database as older versions made them: a table created before any auto-vacuum setting.
        do {
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in try db.execute(sql: "CREATE TABLE legacy (id INTEGER PRIMARY KEY, body BLOB)")
            }
        }
        let database = try SQLiteEngine(path: path)
        #expect(try await database.autoVacuum() == "none")
        try await database.pool.write { db in
            for n in 0..<100 { try db.execute(sql: "INSERT INTO legacy VALUES (?, zeroblob(20000))", arguments: [n]) }
        }
        try await database.pool.write { db in try db.execute(sql: "DELETE FROM legacy") }
        #expect(try await database.releaseFreePages(maxBytes: .max) == 0)  // nothing to give back in this mode
        try await database.checkpointTruncatingWAL()
        let before = fileSize(path)
        try database.compact()
        #expect(try await database.autoVacuum() == "incremental")
        #expect(fileSize(path) < before - 90 * 20_000)
        #expect(try database.appliedMigrations() == SQLiteMigrations.migrator.migrations)
        try database.close()
    }
}
