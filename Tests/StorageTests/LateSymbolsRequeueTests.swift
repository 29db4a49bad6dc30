import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import TestSupport
import Testing

/// Late symbols on a real SQLite file (migration v11-report-modules): storing a debug file queues exactly the
/// reports of that project whose result for the build-id was made with less, in the transaction that stores it.
@Suite struct LateSymbolsRequeueTests {
    let rollups = SQLiteFixture()
    let x = BuildID("aa11")!
    let y = BuildID("bb22")!
    let executableFacts = DebugFileFacts(
        buildID: nil, kinds: [.executable], architecture: "x86_64", fileType: "executable", features: [],
        compressedDebugSections: false)
    let debugFacts = DebugFileFacts(
        buildID: nil, kinds: [.debuginfo], architecture: "x86_64", fileType: "executable", features: ["debug"],
        compressedDebugSections: false)

    /// A result whose one frame fell in `buildID`, with `status`.
    func result(_ buildID: BuildID, _ status: String) -> SymbolicatedReport {
        let missing = status == "missing_debug_file" ? [MissingModule(buildID: buildID.rawValue, module: "app")] : []
        let frames = status == "dwarf" ? [ResolvedFrame(function: "f", file: "f.c", line: 1)] : []
        return SymbolicatedReport(
            state: status == "dwarf" ? .complete : .missing,
            threads: [[SymbolicatedFrameSlot(frames: frames, buildID: buildID.rawValue, status: status, offset: 4)]], missing: missing)
    }

    func save(_ store: SQLiteSymbolicationStore, _ reportID: Int64, _ result: SymbolicatedReport, seen: Int64? = nil) async throws {
        try await store.saveAll(
            [SymbolicationOutcome(reportID: reportID, result: result, grouping: rollups.grouping("site \(reportID)"), filesSeen: seen,
                                  modules: [x.rawValue: "app", y.rawValue: "lib"])],
            at: Date())
    }

    func upload(_ files: SQLiteDebugFileStore, _ text: String, _ facts: DebugFileFacts, _ id: BuildID, _ project: ProjectID) async throws {
        let upload = try files.temporaryUpload()
        try Data(text.utf8).write(to: URL(fileURLWithPath: upload.path))
        let file = ReceivedDebugFile(upload: upload, sha256: try CoreutilsSHA256().sha256(ofFileAt: upload.path), size: UInt64(text.utf8.count))
        let outcome = try await files.store(file, facts: facts, buildID: id, project: project, name: nil, quotaBytes: 1 << 20, at: Date())
        guard case .stored = outcome else { throw StorageError(.openFailed, "not stored") }
    }

    func pending(_ db: TempDatabase) async throws -> Set<Int64> {
        try await db.database.pool.read { Set(try Int64.fetchAll($0, sql: "SELECT id FROM reports WHERE symbolication = 'pending'")) }
    }

    func rank(_ db: TempDatabase, _ reportID: Int64, _ id: BuildID) async throws -> Int? {
        try await db.database.pool.read {
            try Int.fetchOne($0, sql: "SELECT rank FROM report_modules WHERE report_id = ? AND build_id = ?", arguments: [reportID, id.rawValue])
        }
    }

    @Test func aBetterFileQueuesExactlyTheOutrankedReportsOfItsProject() async throws {
        let (db, a) = try await rollups.setUp()
        let b = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("other")!, ingestKeyHash: SecretHash(hex: String(repeating: "c", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "d", count: 64)), createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil), (3, "1.0", "u3", 30, nil)])
        try await rollups.store(db, b, [(4, "1.0", "u4", 40, nil), (5, "1.0", "u5", 50, nil)])
        let (r1, r2, r3) = (try await rollups.rowID(db, 1), try await rollups.rowID(db, 2), try await rollups.rowID(db, 3))
        let (r4, r5) = (try await rollups.rowID(db, 4), try await rollups.rowID(db, 5))
        let store = SQLiteSymbolicationStore(database: db.database)
        let files = try SQLiteDebugFileStore(database: db.database, root: db.folder + "/debug-files")

        // Given: every report was symbolicated without any file: r1, r2 (A) and r4, r5 (B) lacked X, r3 (A) lacked Y.
        for id in [r1, r2, r4, r5] { try await save(store, id, result(x, "missing_debug_file")) }
        try await save(store, r3, result(y, "missing_debug_file"))
        #expect(try await pending(db).isEmpty)
        #expect(try await rank(db, r1, x) == 0)

        // When A's stripped executable of X arrives: A's reports that lacked X are queued; r3 (Y) and B's are not.
        try await upload(files, "a executable", executableFacts, x, a.id)
        #expect(try await pending(db) == [r1, r2])
        let listed = try await store.missingDebugFiles(project: a.id, release: nil)
        #expect(listed.first { $0.buildID == x }?.has == [.executable])
        #expect(listed.first { $0.buildID == y }?.has == [])
        #expect(try await store.missingDebugFiles(project: b.id, release: nil).first { $0.buildID == x }?.has == [])

        // They are redone with the executable only (rank 1): still listed as lacking debug information.
        try await save(store, r1, result(x, "not_found"))
        try await save(store, r2, result(x, "not_found"))
        #expect(try await rank(db, r1, x) == 1)
        #expect(try await pending(db).isEmpty)
        #expect(try await store.missingDebugFiles(project: a.id, release: nil).first { $0.buildID == x }?.reports == 2)

        // The same bytes again change nothing: nothing is queued.
        try await upload(files, "a executable", executableFacts, x, a.id)
        #expect(try await pending(db).isEmpty)

        // The debug file outranks the executable: r1 and r2 again, nothing else (not B's r4/r5, which lack X too).
        try await upload(files, "a debug", debugFacts, x, a.id)
        #expect(try await pending(db) == [r1, r2])
        try await save(store, r1, result(x, "dwarf"))
        try await save(store, r2, result(x, "dwarf"))
        #expect(try await rank(db, r2, x) == 2)
        #expect(try await store.missingDebugFiles(project: a.id, release: nil).map(\.buildID) == [y])

        // A rebuilt executable does not outrank the debug file the reports were made with: nothing is queued.
        try await upload(files, "a executable v2", executableFacts, x, a.id)
        #expect(try await pending(db) == [])
        // B's reports of X still wait for B's own file, and are queued by it alone.
        try await upload(files, "b debug", debugFacts, x, b.id)
        #expect(try await pending(db) == [r4, r5])
        try await save(store, r4, result(x, "dwarf"))
        try await save(store, r5, result(x, "dwarf"))

        // A replaces its debug file with different bytes: the reports made with the old one are redone, only A's.
        try await upload(files, "a debug, rebuilt", debugFacts, x, a.id)
        #expect(try await pending(db) == [r1, r2])
    }

    /// A source bundle (kind `sources`, migration v16-source-bundles) is stored beside the symbols of its build-id
    /// but resolves no address: it queues no report, takes no change sequence value, and does not count as
    /// debug information on the missing-debug-files list.
    @Test func aSourceBundleQueuesNothingAndIsNotDebugInformation() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil)])
        let r1 = try await rollups.rowID(db, 1)
        let store = SQLiteSymbolicationStore(database: db.database)
        let files = try SQLiteDebugFileStore(database: db.database, root: db.folder + "/debug-files")
        try await save(store, r1, result(x, "missing_debug_file"))
        let sequence = try await db.database.pool.read { try SQLiteSymbolicationStore.debugFileSequence($0) }
        let sourceFacts = DebugFileFacts(
            buildID: x, kinds: [.sources], architecture: "x86_64", fileType: "source_bundle", features: ["sources"],
            compressedDebugSections: false)

        try await upload(files, "SYSB bundle", sourceFacts, x, a.id)
        #expect(try await pending(db).isEmpty)
        #expect(try await db.database.pool.read { try SQLiteSymbolicationStore.debugFileSequence($0) } == sequence)
        #expect(try await files.kinds(of: x, project: a.id) == [.sources])
        #expect(try await files.path(of: x, kind: .sources, project: a.id) != nil)
        #expect(try await files.path(of: x, kind: .debuginfo, project: a.id) == nil)
        let listed = try await store.missingDebugFiles(project: a.id, release: nil)
        #expect(listed.first { $0.buildID == x }?.has == [.sources])
        // The debug file that arrives next still queues the report, and leaves the bundle in place.
        try await upload(files, "a debug", debugFacts, x, a.id)
        #expect(try await pending(db) == [r1])
        #expect(try await files.kinds(of: x, project: a.id) == [.debuginfo, .sources])
    }

    @Test func aResultMadeBeforeAFileWasStoredStaysQueuedAndUngrouped() async throws {
        let (db, a) = try await rollups.setUp()
        try await rollups.store(db, a, [(1, "1.0", "u1", 10, nil), (2, "1.0", "u2", 20, nil)])
        let (r1, r2) = (try await rollups.rowID(db, 1), try await rollups.rowID(db, 2))
        let store = SQLiteSymbolicationStore(database: db.database)
        let files = try SQLiteDebugFileStore(database: db.database, root: db.folder + "/debug-files")
        let seen = try #require(try await store.pending(limit: 10).first?.filesSeen)

        // A file of X is stored after the batch was read; r1's result touched X, r2's only Y.
        try await upload(files, "debug", debugFacts, x, a.id)
        try await save(store, r1, result(x, "missing_debug_file"), seen: seen)
        try await save(store, r2, result(y, "missing_debug_file"), seen: seen)
        #expect(try await pending(db) == [r1])
        let issues = try await db.database.pool.read {
            try Row.fetchAll($0, sql: "SELECT id, issue_id FROM reports ORDER BY id").map { ($0["id"] as Int64, $0["issue_id"] as Int64?) }
        }
        #expect(issues.first { $0.0 == r1 }?.1 == nil)
        #expect(issues.first { $0.0 == r2 }?.1 != nil)
        // The next batch reads the new sequence: its result is final.
        let next = try #require(try await store.pending(limit: 10).first)
        #expect(next.filesSeen > seen)
        try await save(store, r1, result(x, "dwarf"), seen: next.filesSeen)
        #expect(try await pending(db).isEmpty)
    }
}

/// Migration v11-report-modules on a database filled as the previous version left it.
@Suite struct ReportModulesMigrationTests {
    @Test func ranksAreDerivedFromStoredResultsAndStuckReportsAreQueuedOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("v11-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = try DatabaseQueue(path: folder + "/old.sqlite")
        try Migrations.migrator.migrate(queue, upTo: "v10-privacy-settings")
        func slot(_ id: String, _ status: String) -> String { #"{"build_id":"\#(id)","frames":[],"offset":4,"status":"\#(status)"}"# }
        try queue.write { db in
            for project in [1, 2] {
                try db.execute(sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)",
                               arguments: [project, "p\(project)"])
                try db.execute(sql: "INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes) VALUES (?, ?, 0, 'gzip', 1, x'00')",
                               arguments: [project, project])
            }
            let results: [(Int, Int, String)] = [
                // 1: resolved against the executable while project 1 now has the debug file: stuck before, queued now.
                (1, 1, #"{"missing":[],"state":"partial","threads":[[\#(slot("aa11", "symbol_table")),\#(slot("aa11", "not_found"))]]}"#),
                // 2: resolved from DWARF: rank 2, left alone.
                (2, 1, #"{"missing":[],"state":"complete","threads":[[\#(slot("aa11", "dwarf")),\#(slot("aa11", "symbol_table"))]]}"#),
                // 3: lacked bb22, which nobody uploaded: rank 0 with its module name, left alone.
                (3, 1, #"{"missing":[{"build_id":"bb22","module":"libfoo"}],"state":"missing","threads":[[\#(slot("bb22", "missing_debug_file"))]]}"#),
                // 4: a result that is not JSON: no rows, and the migration does not fail.
                (4, 1, "not json"),
                // 5: project 2 resolved aa11 with its executable; project 1's debug file is not project 2's.
                (5, 2, #"{"missing":[],"state":"partial","threads":[[\#(slot("aa11", "symbol_table"))]]}"#),
            ]
            for (id, project, json) in results {
                try db.execute(
                    sql: """
                        INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, payload_id, payload_offset,
                                             payload_length, symbolication)
                        VALUES (?, ?, ?, 'crash', 0, 0, '1.0', ?, 0, 1, 'partial')
                        """,
                    arguments: [id, project, String(repeating: String(id), count: 32), project])
                try db.execute(sql: "INSERT INTO report_symbols (report_id, result, updated_at) VALUES (?, ?, 0)", arguments: [id, Data(json.utf8)])
            }
            try db.execute(sql: "INSERT INTO report_missing_debug_files VALUES (3, 1, 'bb22', 'libfoo', '1.0')")
            for (project, kind) in [(1, "debuginfo"), (1, "executable"), (2, "executable")] {
                try db.execute(
                    sql: """
                        INSERT INTO debug_files (project_id, build_id, kind, size, architecture, file_type, features, uploaded_at, blob_sha256)
                        VALUES (?, 'aa11', ?, 1, 'x86_64', 'executable', '', 0, ?)
                        """,
                    arguments: [project, kind, String(repeating: "\(project)", count: 64)])
            }
        }

        try Migrations.migrator.migrate(queue)

        try queue.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT report_id, build_id, module, rank FROM report_modules ORDER BY report_id, build_id")
                .map { "\($0["report_id"] as Int64) \($0["build_id"] as String) \($0["module"] as String? ?? "-") \($0["rank"] as Int)" }
            #expect(rows == ["1 aa11 - 1", "2 aa11 - 2", "3 bb22 libfoo 0", "5 aa11 - 1"])
            let pending = try Int64.fetchAll(db, sql: "SELECT id FROM reports WHERE symbolication = 'pending' ORDER BY id")
            #expect(pending == [1])
            #expect(try !db.tableExists("report_missing_debug_files"))
            #expect(try Int64.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'debug_files'") == 0)
        }
    }
}
