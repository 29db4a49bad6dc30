import FaultlineCore
import Foundation
import GRDB
import TestSupport
import Testing

@testable import SQLiteStorage

/// Migration v11-report-modules on a database filled as the previous version left it.
@Suite struct ReportModulesMigrationTests {
    @Test func ranksAreDerivedFromStoredResultsAndStuckReportsAreQueuedOnce() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("v11-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let queue = try DatabaseQueue(path: folder + "/old.sqlite")
        try SQLiteMigrations.migrator.migrate(queue, upTo: "v10-privacy-settings")
        func slot(_ id: String, _ status: String) -> String {
            #"{"build_id":"\#(id)","frames":[],"offset":4,"status":"\#(status)"}"#
        }
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
            let results: [(Int, Int, String)] = [
                // 1: resolved against the executable while project 1 now has the debug file: stuck before, queued now.
                (
                    1, 1,
                    #"{"missing":[],"state":"partial","threads":[[\#(slot("aa11", "symbol_table")),\#(slot("aa11", "not_found"))]]}"#
                ),
                // 2: resolved from DWARF: rank 2, left alone.
                (
                    2, 1,
                    #"{"missing":[],"state":"complete","threads":[[\#(slot("aa11", "dwarf")),\#(slot("aa11", "symbol_table"))]]}"#
                ),
                // 3: lacked bb22, which nobody uploaded: rank 0 with its module name, left alone.
                (
                    3, 1,
                    #"{"missing":[{"build_id":"bb22","module":"libfoo"}],"state":"missing","threads":[[\#(slot("bb22", "missing_debug_file"))]]}"#
                ),
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
                try db.execute(
                    sql: "INSERT INTO report_symbols (report_id, result, updated_at) VALUES (?, ?, 0)",
                    arguments: [id, Data(json.utf8)])
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

        try SQLiteMigrations.migrator.migrate(queue)

        try queue.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT report_id, build_id, module, rank FROM report_modules ORDER BY report_id, build_id"
            )
            .map {
                "\($0["report_id"] as Int64) \($0["build_id"] as String) \($0["module"] as String? ?? "-") \($0["rank"] as Int)"
            }
            #expect(rows == ["1 aa11 - 1", "2 aa11 - 2", "3 bb22 libfoo 0", "5 aa11 - 1"])
            let pending = try Int64.fetchAll(
                db, sql: "SELECT id FROM reports WHERE symbolication = 'pending' ORDER BY id")
            #expect(pending == [1])
            #expect(try !db.tableExists("report_missing_debug_files"))
            #expect(try Int64.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'debug_files'") == 0)
        }
    }
}
