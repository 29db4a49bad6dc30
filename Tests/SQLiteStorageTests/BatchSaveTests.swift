import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// The worker's batch transaction (`saveAll`) asks some things once per batch (`BatchReads`: debug-file ranks,
/// files stored after the batch was read, alert settings) and writes the batch's module rows at its end. It
/// must never answer one project with another's data. (That a batch leaves exactly the rows of saving one at a
/// time is checked on both engines: `GroupingConformanceTests`.)
@Suite struct BatchSaveTests {
    let day0: Double = 86_400 * 20_400  // a UTC midnight
    static let app = "aaaaaaaaaaaaaaaa"
    static let lib = "bbbbbbbbbbbbbbbb"

    func project(_ db: TempDatabase, _ slug: String) async throws -> Project {
        try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug(slug)!,
            ingestKeyHash: SecretHash(hex: String(repeating: slug == "one" ? "a" : "c", count: 64)),
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
            try numbers.map {
                try Int64.fetchOne(
                    db, sql: "SELECT id FROM reports WHERE event_id = ?", arguments: [eventID($0).rawValue])!
            }
        }
    }

    /// A result that touched two modules (one resolved, one missing) and a grouping of `site`.
    func outcome(_ reportID: Int64, site: String, filesSeen: Int64 = 0) -> SymbolicationOutcome {
        let result = SymbolicatedReport(
            state: .partial,
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: site, file: "/src/a.c", line: 3)], buildID: Self.app,
                        status: "dwarf", offset: 16),
                    SymbolicatedFrameSlot(frames: [], buildID: Self.lib, status: "missing_debug_file", offset: 32),
                ]
            ],
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
        let mixed = zip(idsOne, idsTwo).flatMap {
            [outcome($0, site: "same", filesSeen: 4), outcome($1, site: "same", filesSeen: 4)]
        }
        try await SQLiteSymbolicationStore(database: db.database).saveAll(mixed, at: Date())

        // Then: `one`'s reports stay queued (its file came after the batch) and are not grouped; `two`'s are grouped
        // under its own issue, with its own alert, and ranks of its own (none) for the module `one` has a file for.
        try await db.database.pool.read { db in
            let states = try Row.fetchAll(
                db, sql: "SELECT project_id, symbolication, issue_id FROM reports ORDER BY id")
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
            let alerts = try Int.fetchOne(
                db, sql: "SELECT count(*) FROM alerts WHERE project_id = ?", arguments: [two.id.rawValue])
            #expect(alerts == 1)
            let ranks = try Row.fetchAll(
                db,
                sql:
                    "SELECT m.project_id, m.build_id, m.rank FROM report_modules m JOIN reports r ON r.id = m.report_id AND r.project_id = m.project_id"
            )
            #expect(ranks.count == 24)
            for row in ranks {
                let project: Int64 = row["project_id"]
                let buildID: String = row["build_id"]
                let rank: Int = row["rank"]
                let expected =
                    buildID == Self.app && project == one.id.rawValue
                    ? DebugDataRank.debuginfo.rawValue : DebugDataRank.none.rawValue
                #expect(rank == expected, "project \(project) build \(buildID)")
            }
        }

        // And when the same batch is saved again read after the file, `one`'s reports are grouped, without alerts.
        let again = idsOne.map { outcome($0, site: "same", filesSeen: 5) }
        try await SQLiteSymbolicationStore(database: db.database).saveAll(again, at: Date())
        let counts = try await db.database.pool.read { db in
            [
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM issues WHERE project_id = ?", arguments: [one.id.rawValue]),
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM alerts WHERE project_id = ?", arguments: [one.id.rawValue]),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE symbolication = 'pending'"),
            ]
        }
        #expect(counts == [1, 0, 0])
    }

    /// A batch writes its reports' module rows after everything else (`DeferredModules`): each report's rows replace
    /// the ones it had, a report saved twice in one batch keeps the rows of its last save, and more reports and rows
    /// than one statement takes are all written.
    @Test func aBatchReplacesEachReportsModuleRowsWithItsLastSave() async throws {
        let db = try TempDatabase()
        let one = try await project(db, "one")
        let count = SQLiteSymbolicationStore.modulesPerInsert + 6
        let ids = try await store(db, one, 1...count)
        let store = SQLiteSymbolicationStore(database: db.database)
        func rows() async throws -> [String] {
            try await db.database.pool.read { db in
                try String.fetchAll(
                    db,
                    sql:
                        "SELECT report_id || ' ' || build_id || ' ' || rank FROM report_modules ORDER BY report_id, build_id"
                )
            }
        }
        // Each report touches the app (resolved) and the library (missing).
        try await store.saveAll(ids.map { outcome($0, site: "first") }, at: Date())
        #expect(try await rows() == ids.flatMap { ["\($0) \(Self.app) 0", "\($0) \(Self.lib) 0"] })

        // Again, each report twice in one batch: first as before, then touching the app module alone.
        func appOnly(_ reportID: Int64) -> SymbolicationOutcome {
            var second = outcome(reportID, site: "second")
            second.result = SymbolicatedReport(
                state: .complete,
                threads: [
                    [
                        SymbolicatedFrameSlot(
                            frames: [ResolvedFrame(function: "second", file: "/src/a.c", line: 4)], buildID: Self.app,
                            status: "dwarf", offset: 16)
                    ]
                ],
                missing: [])
            return second
        }
        try await store.saveAll(ids.flatMap { [outcome($0, site: "second"), appOnly($0)] }, at: Date())
        #expect(try await rows() == ids.map { "\($0) \(Self.app) 0" })

        // The same on its own, where no failing statement can send the batch through the per-report savepoints
        // (which would write the right rows too): the last rows of each report, in more statements than one.
        try await db.database.pool.write { db in
            let modules = SQLiteSymbolicationStore.DeferredModules()
            for id in ids {
                let row = { (buildID: String, rank: DebugDataRank) in
                    SQLiteSymbolicationStore.ModuleRow(
                        reportID: id, project: one.id.rawValue, buildID: buildID, module: nil, release: nil, rank: rank)
                }
                modules.replace(id, with: [row(Self.app, .none), row(Self.lib, .none)])
                modules.replace(id, with: [row(Self.lib, .debuginfo)])
            }
            try modules.write(db)
        }
        #expect(try await rows() == ids.map { "\($0) \(Self.lib) \(DebugDataRank.debuginfo.rawValue)" })
    }
}
