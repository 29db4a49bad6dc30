import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// The worker's batch transaction (`saveAll`) asks some things once per batch (`BatchReads`: debug-file ranks,
/// files stored after the batch was read, alert settings) and writes each report's modules in one statement. It
/// must leave exactly the rows that saving the same results one at a time leaves, and never answer one project
/// with another's data.
@Suite struct BatchSaveTests {
    let day0: Double = 86_400 * 20_400  // a UTC midnight
    static let app = "aaaaaaaaaaaaaaaa"
    static let lib = "bbbbbbbbbbbbbbbb"

    func project(_ db: TempDatabase, _ slug: String) async throws -> Project {
        try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug(slug)!, ingestKeyHash: SecretHash(hex: String(repeating: slug == "one" ? "a" : "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: slug == "one" ? "b" : "d", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1), rateLimitPerSecond: 50)
    }

    /// Stores reports `numbers` in `project`: the same release and day, users cycling over a few.
    func store(_ db: TempDatabase, _ project: Project, _ numbers: ClosedRange<Int>) async throws -> [Int64] {
        let prepared = numbers.map { n -> PreparedReport in
            var r = Report(eventID: eventID(n), kind: .crash, timestamp: Date(timeIntervalSince1970: day0 + Double(n)))
            r.app = AppInfo(version: "1.0")
            r.userID = "user-\(n % 4)"
            return PreparedReport(report: r, range: 0..<1)
        }
        _ = try await SQLiteIngestStore(database: db.database).commit([
            .reports(ReportBatch(project: project.id, receivedAt: Date(), payload: payload, reports: prepared))
        ])
        return try await db.database.pool.read { db in
            try numbers.map { try Int64.fetchOne(db, sql: "SELECT id FROM reports WHERE event_id = ?", arguments: [eventID($0).rawValue])! }
        }
    }

    /// A result that touched two modules (one resolved, one missing) and a grouping of `site`.
    func outcome(_ reportID: Int64, site: String, filesSeen: Int64 = 0) -> SymbolicationOutcome {
        let result = SymbolicatedReport(
            state: .partial,
            threads: [[
                SymbolicatedFrameSlot(frames: [ResolvedFrame(function: site, file: "/src/a.c", line: 3)], buildID: Self.app, status: "dwarf", offset: 16),
                SymbolicatedFrameSlot(frames: [], buildID: Self.lib, status: "missing_debug_file", offset: 32),
            ]],
            missing: [MissingModule(buildID: Self.lib, module: "liblib.so")])
        let grouping = GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site], title: "crash in \(site)", culprit: site),
            tags: ["device": "Pixel \(reportID % 3)", "os": "Android 14"])
        return SymbolicationOutcome(
            reportID: reportID, result: result, grouping: grouping, filesSeen: filesSeen,
            modules: [Self.app: "libapp.so", Self.lib: "liblib.so"])
    }

    /// Every rollup, issue and module row, by value (ids replaced by the fingerprint), for comparing two databases.
    func snapshot(_ db: TempDatabase) async throws -> [String] {
        try await db.database.pool.read { db in
            let queries = [
                """
                SELECT p.slug, i.fingerprint, i.events, i.users, i.repeat_users, i.first_seen, i.last_seen, i.first_release,
                    i.last_release, i.early_events, i.timed_events, i.status, i.title FROM issues i JOIN projects p ON p.id = i.project_id
                """,
                "SELECT i.fingerprint, r.release, r.events, r.users, r.first_seen, r.last_seen FROM issue_releases r JOIN issues i ON i.id = r.issue_id",
                "SELECT i.fingerprint, d.day, d.events, d.users FROM issue_days d JOIN issues i ON i.id = d.issue_id",
                "SELECT i.fingerprint, u.user_key, u.events FROM issue_users u JOIN issues i ON i.id = u.issue_id",
                "SELECT i.fingerprint, u.release, u.user_key, u.events FROM issue_release_users u JOIN issues i ON i.id = u.issue_id",
                "SELECT i.fingerprint, u.day, u.user_key, u.events FROM issue_day_users u JOIN issues i ON i.id = u.issue_id",
                "SELECT i.fingerprint, t.key, t.value, t.events FROM issue_tags t JOIN issues i ON i.id = t.issue_id",
                "SELECT p.slug, a.kind, a.dedupe_key IS NOT NULL, a.title FROM alerts a JOIN projects p ON p.id = a.project_id",
                """
                SELECT r.event_id, r.symbolication, i.fingerprint, m.build_id, m.module, m.release, m.rank, m.project_id = r.project_id
                FROM reports r LEFT JOIN issues i ON i.id = r.issue_id LEFT JOIN report_modules m ON m.report_id = r.id
                """,
            ]
            return try queries.flatMap { sql in
                try Row.fetchAll(db, sql: sql).map { row in row.description }.sorted()
            }
        }
    }

    @Test func aBatchOfOneIssueCountsWhatOneAtATimeCounts() async throws {
        // Given: the same 40 reports (one release, one day, 4 users, two crash sites) in two databases.
        let batched = try TempDatabase()
        let single = try TempDatabase()
        var outcomes: [[SymbolicationOutcome]] = []
        for db in [batched, single] {
            let p = try await project(db, "one")
            let ids = try await store(db, p, 1...40)
            outcomes.append(ids.enumerated().map { outcome($1, site: $0 % 8 == 0 ? "rare" : "common") })
        }

        // When: one saves them in one batch, the other one report per transaction.
        try await SQLiteSymbolicationStore(database: batched.database).saveAll(outcomes[0], at: Date(timeIntervalSince1970: day0))
        let store = SQLiteSymbolicationStore(database: single.database)
        for o in outcomes[1] { try await store.saveAll([o], at: Date(timeIntervalSince1970: day0)) }

        // Then: the same issues, counters, rollup rows, alerts and module rows.
        let a = try await snapshot(batched)
        let b = try await snapshot(single)
        #expect(a.count == b.count)
        #expect(a.filter { !b.contains($0) } == [])
        #expect(b.filter { !a.contains($0) } == [])
        let (issues, events, moduleRows) = try await batched.database.pool.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM issues")!,
             try Int.fetchOne(db, sql: "SELECT sum(events) FROM issues")!,
             try Int.fetchOne(db, sql: "SELECT count(*) FROM report_modules")!)
        }
        #expect(issues == 2)
        #expect(events == 40)
        #expect(moduleRows == 80)
    }

    @Test func aBatchMixingProjectsNeverAnswersOneWithTheOthersData() async throws {
        // Given: two projects with reports of the same crash site and modules; only `one` has a debug file for the
        // app module (stored after the batch was read) and only `two` wants new-issue alerts.
        let db = try TempDatabase()
        let one = try await project(db, "one")
        let two = try await project(db, "two")
        var settings = AlertSettings()
        settings.alertOnNewIssue = false
        try await SQLiteAlertStore(database: db.database).saveSettings(settings, project: one.id, at: Date())
        let idsOne = try await store(db, one, 1...6)
        let idsTwo = try await store(db, two, 7...12)
        try await db.database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO debug_files (project_id, build_id, kind, size, architecture, file_type, features, uploaded_at,
                        blob_sha256, stored_seq) VALUES (?, ?, 'debuginfo', 1, 'x86_64', 'elf', '', 0, ?, 5)
                    """,
                arguments: [one.id.rawValue, Self.app, String(repeating: "e", count: 64)])
        }

        // When: one batch, the projects' reports interleaved, read before the file (sequence 4).
        let mixed = zip(idsOne, idsTwo).flatMap { [outcome($0, site: "same", filesSeen: 4), outcome($1, site: "same", filesSeen: 4)] }
        try await SQLiteSymbolicationStore(database: db.database).saveAll(mixed, at: Date())

        // Then: `one`'s reports stay queued (its file came after the batch) and are not grouped; `two`'s are grouped
        // under its own issue, with its own alert, and ranks of its own (none) for the module `one` has a file for.
        try await db.database.pool.read { db in
            let states = try Row.fetchAll(db, sql: "SELECT project_id, symbolication, issue_id FROM reports ORDER BY id")
            for row in states where (row["project_id"] as Int64) == one.id.rawValue {
                #expect(row["symbolication"] as String == "pending")
                #expect((row["issue_id"] as Int64?) == nil)
            }
            for row in states where (row["project_id"] as Int64) == two.id.rawValue {
                #expect(row["symbolication"] as String == "partial")
                #expect((row["issue_id"] as Int64?) != nil)
            }
            let issues = try Row.fetchAll(db, sql: "SELECT project_id, events FROM issues")
            #expect(issues.count == 1)
            #expect(issues.first.map { $0["project_id"] as Int64 } == two.id.rawValue)
            #expect(issues.first.map { $0["events"] as Int } == 6)
            let alerts = try Int.fetchOne(db, sql: "SELECT count(*) FROM alerts WHERE project_id = ?", arguments: [two.id.rawValue])
            #expect(alerts == 1)
            let ranks = try Row.fetchAll(
                db, sql: "SELECT m.project_id, m.build_id, m.rank FROM report_modules m JOIN reports r ON r.id = m.report_id AND r.project_id = m.project_id")
            #expect(ranks.count == 24)
            for row in ranks {
                let project: Int64 = row["project_id"]
                let buildID: String = row["build_id"]
                let rank: Int = row["rank"]
                let expected = buildID == Self.app && project == one.id.rawValue ? DebugDataRank.debuginfo.rawValue : DebugDataRank.none.rawValue
                #expect(rank == expected, "project \(project) build \(buildID)")
            }
        }

        // And when the same batch is saved again read after the file, `one`'s reports are grouped, without alerts.
        let again = idsOne.map { outcome($0, site: "same", filesSeen: 5) }
        try await SQLiteSymbolicationStore(database: db.database).saveAll(again, at: Date())
        let counts = try await db.database.pool.read { db in
            [try Int.fetchOne(db, sql: "SELECT count(*) FROM issues WHERE project_id = ?", arguments: [one.id.rawValue]),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM alerts WHERE project_id = ?", arguments: [one.id.rawValue]),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE symbolication = 'pending'")]
        }
        #expect(counts == [1, 0, 0])
    }

    /// A batch is first saved without savepoints; a report the database refuses sends it back through the per-report
    /// savepoints, where that report alone leaves the queue failed and the rest of the batch is saved and counted.
    @Test func aReportTheDatabaseRefusesFailsAloneAndTheRestOfItsBatchIsSaved() async throws {
        let db = try TempDatabase()
        let one = try await project(db, "one")
        let ids = try await store(db, one, 1...5)
        let refused = ids[2]
        // Given the schema refuses one report's result (a trigger stands in for any constraint)…
        try await db.database.pool.write { db in
            try db.execute(sql: """
                CREATE TRIGGER refuse_one BEFORE INSERT ON report_symbols WHEN NEW.report_id = \(refused)
                BEGIN SELECT RAISE(ABORT, 'refused'); END
                """)
        }
        // When the batch is saved…
        try await SQLiteSymbolicationStore(database: db.database).saveAll(ids.map { outcome($0, site: "same") }, at: Date())
        // Then that report is failed, ungrouped, and no row of it was half written; the four others are grouped once.
        try await db.database.pool.read { db in
            for row in try Row.fetchAll(db, sql: "SELECT id, symbolication, symbolication_failure, issue_id FROM reports ORDER BY id") {
                let id: Int64 = row["id"]
                if id == refused {
                    #expect(row["symbolication"] as String == "missing")
                    #expect(row["symbolication_failure"] as String? == "the database refused the symbolication result")
                    #expect((row["issue_id"] as Int64?) == nil)
                } else {
                    #expect(row["symbolication"] as String == "partial")
                    #expect((row["issue_id"] as Int64?) != nil)
                }
            }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM report_modules WHERE report_id = ?", arguments: [refused]) == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT events FROM issues") == 4)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM report_symbols") == 4)
        }
    }
}
