import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// What only SQLite's search index (FTS5, migration v15-search-index) has: its query plans and its migration.
/// (What search finds is checked on both engines: `SearchConformanceTests`.)
@Suite struct SearchIndexTests {
    let rollups = SQLiteFixture()
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// A query's cost is the hits', not the project's: the joins start from the index's newest hits and look each
    /// report up by id. Left to itself, SQLite walked the project's reports (`reports_by_time`) and probed the hits
    /// for each: 3 s a query at 1 M reports, even for a text that matches nothing.
    @Test func queriesStartFromTheHitsNotFromTheProjectsReports() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, (1...50).map { ($0, "1.0", "u\($0)", Double($0), nil) })
        let match = try #require(SQLiteSearchStore.matchExpression(try SearchText.parse("nothing"), project: a.id))
        let plans = try await db.database.pool.read { db in
            try [
                (
                    SQLiteSearchStore.pageSQL,
                    StatementArguments([match, 25, 0, a.id.rawValue] as [any DatabaseValueConvertible])
                ),
                (
                    SQLiteSearchStore.issuesSQL,
                    StatementArguments([a.id.rawValue, match, 1000] as [any DatabaseValueConvertible])
                ),
            ].map { sql, arguments in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map {
                    $0["detail"] as String
                }
                .joined(separator: "\n")
            }
        }
        for plan in plans {
            #expect(plan.contains("SEARCH r USING INTEGER PRIMARY KEY"), "\(plan)")
            #expect(!plan.contains("reports_by"), "\(plan)")
        }
    }

    @Test func theMigrationIndexesReportsProcessedBeforeIt() throws {
        // Given a database as v14 left it: a processed report with its issue, one still queued, in two projects.
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("v15-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = try DatabaseQueue(path: folder + "/old.sqlite")
        try SQLiteMigrations.migrator.migrate(queue, upTo: "v14-issue-status-history")
        try queue.write { db in
            for project in [1, 2] {
                try db.execute(
                    sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)",
                    arguments: [project, "p\(project)"])
                try db.execute(
                    sql:
                        "INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes) VALUES (?, ?, 0, 'gzip', 1, x'00')",
                    arguments: [project, project])
            }
            try db.execute(
                sql: """
                    INSERT INTO issues (id, project_id, fingerprint, kind, grouping, title, first_seen, last_seen, updated_at)
                    VALUES (1, 1, 'v2:aaaa', 'crash', '{}', 'Fatal error: Index out of range', 0, 0, 0)
                    """)
            for (id, project, user, state, issue) in [
                (1, 1, "legacy-user", "complete", 1 as Int?), (2, 1, "queued-user", "pending", nil),
                (3, 2, "legacy-user", "complete", nil),
            ] {
                try db.execute(
                    sql: """
                        INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, user_key, error_type,
                                             payload_id, payload_offset, payload_length, symbolication, issue_id)
                        VALUES (?, ?, ?, 'crash', 0, 0, '1.0 (7)', ?, 'SIGILL', ?, 0, 1, ?, ?)
                        """,
                    arguments: [id, project, String(repeating: String(id), count: 32), user, project, state, issue])
            }
        }
        // When v15 runs…
        try SQLiteMigrations.migrator.migrate(queue)
        // …then the processed reports are found by what their rows say, each in its own project; the queued one gets
        // its entry when it is processed.
        func found(_ text: String, _ project: Int) throws -> [Int64] {
            guard
                let match = SQLiteSearchStore.matchExpression(
                    try SearchText.parse(text), project: ProjectID(Int64(project)))
            else {
                return []
            }
            return try queue.read { db in
                try Int64.fetchAll(
                    db, sql: "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rowid",
                    arguments: [match])
            }
        }
        #expect(try found("legacy-user", 1) == [1])
        #expect(try found("legacy-user", 2) == [3])
        #expect(try found("queued-user", 1) == [])
        #expect(try found("index out of range", 1) == [1])
        #expect(try found("SIGILL", 1) == [1])
        #expect(try found("1.0", 1) == [1])
        #expect(try found(String(repeating: "1", count: 32), 1) == [1])
    }
}
