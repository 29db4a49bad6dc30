import Foundation
import TestSupport
import Testing

/// `faultline projects configure --keep-minidumps`: the real CLI on a real data folder sets how long a project keeps
/// its minidumps, prints it, and refuses a value it does not know.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct MinidumpSettingEndToEndTests {
    func configure(_ slug: String, in folder: String, _ options: [String]) async throws -> [String: Any] {
        let result = try await ServerProcess.run(["projects", "configure", slug, "--data", folder, "--json"] + options)
        guard result.status == 0 else { throw TestFailure("projects configure failed: \(result)") }
        return try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any] ?? [:]
    }

    @Test func theSettingIsSetPerProjectPrintedAndChecked() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        _ = try await ServerProcess.createProject("kept", in: folder)
        _ = try await ServerProcess.createProject("plain", in: folder)

        // A new project keeps dumps only until processed.
        #expect(try await configure("kept", in: folder, [])["keep_minidumps"] as? String == "until_processed")
        // Set for one project, it stays set, and the other keeps the default.
        #expect(
            try await configure("kept", in: folder, ["--keep-minidumps", "retention-period"])["keep_minidumps"]
                as? String == "retention_period")
        #expect(try await configure("kept", in: folder, [])["keep_minidumps"] as? String == "retention_period")
        #expect(try await configure("plain", in: folder, [])["keep_minidumps"] as? String == "until_processed")
        // The other settings are untouched by it.
        #expect(try await configure("kept", in: folder, [])["scrubbing"] as? Bool == true)

        // The text output says it in words.
        let text = try await ServerProcess.run(["projects", "configure", "kept", "--data", folder])
        #expect(text.status == 0)
        #expect(text.out.contains("keep minidumps:    for the retention period"))

        // An unknown value is refused, naming the choices, and changes nothing.
        let refused = try await ServerProcess.run(
            ["projects", "configure", "kept", "--data", folder, "--keep-minidumps", "forever"])
        #expect(refused.status != 0)
        #expect(refused.err.contains("until-processed") && refused.err.contains("retention-period"))
        #expect(try await configure("kept", in: folder, [])["keep_minidumps"] as? String == "retention_period")

        // Back to the default.
        #expect(
            try await configure("kept", in: folder, ["--keep-minidumps", "until-processed"])["keep_minidumps"]
                as? String == "until_processed")
    }
}
