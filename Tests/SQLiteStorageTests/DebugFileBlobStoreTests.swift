import FaultlineCore
import Foundation
import GRDB
import TestSupport
import Testing

@testable import SQLiteStorage

/// The upgrade of an install from before the per-project blob store (SQLite only: PostgreSQL never had the shared
/// files). What both engines' debug-file stores do is in StoreConformanceTests.
@Suite struct DebugFileBlobStoreTests {
    @Test func anOlderInstallsSharedFilesAreAdoptedIntoBlobs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "faultline-legacy-\(UUID().uuidString)"
        ).path
        try FileManager.default.createDirectory(
            atPath: folder + "/debug-files/aa/bbccdd", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Given a database as v6 left it: two projects with rows for one build-id, one shared legacy file, and a
        // row whose file is gone.
        do {
            let pool = try DatabasePool(path: folder + "/faultline.sqlite")
            try SQLiteMigrations.migrator.migrate(pool, upTo: "v6-sentry")
            try await pool.write { db in
                for id in [1, 2] {
                    try db.execute(
                        sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)",
                        arguments: [id, "p\(id)"])
                    try db.execute(
                        sql: """
                            INSERT INTO debug_files (project_id, build_id, kind, size, architecture, file_type, features, uploaded_at)
                            VALUES (?, 'aabbccdd', 'debuginfo', 11, 'x86_64', 'executable', 'debug', 0)
                            """, arguments: [id])
                }
                try db.execute(
                    sql: """
                        INSERT INTO debug_files (project_id, build_id, kind, size, architecture, file_type, features, uploaded_at)
                        VALUES (1, 'ffee', 'executable', 3, 'x86_64', 'executable', '', 0)
                        """)
            }
            try pool.close()
        }
        try Data("legacy file".utf8).write(to: URL(fileURLWithPath: folder + "/debug-files/aa/bbccdd/debuginfo"))

        // When the data folder is opened (v7 runs, then the files are adopted).
        let database = try SQLiteEngine(path: folder + "/faultline.sqlite")
        #expect(try database.appliedMigrations().contains("v7-debug-file-blobs"))
        let store = try SQLiteDebugFileStore(database: database, root: folder + "/debug-files")
        #expect(try store.adoptLegacyFiles(hasher: CoreutilsSHA256()) == 1)
        #expect(try store.adoptLegacyFiles(hasher: CoreutilsSHA256()) == 0)  // once

        // Then both projects keep the (unattributable) file as a blob, the dead row is gone, the legacy tree too.
        let hash = try CoreutilsSHA256().sha256(
            ofFileAt: try #require(
                try await store.path(of: BuildID("aabbccdd")!, kind: .debuginfo, project: ProjectID(1))))
        for project in [ProjectID(1), ProjectID(2)] {
            let path = try #require(try await store.path(of: BuildID("aabbccdd")!, kind: .debuginfo, project: project))
            #expect(path.hasSuffix("/blobs/\(hash.rawValue.prefix(2))/\(hash.rawValue)"))
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "legacy file")
            #expect(try await store.list(project: project, limit: 10).map(\.sha256) == [hash])
        }
        #expect(try await store.kinds(of: BuildID("ffee")!, project: ProjectID(1)).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder + "/debug-files/aa"))
        try database.close()
    }
}
