import Foundation
import SQLiteStorage
import TestSupport
import Testing

/// `faultline migrate --check`: what an upgrade of a data folder will do — each pending step by name, what it does,
/// and an estimate of time and disk — printed without changing a byte of the database (issue #38).
@Suite struct MigrateCheckCommandTests {
    /// A data folder holding the v20 upgrade snapshot (Tests/StoreConformanceTests/Fixtures/upgrade).
    static func oldFolder() throws -> TempFolder {
        let folder = try TempFolder()
        let snapshot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("StoreConformanceTests/Fixtures/upgrade/sqlite/v20-top-issues-covering-index.sql")
        try SQLiteSchemaSnapshot.load(
            try String(contentsOf: snapshot, encoding: .utf8), into: folder.path + "/faultline.sqlite")
        return folder
    }

    @Test func checkListsThePendingStepsWithAnEstimateAndChangesNothing() async throws {
        let folder = try Self.oldFolder()
        let path = folder.path + "/faultline.sqlite"
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)

        let answer = try await ServerProcess.run(["migrate", "--check", "--from", folder.path])

        #expect(answer.status == 0, "\(answer.err)")
        let lines = answer.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("schema: v20-top-issues-covering-index, ") == true, "\(answer.out)")
        let pending = SQLiteUpgrade.migrations.drop { $0 != "v20-top-issues-covering-index" }.dropFirst()
        #expect(lines.contains("\(pending.count) steps pending:"), "\(answer.out)")
        for step in pending {
            #expect(lines.contains { $0.hasPrefix("  \(step): ") && $0.contains(" — ") }, "\(step)")
        }
        #expect(lines.contains { $0.contains("v27-one-release") && $0.contains("rewrites reports") })
        #expect(lines.contains { $0.hasPrefix("estimate: ~") && $0.contains("of extra disk") })
        // Nothing changed: the same bytes, no WAL or other file beside the database.
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == files.sorted())
    }

    @Test func checkOfAFolderWithoutADatabaseFailsAndSaysWhy() async throws {
        let folder = try TempFolder()
        let answer = try await ServerProcess.run(["migrate", "--check", "--from", folder.path])
        #expect(answer.status == 1)
        #expect(answer.err.contains("there is no database at \(folder.path)/faultline.sqlite"), "\(answer.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }
}
