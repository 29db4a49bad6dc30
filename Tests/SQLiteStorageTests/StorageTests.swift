import FaultlineCore
import FaultlineHTTP
import Foundation
import TestSupport
import Testing

@testable import SQLiteStorage

/// A fresh data folder with a migrated database, removed at the end.
final class TempDatabase {
    let folder: String
    let database: SQLiteEngine
    init() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("faultline-storage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        database = try SQLiteEngine(path: folder + "/faultline.sqlite", identities: .hmacSHA256)
    }
    deinit { try? FileManager.default.removeItem(atPath: folder) }
}

func eventID(_ n: Int) -> EventID { StoreRows.eventID(n) }

func report(_ n: Int, kind: ReportKind = .crash, version: String = "1.0", at seconds: Double = 1_795_000_000)
    -> PreparedReport
{
    var r = Report(eventID: eventID(n), kind: kind, timestamp: Date(timeIntervalSince1970: seconds))
    r.app = AppInfo(version: version)
    r.userID = "user-\(n % 3)"
    r.error = ErrorInfo(type: "SIGSEGV", message: "boom \(n)")
    r.trimmed.customKeysDropped = n % 2
    return PreparedReport(report: r, range: (n * 10)..<(n * 10 + 10))
}

let payload = StoreRows.payload

/// What only SQLite has (WAL, temporary files, reopening a file). The stores' behaviour on both engines is in
/// Tests/StoreConformanceTests.
@Suite struct StorageTests {
    func project(_ db: TempDatabase, _ slug: String = "app") async throws -> Project {
        try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug(slug)!,
            ingestKeyHash: SecretHash(hex: String(repeating: slug == "app" ? "a" : "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: slug == "app" ? "b" : "d", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1), rateLimitPerSecond: 50)
    }

    @Test func opensInWALModeWithNamedMigrations() throws {
        let db = try TempDatabase()
        #expect(try db.database.journalMode() == "wal")
        // The first twenty as they shipped, then the later ones in their order.
        let applied = try db.database.appliedMigrations()
        #expect(
            Array(applied.prefix(20)) == [
                "v1-projects-reports-sessions", "v2-debug-files", "v3-payload-format", "v4-symbolication",
                "v5-issues-health-alerts", "v6-sentry", "v7-debug-file-blobs", "v8-symbolication-attempts",
                "v9-admin-sessions", "v10-privacy-settings", "v11-report-modules", "v12-report-issue-index",
                "v13-grouping-v2", "v14-issue-status-history", "v15-search-index", "v16-source-bundles",
                "v17-issue-list-order", "v18-storage-alerts", "v19-webhook-priority", "v20-top-issues-covering-index",
            ])
        #expect(
            Array(applied.dropFirst(20)) == [
                "v21-counted-sessions", "v22-issue-created-at", "v23-mask-emails-and-phones", "v24-hashed-rollup-users",
                "v25-minidump-retention", "v26-crash-free-targets", "v27-one-release", "v28-merged-issues",
                "v29-retention-samples-trackers", "v30-people", "v31-event-quotas", "v32-fingerprint-rules",
                "v33-personal-tokens-totp", "v34-audit", "v35-alert-mail", "v36-quota-counts-by-fingerprint",
                "v37-login-tickets",
                "v38-rotation",
                "v39-issue-hangs",
                "v40-tag-users",
            ])
    }

    /// The writer's statement journal is in memory (see `SQLiteEngine.init`); readers and `compact` keep
    /// their temporary files on disk.
    @Test func onlyTheWriterKeepsItsTemporaryFilesInMemory() async throws {
        let db = try TempDatabase()
        // 2 = MEMORY, 0 = the build's default (files).
        #expect(try await db.database.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 2)
        #expect(try await db.database.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 0)
        try db.database.compact()
        #expect(try await db.database.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 1)
    }

    @Test func reopeningKeepsEverything() async throws {
        let folder: String
        do {
            let db = try TempDatabase()
            folder = db.folder
            let p = try await project(db)
            _ = try await SQLiteIngestStore(database: db.database).commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(1)]))
            ])
            try db.database.close()
            let reopened = try SQLiteEngine(path: folder + "/faultline.sqlite")
            #expect(try await SQLiteReportReader(database: reopened).counts().reports == 1)
            #expect(try reopened.appliedMigrations() == SQLiteMigrations.migrator.migrations)
        }
    }
}
