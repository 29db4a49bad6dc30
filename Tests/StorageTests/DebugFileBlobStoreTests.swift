import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// SHA-256 by coreutils' `sha256sum` (the real algorithm, an independent implementation; swift-crypto lives in
/// the HTTP module, which Storage's tests do not link).
struct CoreutilsSHA256: ContentHashing {
    final class Buffer: ContentDigesting {
        var bytes: [UInt8] = []
        func update(_ bytes: [UInt8]) { self.bytes += bytes }
        func finalize() -> ContentHash {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            try? Data(bytes).write(to: URL(fileURLWithPath: path))
            return (try? CoreutilsSHA256().sha256(ofFileAt: path))!
        }
    }
    func sha256() -> any ContentDigesting { Buffer() }
    func sha256(ofFileAt path: String) throws -> ContentHash {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard let hash = ContentHash(text.prefix(64)) else { throw StorageError(.openFailed, "sha256sum: \(text)") }
        return hash
    }
}

/// The per-project blob store on a real SQLite file, and the upgrade of an install from before it.
@Suite struct DebugFileBlobStoreTests {
    let facts = DebugFileFacts(
        buildID: nil, kinds: [.debuginfo, .executable], architecture: "x86_64", fileType: "executable", features: ["debug"],
        compressedDebugSections: false)

    func upload(_ store: SQLiteDebugFileStore, _ text: String) throws -> ReceivedDebugFile {
        let upload = try store.temporaryUpload()
        try Data(text.utf8).write(to: URL(fileURLWithPath: upload.path))
        return ReceivedDebugFile(upload: upload, sha256: try CoreutilsSHA256().sha256(ofFileAt: upload.path), size: UInt64(text.utf8.count))
    }

    @Test func projectsOwnTheirFilesAndAreChargedForTheirOwnBlobs() async throws {
        let db = try TempDatabase()
        let store = try SQLiteDebugFileStore(database: db.database, root: db.folder + "/debug-files")
        let a = ProjectID(1), b = ProjectID(2)
        for (id, slug) in [(a, "a"), (b, "b")] {
            try await db.database.pool.write { db in
                try db.execute(sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)", arguments: [id.rawValue, slug])
            }
        }
        let id = BuildID("aabbccdd")!
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let first = try upload(store, "project a's file")
        guard case .stored(_, let replacedA) = try await store.store(first, facts: facts, buildID: id, project: a, name: nil, quotaBytes: 1000, at: now)
        else { Issue.record("not stored"); return }
        #expect(!replacedA)
        let second = try upload(store, "project b's different file")
        _ = try await store.store(second, facts: facts, buildID: id, project: b, name: nil, quotaBytes: 1000, at: now)
        // Each project's path holds its own bytes; the admin path (no project) the oldest project's.
        #expect(try String(contentsOfFile: try #require(try await store.path(of: id, kind: .debuginfo, project: a)), encoding: .utf8) == "project a's file")
        #expect(try String(contentsOfFile: try #require(try await store.path(of: id, kind: .executable, project: b)), encoding: .utf8) == "project b's different file")
        #expect(try String(contentsOfFile: try #require(try await store.path(of: id, kind: .debuginfo, project: nil)), encoding: .utf8) == "project a's file")
        // One blob serving two kinds is charged once.
        #expect(try await store.bytesUsed(project: a, excluding: nil) == 16)
        #expect(try await store.bytesUsed(project: a, excluding: id) == 0)
        // Replacing: newest wins, reported as a replacement; the quota counts the file after the change.
        let third = try upload(store, "a's second file")
        guard case .stored(let rows, let replaced) = try await store.store(third, facts: facts, buildID: id, project: a, name: nil, quotaBytes: 15, at: now)
        else { Issue.record("not stored"); return }
        #expect(replaced && rows.count == 2)
        #expect(try await store.bytesUsed(project: a, excluding: nil) == 15)
        let tooBig = try upload(store, "this one is far too large for a")
        #expect(try await store.store(tooBig, facts: facts, buildID: BuildID("ee")!, project: a, name: nil, quotaBytes: 30, at: now)
                == .quotaExceeded(wouldUse: 15 + 31))
        // Two blobs remain (a's first was released), and nothing is left in tmp.
        let blobs = try FileManager.default.subpathsOfDirectory(atPath: db.folder + "/debug-files/blobs").filter { $0.count > 3 }
        #expect(blobs.count == 2)
        #expect(try FileManager.default.contentsOfDirectory(atPath: db.folder + "/debug-files/tmp").isEmpty)
    }

    @Test func anOlderInstallsSharedFilesAreAdoptedIntoBlobs() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("faultline-legacy-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder + "/debug-files/aa/bbccdd", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Given a database as v6 left it: two projects with rows for one build-id, one shared legacy file, and a
        // row whose file is gone.
        do {
            let pool = try DatabasePool(path: folder + "/faultline.sqlite")
            try Migrations.migrator.migrate(pool, upTo: "v6-sentry")
            try await pool.write { db in
                for id in [1, 2] {
                    try db.execute(sql: "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (?, ?, 0, 1)", arguments: [id, "p\(id)"])
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
        let database = try FaultlineDatabase(path: folder + "/faultline.sqlite")
        #expect(try database.appliedMigrations().contains("v7-debug-file-blobs"))
        let store = try SQLiteDebugFileStore(database: database, root: folder + "/debug-files")
        #expect(try store.adoptLegacyFiles(hasher: CoreutilsSHA256()) == 1)
        #expect(try store.adoptLegacyFiles(hasher: CoreutilsSHA256()) == 0)  // once

        // Then both projects keep the (unattributable) file as a blob, the dead row is gone, the legacy tree too.
        let hash = try CoreutilsSHA256().sha256(ofFileAt: try #require(try await store.path(of: BuildID("aabbccdd")!, kind: .debuginfo, project: ProjectID(1))))
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
