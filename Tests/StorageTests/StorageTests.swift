import FaultlineCore
import Foundation
@testable import Storage
import Testing

/// A fresh data folder with a migrated database, removed at the end.
final class TempDatabase {
    let folder: String
    let database: FaultlineDatabase
    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-storage-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        database = try FaultlineDatabase(path: folder + "/faultline.sqlite")
    }
    deinit { try? FileManager.default.removeItem(atPath: folder) }
}

func eventID(_ n: Int) -> EventID { EventID(String(format: "%032x", n))! }

func report(_ n: Int, kind: ReportKind = .crash, version: String = "1.0", at seconds: Double = 1_795_000_000) -> PreparedReport {
    var r = Report(eventID: eventID(n), kind: kind, timestamp: Date(timeIntervalSince1970: seconds))
    r.app = AppInfo(version: version)
    r.userID = "user-\(n % 3)"
    r.error = ErrorInfo(type: "SIGSEGV", message: "boom \(n)")
    r.trimmed.customKeysDropped = n % 2
    return PreparedReport(report: r, range: (n * 10)..<(n * 10 + 10))
}

let payload = StoredPayload(bytes: [0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01], encoding: .deflate, inflatedSize: 0)

@Suite struct StorageTests {
    func project(_ db: TempDatabase, _ slug: String = "app") async throws -> Project {
        try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug(slug)!, ingestKeyHash: SecretHash(hex: String(repeating: slug == "app" ? "a" : "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: slug == "app" ? "b" : "d", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1), rateLimitPerSecond: 50)
    }

    @Test func opensInWALModeWithNamedMigrations() throws {
        let db = try TempDatabase()
        #expect(try db.database.journalMode() == "wal")
        #expect(try db.database.appliedMigrations() == ["v1-projects-reports-sessions", "v2-debug-files", "v3-payload-format", "v4-symbolication", "v5-issues-health-alerts", "v6-sentry", "v7-debug-file-blobs", "v8-symbolication-attempts", "v9-admin-sessions", "v10-privacy-settings", "v11-report-modules", "v12-report-issue-index", "v13-grouping-v2", "v14-issue-status-history", "v15-search-index", "v16-source-bundles", "v17-issue-list-order", "v18-storage-alerts", "v19-webhook-priority", "v20-top-issues-covering-index"])
    }

    /// The writer's statement journal is in memory (see `FaultlineDatabase.init`); readers and `compact` keep
    /// their temporary files on disk.
    @Test func onlyTheWriterKeepsItsTemporaryFilesInMemory() async throws {
        let db = try TempDatabase()
        // 2 = MEMORY, 0 = the build's default (files).
        #expect(try await db.database.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 2)
        #expect(try await db.database.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 0)
        try db.database.compact()
        #expect(try await db.database.pool.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 1)
    }

    @Test func projectsAndCredentialsRoundTrip() async throws {
        let db = try TempDatabase()
        let store = SQLiteProjectStore(database: db.database)
        let created = try await project(db)
        #expect(try await store.project(credential: SecretHash(hex: String(repeating: "a", count: 64)), kind: .ingest) == created)
        #expect(try await store.project(credential: SecretHash(hex: String(repeating: "a", count: 64)), kind: .upload) == nil)
        #expect(try await store.project(credential: SecretHash(hex: String(repeating: "b", count: 64)), kind: .upload) == created)
        #expect(try await store.project(slug: ProjectSlug("app")!) == created)
        await #expect(throws: StorageError.self) { _ = try await project(db) }  // slug taken
        #expect(try await store.allProjects().count == 1)

        let admin = SecretHash(hex: String(repeating: "e", count: 64))
        #expect(try await store.isAdminTokenHash(admin) == false)
        try await store.setAdminTokenHash(admin, at: Date())
        #expect(try await store.isAdminTokenHash(admin))
        try await store.setAdminTokenHash(SecretHash(hex: String(repeating: "f", count: 64)), at: Date())
        #expect(try await store.isAdminTokenHash(admin) == false)  // rotated away
    }

    @Test func storesReportsOnceAndRecognisesRetries() async throws {
        let db = try TempDatabase()
        let p = try await project(db)
        let store = SQLiteIngestStore(database: db.database)
        let batch = ReportBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: 2), payload: payload, reports: [report(1), report(2)])
        let first = try await store.commit([.reports(batch)])
        #expect(first == [.reports(stored: [eventID(1), eventID(2)], duplicates: [])])
        let retry = ReportBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: 3), payload: payload, reports: [report(2), report(3)])
        let second = try await store.commit([.reports(retry), .reports(batch)])
        #expect(second == [.reports(stored: [eventID(3)], duplicates: [eventID(2)]), .reports(stored: [], duplicates: [eventID(1), eventID(2)])])
        let counts = try await SQLiteReportReader(database: db.database).counts()
        #expect(counts.reports == 3)
        #expect(counts.payloads == 2)  // the all-duplicates batch stored no payload
    }

    @Test func oneFailingWriteDoesNotSinkItsGroup() async throws {
        let db = try TempDatabase()
        let p = try await project(db)
        let store = SQLiteIngestStore(database: db.database)
        let good = ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(1)])
        let orphan = ReportBatch(project: ProjectID(999), receivedAt: Date(), payload: payload, reports: [report(2)])
        let later = ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(3)])
        // The group is first tried in one go; the orphan's refusal sends it through one savepoint per write.
        let outcomes = try await store.commit([.reports(good), .reports(orphan), .reports(later)])
        guard case .failed = outcomes[1] else { Issue.record("expected the orphan write to fail"); return }
        #expect(outcomes[0] == .reports(stored: [eventID(1)], duplicates: []))
        #expect(outcomes[2] == .reports(stored: [eventID(3)], duplicates: []))
        let counts = try await SQLiteReportReader(database: db.database).counts()
        #expect(counts.reports == 2)
        #expect(counts.payloads == 2)  // the orphan's payload went with it
    }

    @Test func listsWithFiltersAndKeysetPaging() async throws {
        let db = try TempDatabase()
        let p = try await project(db)
        let other = try await project(db, "other")
        let store = SQLiteIngestStore(database: db.database)
        let reports = (1...25).map { report($0, kind: $0 % 5 == 0 ? .nonfatal : .crash, version: $0 <= 10 ? "1.0" : "2.0", at: 1_795_000_000 + Double($0)) }
        _ = try await store.commit([
            .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: reports)),
            .reports(ReportBatch(project: other.id, receivedAt: Date(), payload: payload, reports: [report(100)])),
        ])
        let reader = SQLiteReportReader(database: db.database)
        var seen: [EventID] = []
        var cursor: Int64?
        repeat {
            let page = try await reader.reports(matching: ReportQuery(project: p.id, before: cursor, limit: 10))
            seen += page.map(\.eventID)
            cursor = page.count == 10 ? page.last?.cursor : nil
        } while cursor != nil
        #expect(seen == (1...25).reversed().map(eventID))  // newest first, every report exactly once

        #expect(try await reader.reports(matching: ReportQuery(project: p.id, kind: .nonfatal)).count == 5)
        #expect(try await reader.reports(matching: ReportQuery(project: p.id, release: "1.0")).count == 10)
        let since = try await reader.reports(matching: ReportQuery(project: p.id, since: Date(timeIntervalSince1970: 1_795_000_021)))
        #expect(since.map(\.eventID) == [25, 24, 23, 22, 21].map(eventID))
        #expect(try await reader.reports(matching: ReportQuery(project: nil)).count == 26)

        let summary = try #require(try await reader.reports(matching: ReportQuery(project: p.id, limit: 1)).first)
        #expect(summary.errorType == "SIGSEGV")
        #expect(summary.userKey == "user-1")
        #expect(summary.trimmed.customKeysDropped == 1)
    }

    @Test func rawReportsPointIntoTheirPayload() async throws {
        let db = try TempDatabase()
        let p = try await project(db)
        _ = try await SQLiteIngestStore(database: db.database).commit([
            .reports(ReportBatch(project: p.id, receivedAt: Date(timeIntervalSince1970: 5), payload: payload, reports: [report(7)]))
        ])
        let reader = SQLiteReportReader(database: db.database)
        let raw = try #require(try await reader.rawReport(eventID: eventID(7), project: p.id))
        #expect(raw.payload == payload)
        #expect(raw.range == 70..<80)
        #expect(raw.summary.receivedAt == Date(timeIntervalSince1970: 5))
        #expect(try await reader.rawReport(eventID: eventID(7), project: ProjectID(p.id.rawValue + 1)) == nil)
    }

    @Test func sessionUpdatesMergeInStorage() async throws {
        let db = try TempDatabase()
        let p = try await project(db)
        let store = SQLiteIngestStore(database: db.database)
        let id = SessionID("s-1")!
        func update(_ status: SessionStatus, errors: Int) -> SessionUpdate {
            SessionUpdate(sessionID: id, distinctID: "u", release: "1.0", started: Date(timeIntervalSince1970: 100), status: status, errors: errors)
        }
        let outcomes = try await store.commit([
            .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: [update(.ok, errors: 1), update(.ok, errors: 1), update(.crashed, errors: 1)])),
            .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: [update(.exited, errors: 0)])),
        ])
        #expect(outcomes == [.sessions(applied: 2, unchanged: 1), .sessions(applied: 0, unchanged: 1)])
        let state = try #require(try await SQLiteReportReader(database: db.database).session(project: p.id, id: id))
        #expect(state.status == .crashed)
        #expect(state.errors == 1)
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
            let reopened = try FaultlineDatabase(path: folder + "/faultline.sqlite")
            #expect(try await SQLiteReportReader(database: reopened).counts().reports == 1)
            #expect(try reopened.appliedMigrations() == Migrations.migrator.migrations)
        }
    }
}
