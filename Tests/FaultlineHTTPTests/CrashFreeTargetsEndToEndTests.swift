import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// `faultline projects configure --crash-free-users-target/--crash-free-sessions-target`: the real CLI on a real data
/// folder sets a project's targets, prints them, refuses a value outside 0–100, `faultline render` shows the rates
/// against them, and the read API's health and releases answer them.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct CrashFreeTargetsEndToEndTests {
    func configure(_ slug: String, in folder: String, _ options: [String]) async throws -> [String: Any] {
        let result = try await ServerProcess.run(["projects", "configure", slug, "--data", folder, "--json"] + options)
        guard result.status == 0 else { throw TestFailure("projects configure failed: \(result)") }
        return try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any] ?? [:]
    }

    @Test func theTargetsAreSetPerProjectPrintedCheckedAndShown() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let shop = try await ServerProcess.createProject("shop", in: folder)
        _ = try await ServerProcess.createProject("plain", in: folder)

        // A new project has the defaults.
        let fresh = try await configure("shop", in: folder, [])
        #expect(fresh["crash_free_users_target"] as? Double == 99.5)
        #expect(fresh["crash_free_sessions_target"] as? Double == 99.9)
        // Both set at once, as the README shows; then one alone keeps the other.
        let set = try await configure(
            "shop", in: folder, ["--crash-free-users-target", "99.7", "--crash-free-sessions-target", "99.95"])
        #expect(set["crash_free_users_target"] as? Double == 99.7)
        #expect(set["crash_free_sessions_target"] as? Double == 99.95)
        let one = try await configure("shop", in: folder, ["--crash-free-users-target", "98"])
        #expect(one["crash_free_users_target"] as? Double == 98)
        #expect(one["crash_free_sessions_target"] as? Double == 99.95)
        // The other project keeps the defaults; the other settings are untouched.
        #expect(try await configure("plain", in: folder, [])["crash_free_users_target"] as? Double == 99.5)
        #expect(one["scrubbing"] as? Bool == true)
        #expect(one["keep_minidumps"] as? String == "until_processed")

        // The text output says them.
        let text = try await ServerProcess.run(["projects", "configure", "shop", "--data", folder])
        #expect(text.status == 0)
        #expect(text.out.contains("crash-free users target:    98 %"))
        #expect(text.out.contains("crash-free sessions target: 99.95 %"))

        // Outside 0–100, or not a number: refused, naming the option, and nothing changes.
        for (option, bad) in [("--crash-free-users-target", "100.5"), ("--crash-free-sessions-target", "-1")] {
            let refused = try await ServerProcess.run(
                ["projects", "configure", "shop", "--data", folder, "\(option)=\(bad)"])
            #expect(refused.status != 0)
            #expect(refused.err.contains(option) && refused.err.contains("0 to 100"), "\(refused.err)")
        }
        let word = try await ServerProcess.run(
            ["projects", "configure", "shop", "--data", folder, "--crash-free-users-target", "high"])
        #expect(word.status != 0)
        #expect(word.err.contains("crash-free-users-target"))
        #expect(try await configure("shop", in: folder, [])["crash_free_users_target"] as? Double == 98)

        // The rendered overview shows the project's own targets.
        let render = try await ServerProcess.run(["render", "--data", folder])
        #expect(render.status == 0, "\(render)")
        let overview = try String(contentsOfFile: folder + "/site/shop/index.html", encoding: .utf8)
        #expect(overview.contains("<dt>Crash-free users target</dt><dd>98 %</dd>"))
        #expect(overview.contains("<dt>Crash-free sessions target</dt><dd>99.95 %</dd>"))
        #expect(overview.contains("no data (0 users) <span class=\"target-mark target-none\">"))

        // The read API gives them beside the rates.
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        for path in ["/api/v1/releases", "/api/v1/health?days=7"] {
            let answer = try await http.send(
                .GET, server.baseURL + path, headers: [("Authorization", "Bearer \(shop.upload)")])
            #expect(answer.status == 200, "\(path)")
            let targets = answer.json["targets"] as? [String: Any]
            #expect(targets?["crash_free_users"] as? Double == 98, "\(path): \(answer.json)")
            #expect(targets?["crash_free_sessions"] as? Double == 99.95, "\(path): \(answer.json)")
        }
    }
}
