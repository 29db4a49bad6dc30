import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// The search index on a real SQLite file (migration v15-search-index): entries are written with the
/// symbolication result, replaced when a report is processed again, removed with their reports (retention,
/// project deletion), and one project's search never sees another's entries.
@Suite struct SearchIndexTests {
    let rollups = SQLiteFixture()
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// A processed report's document: user, custom key, function and error given.
    func document(_ n: Int, user: String, key: String, function: String, message: String) -> SearchDocument {
        var report = Report(eventID: eventID(n), kind: .crash, timestamp: now)
        report.userID = user
        report.app = AppInfo(version: "1.0", build: "7")
        report.customKeys = [(key: "plan", value: .string(key))]
        report.error = ErrorInfo(type: "SIGSEGV", message: message)
        report.threads = [ThreadInfo(crashed: true, frames: [Frame(address: 0x1000)])]
        let symbols = SymbolicatedReport(
            state: .complete,
            threads: [[SymbolicatedFrameSlot(frames: [ResolvedFrame(function: function, file: "a.swift", line: 3)], buildID: "aa",
                                             status: "dwarf", offset: 4)]],
            missing: [])
        return SearchDocument.make(report, symbols: symbols, grouping: rollups.grouping("site").grouping)
    }

    func save(_ db: TempDatabase, _ n: Int, _ document: SearchDocument) async throws {
        try await SQLiteSymbolicationStore(database: db.database).saveAll(
            [SymbolicationOutcome(reportID: try await rollups.rowID(db, n), result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                                  grouping: rollups.grouping("site \(n)"), search: document)],
            at: now)
    }

    func find(_ db: TempDatabase, _ text: String, _ project: Project, page: Int = 1, pageSize: Int = 25) async throws -> SearchResults {
        try await SQLiteSearchStore(database: db.database).search(
            try SearchText.parse(text), project: project.id, page: page, pageSize: pageSize, now: now)
    }

    func events(_ results: SearchResults) -> [String] { results.reports.map(\.eventID.rawValue) }

    func entries(_ db: TempDatabase) async throws -> Int {
        try await db.database.pool.read { db in
            // The FTS index itself, not the content table: rows whose terms the index still holds.
            try Int.fetchOne(db, sql: "SELECT count(*) FROM search_index WHERE search_index MATCH 'sigsegv'") ?? -1
        }
    }

    func other(_ db: TempDatabase) async throws -> Project {
        try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("other")!, ingestKeyHash: SecretHash(hex: String(repeating: "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "d", count: 64)), createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
    }

    @Test func findsAReportByEveryIndexedField() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
        try await save(db, 1, document(1, user: "alice@example.com", key: "gold", function: "Inventory.item(at:)", message: "Index out of range"))
        try await save(db, 2, document(2, user: "bob", key: "silver", function: "Cart.total()", message: "Division by zero"))

        let one = eventID(1).rawValue
        #expect(events(try await find(db, "alice@example.com", a)) == [one])
        #expect(events(try await find(db, "gold", a)) == [one])
        #expect(events(try await find(db, "plan=gold", a)) == [one])
        #expect(events(try await find(db, one, a)) == [one])
        // A hyphenated event id is the same id.
        let hyphenated = "00000000-0000-0000-0000-000000000001"
        #expect(events(try await find(db, hyphenated, a)) == [one])
        #expect(events(try await find(db, "Inventory.item(at:)", a)) == [one])
        #expect(events(try await find(db, "out of range", a)) == [one])
        // The last term matches as a prefix.
        #expect(events(try await find(db, "Invent", a)) == [one])
        #expect(events(try await find(db, "division", a)) == [eventID(2).rawValue])
        // Both match a shared term, newest first; every word must match.
        #expect(events(try await find(db, "SIGSEGV", a)) == [eventID(2).rawValue, one])
        #expect(events(try await find(db, "SIGSEGV bob", a)) == [eventID(2).rawValue])
        #expect(events(try await find(db, "alice bob", a)).isEmpty)
        // The issue comes with its reports.
        let results = try await find(db, "gold", a)
        #expect(results.issues.map(\.title) == ["crash in site 1"])
        #expect(results.reportCount == 1 && !results.reportCountIsLowerBound)
    }

    @Test func hostileQueriesAreTextNotSyntax() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil)])
        try await save(db, 1, document(1, user: "alice", key: "gold", function: "main", message: "boom"))
        // FTS5 syntax typed by a user neither errors nor widens the search.
        for text in ["\"", "alice\"", "NEAR(alice gold)", "user:alice", "{user}: alice", "*", "a*", "alice OR bob", "NOT alice",
                     "(alice", "alice)", "^alice", "project : p1", "p1", "\u{0}alice"] {
            let results = try await find(db, text, a)
            // Operators and column names are words to match like any other (no report holds "near", "user" or "or").
            let expected = ["alice\"", "(alice", "alice)", "^alice", "\u{0}alice"].contains(text)
            #expect(events(results) == (expected ? [eventID(1).rawValue] : []), "\(text)")
        }
        #expect(throws: SearchTextError.self) { try SearchText.parse(String(repeating: "a", count: 257)) }
        #expect(throws: SearchTextError.self) { try SearchText.parse((0..<17).map { "w\($0)" }.joined(separator: " ")) }
    }

    @Test func reprocessingReplacesTheEntry() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil)])
        try await save(db, 1, document(1, user: "alice", key: "gold", function: "frameBefore", message: "boom"))
        #expect(events(try await find(db, "frameBefore", a)).count == 1)
        // Late symbols: processed again with other function names.
        try await save(db, 1, document(1, user: "alice", key: "gold", function: "frameAfter", message: "boom"))
        #expect(events(try await find(db, "frameBefore", a)).isEmpty)
        #expect(events(try await find(db, "frameAfter", a)) == [eventID(1).rawValue])
        #expect(try await entries(db) == 1)
        try await db.database.pool.write { db in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM search_documents") == 1)
            // The index agrees with its content table (FTS5 raises SQLITE_CORRUPT otherwise).
            try db.execute(sql: "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        }
    }

    @Test func oneProjectNeverFindsAnothersReports() async throws {
        let (db, a) = try await rollups.setUp()
        let b = try await other(db)
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil)])
        try await rollups.store(db, b, [(2, "1.0", "u2", 20, nil)])
        try await save(db, 1, document(1, user: "shared-user", key: "gold", function: "main", message: "boom in a"))
        try await save(db, 2, document(2, user: "shared-user", key: "gold", function: "main", message: "boom in b"))

        for text in ["shared-user", "gold", "main", "boom", eventID(2).rawValue, "SIGSEGV"] {
            let fromA = try await find(db, text, a)
            #expect(!events(fromA).contains(eventID(2).rawValue), "\(text)")
            #expect(fromA.issues.allSatisfy { $0.project == a.id })
            let fromB = try await find(db, text, b)
            #expect(!events(fromB).contains(eventID(1).rawValue), "\(text)")
        }
        #expect(events(try await find(db, eventID(2).rawValue, b)) == [eventID(2).rawValue])
        // The other project's token, typed as text, finds nothing either.
        #expect(events(try await find(db, "p\(b.id.rawValue)", a)).isEmpty)
    }

    @Test func retentionAndProjectDeletionRemoveEntries() async throws {
        let (db, a) = try await rollups.setUp()
        let b = try await other(db)
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil)], receivedAt: Date(timeIntervalSince1970: 1_000))
        try await rollups.store(db, a, [(2, "1.0", "u2", 20, nil)], receivedAt: now)
        try await rollups.store(db, b, [(3, "1.0", "u3", 30, nil)], receivedAt: now)
        for n in 1...3 { try await save(db, n, document(n, user: "user\(n)", key: "gold", function: "main", message: "boom")) }
        #expect(try await entries(db) == 3)

        // Retention drops the old payload, its report and the report's entry.
        let pruned = try await SQLiteRetentionStore(database: db.database).prune(before: Date(timeIntervalSince1970: 2_000), limit: 100)
        #expect(pruned.reports == 1)
        #expect(events(try await find(db, "gold", a)) == [eventID(2).rawValue])
        #expect(try await entries(db) == 2)

        // Deleting a project drops its entries; the other project's stay.
        try await db.database.pool.write { db in try db.execute(sql: "DELETE FROM projects WHERE id = ?", arguments: [a.id.rawValue]) }
        #expect(try await entries(db) == 1)
        #expect(events(try await find(db, "gold", b)) == [eventID(3).rawValue])
        try await db.database.pool.write { db in
            try db.execute(sql: "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 1)")
        }
    }

    @Test func countsStopAtTheLimitAndPagesGoNewestFirst() async throws {
        let (db, a) = try await rollups.setUp()
        let n = SearchResults.countLimit + 5
        try await rollups.store(db, a, (1...n).map { ($0, "1.0", "u\($0)", Double($0), nil) })
        let ids = try await db.database.pool.read { try Int64.fetchAll($0, sql: "SELECT id FROM reports ORDER BY id") }
        let blank = document(0, user: "x", key: "gold", function: "main", message: "many")
        try await SQLiteSymbolicationStore(database: db.database).saveAll(
            ids.enumerated().map { index, id in
                var doc = blank
                doc.event = eventID(index + 1).rawValue
                return SymbolicationOutcome(reportID: id, result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                                            grouping: rollups.grouping("one site"), search: doc)
            },
            at: now)
        let first = try await find(db, "many", a, page: 1, pageSize: 10)
        #expect(first.reportCount == SearchResults.countLimit && first.reportCountIsLowerBound)
        #expect(events(first) == (0..<10).map { eventID(n - $0).rawValue })
        let third = try await find(db, "many", a, page: 3, pageSize: 10)
        #expect(events(third) == (20..<30).map { eventID(n - $0).rawValue })
        #expect(first.issues.count == 1 && first.issuesFromNewestOnly)
        // A precise search counts exactly.
        let exact = try await find(db, eventID(7).rawValue, a)
        #expect(exact.reportCount == 1 && !exact.reportCountIsLowerBound)
    }

    /// A query's cost is the hits', not the project's: the joins start from the index's newest hits and look each
    /// report up by id. Left to itself, SQLite walked the project's reports (`reports_by_time`) and probed the hits
    /// for each: 3 s a query at 1 M reports, even for a text that matches nothing.
    @Test func queriesStartFromTheHitsNotFromTheProjectsReports() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, (1...50).map { ($0, "1.0", "u\($0)", Double($0), nil) })
        let match = try #require(SQLiteSearchStore.matchExpression(try SearchText.parse("nothing"), project: a.id))
        let plans = try await db.database.pool.read { db in
            try [
                (SQLiteSearchStore.pageSQL, StatementArguments([match, 25, 0, a.id.rawValue] as [any DatabaseValueConvertible])),
                (SQLiteSearchStore.issuesSQL, StatementArguments([a.id.rawValue, match, 1000] as [any DatabaseValueConvertible])),
            ].map { sql, arguments in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }
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
        try Migrations.migrator.migrate(queue, upTo: "v14-issue-status-history")
        try queue.write { db in
            for project in [1, 2] {
                try db.execute(sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)",
                               arguments: [project, "p\(project)"])
                try db.execute(sql: "INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes) VALUES (?, ?, 0, 'gzip', 1, x'00')",
                               arguments: [project, project])
            }
            try db.execute(sql: """
                INSERT INTO issues (id, project_id, fingerprint, kind, grouping, title, first_seen, last_seen, updated_at)
                VALUES (1, 1, 'v2:aaaa', 'crash', '{}', 'Fatal error: Index out of range', 0, 0, 0)
                """)
            for (id, project, user, state, issue) in [(1, 1, "legacy-user", "complete", 1 as Int?), (2, 1, "queued-user", "pending", nil),
                                                       (3, 2, "legacy-user", "complete", nil)] {
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
        try Migrations.migrator.migrate(queue)
        // …then the processed reports are found by what their rows say, each in its own project; the queued one gets
        // its entry when it is processed.
        func found(_ text: String, _ project: Int) throws -> [Int64] {
            guard let match = SQLiteSearchStore.matchExpression(try SearchText.parse(text), project: ProjectID(Int64(project))) else {
                return []
            }
            return try queue.read { db in
                try Int64.fetchAll(db, sql: "SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rowid", arguments: [match])
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
