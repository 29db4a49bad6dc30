import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The release gate against the real `faultline` binary and server: docs/release-gate.sh — the loop the GitHub
/// Actions and GitLab CI snippets run — promotes a good release (exit 0), rolls back a bad one (1), rolls back one that
/// never had enough sessions (2) and touches nothing when the gate cannot be asked (3); the API answers the same gate
/// as JSON, the CLI reads it from the data folder too, and the release page shows it.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct ReleaseGateEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// A Sentry envelope with one session aggregate of `release`: `exited` clean sessions and `crashed` crashed ones,
    /// started `hoursAgo` hours ago.
    static func sessions(_ release: String, exited: Int, crashed: Int = 0, hoursAgo: Double) -> [UInt8] {
        let started = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-hoursAgo * 3600))
        let item =
            #"{"attrs":{"release":"\#(release)","environment":"production"},"aggregates":[{"started":"\#(started)","exited":\#(exited),"crashed":\#(crashed)}]}"#
        return Array("{}\n{\"type\":\"sessions\",\"length\":\(item.utf8.count)}\n\(item)\n".utf8)
    }

    func post(_ server: ServerProcess, _ project: (ingest: String, upload: String, id: Int), _ body: [UInt8])
        async throws
    {
        let answer = try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/envelope/?sentry_key=\(project.ingest)",
            headers: [("Content-Type", "application/x-sentry-envelope")], body: body)
        #expect(answer.status == 200, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    func gate(_ server: ServerProcess, token: String, _ pathAndQuery: String) async throws -> HTTP.Answer {
        try await http.send(
            .GET, server.baseURL + "/api/v1/releases/" + pathAndQuery, headers: [("Authorization", "Bearer \(token)")])
    }

    /// Waits until the releases list counts `sessions` sessions for each release named.
    func waitForSessions(_ server: ServerProcess, token: String, _ expected: [String: Int]) async throws {
        var seen: [String: Int] = [:]
        for _ in 0..<300 {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/releases", headers: [("Authorization", "Bearer \(token)")])
            let rows = answer.json["releases"] as? [[String: Any]] ?? []
            seen = [:]
            for row in rows {
                guard let name = row["release"] as? String else { continue }
                seen[name] = (row["health"] as? [String: Any])?["sessions"] as? Int ?? row["sessions"] as? Int
            }
            if expected.allSatisfy({ seen[$0.key] == $0.value }) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("sessions never counted: \(seen)")
    }

    /// Runs docs/release-gate.sh for `release` with the deployment's commands appending to `log`; returns the script's
    /// status, its output and the deployment steps taken.
    func runScript(
        _ server: ServerProcess, token: String, release: String, project: String = "shop", options: String,
        tries: Int = 2, serverURL: String? = nil, in work: TempFolder
    ) throws -> (status: Int32, out: String, steps: [String]) {
        let log = work.file("deploy-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log, contents: nil)
        let result = try Command.run(
            "sh", [Self.root + "/docs/release-gate.sh"], in: work.path,
            environment: [
                "FAULTLINE_BIN": ServerProcess.binary, "FAULTLINE_SERVER": serverURL ?? server.baseURL,
                "FAULTLINE_TOKEN": token, "PROJECT": project, "RELEASE": release,
                "DEPLOY_CANARY": "echo canary >> '\(log)'", "PROMOTE": "echo promote >> '\(log)'",
                "ROLL_BACK": "echo rollback >> '\(log)'", "GATE_WAIT": "0", "GATE_TRIES": String(tries),
                "GATE_OPTIONS": options,
            ])
        let steps = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        return (result.status, result.out + result.err, steps)
    }

    @Test func theCISnippetPromotesRollsBackWaitsAndStops() async throws {
        // Given a history: 1.0.0 clean (500 sessions), 2.0.0 with 10 % crashed (400), 3.0.0 just out (10)
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        try await post(server, shop, Self.sessions("shop@1.0.0", exited: 500, hoursAgo: 3))
        try await post(server, shop, Self.sessions("shop@2.0.0", exited: 360, crashed: 40, hoursAgo: 2))
        try await post(server, shop, Self.sessions("shop@3.0.0", exited: 10, hoursAgo: 1))
        try await waitForSessions(server, token: shop.upload, ["1.0.0": 500, "2.0.0": 400, "3.0.0": 10])
        let work = try TempFolder("release-gate")

        // A clean release with enough sessions: promoted, exit 0
        let good = try runScript(server, token: shop.upload, release: "1.0.0", options: "--min-sessions 100", in: work)
        #expect(good.status == 0, "\(good.out)")
        #expect(good.steps == ["canary", "promote"])
        #expect(good.out.contains("release 1.0.0 of shop: pass: no check failed on 500 sessions"), "\(good.out)")

        // 400 sessions with 10 % crashed: rolled back, exit 1, with the interval that says why
        let bad = try runScript(server, token: shop.upload, release: "2.0.0", options: "--min-sessions 100", in: work)
        #expect(bad.status == 1, "\(bad.out)")
        #expect(bad.steps == ["canary", "rollback"])
        #expect(
            bad.out.contains(
                "crash-free sessions 90.00 % (360 of 400 sessions crash-free), 95 % interval 86.67 % – 92.57 %: even its optimistic end is below the 99.9 % target"
            ), "\(bad.out)")
        #expect(bad.out.contains("baseline 1.0.0 100.00 % crash-free sessions (500 sessions"), "\(bad.out)")

        // 10 sessions: asked twice, never enough, rolled back, exit 2
        let early = try runScript(server, token: shop.upload, release: "3.0.0", options: "--min-sessions 100", in: work)
        #expect(early.status == 2, "\(early.out)")
        #expect(early.steps == ["canary", "rollback"])
        #expect(
            early.out.components(separatedBy: "not enough data yet: 10 sessions of 3.0.0, the gate needs 100").count
                == 3)
        // …and with a lower minimum the same 10 clean sessions pass.
        let enough = try runScript(server, token: shop.upload, release: "3.0.0", options: "--min-sessions 10", in: work)
        #expect(enough.status == 0, "\(enough.out)")

        // The gate cannot be asked (another project's token, a server that is not there): exit 3, nothing promoted or
        // rolled back.
        let wrongToken = try runScript(server, token: other.upload, release: "1.0.0", options: "", in: work)
        #expect(wrongToken.status == 3, "\(wrongToken.out)")
        #expect(wrongToken.steps == ["canary"])
        #expect(wrongToken.out.contains("the token belongs to project 'other', not 'shop'"), "\(wrongToken.out)")
        let refused = try runScript(server, token: "not-a-token", release: "1.0.0", options: "", in: work)
        #expect(refused.status == 3 && refused.steps == ["canary"], "\(refused.out)")
        // Nothing listens on port 1.
        let gone = try runScript(
            server, token: shop.upload, release: "1.0.0", options: "", serverURL: "http://127.0.0.1:1", in: work)
        #expect(gone.status == 3 && gone.steps == ["canary"], "\(gone.out)")

        // The API answers the same gate as JSON.
        let api = try await gate(server, token: shop.upload, "2.0.0/gate?min_sessions=100")
        #expect(api.status == 200)
        #expect(api.json["verdict"] as? String == "fail")
        #expect(api.json["exit_code"] as? Int == 1)
        let sessions = api.json["crash_free_sessions"] as? [String: Any]
        #expect(sessions?["crash_free"] as? Int == 360 && sessions?["total"] as? Int == 400)
        #expect(abs((sessions?["upper"] as? Double ?? 0) - 0.9257007408599657) < 1e-9)
        #expect((api.json["baseline"] as? [String: Any])?["release"] as? String == "1.0.0")
        // A release name in the package@version+build form, percent-encoded, is the same release.
        let encoded = try await gate(server, token: shop.upload, "shop%401.0.0%2B77/gate")
        #expect(encoded.json["release"] as? String == "1.0.0" && encoded.json["verdict"] as? String == "pass")
        // Bad parameters are 400 naming the field; no token is 401.
        let bad400 = try await gate(server, token: shop.upload, "2.0.0/gate?confidence=1.5")
        #expect(bad400.status == 400)
        #expect(String(decoding: bad400.body, as: UTF8.self).contains("confidence"))
        let badWindow = try await gate(server, token: shop.upload, "2.0.0/gate?baseline_window=weeks")
        #expect(badWindow.status == 400)
        let noToken = try await http.send(.GET, server.baseURL + "/api/v1/releases/2.0.0/gate")
        #expect(noToken.status == 401)
    }

    @Test func aNewFatalIssueFailsTheGateUnlessAllowedAndThePageShowsIt() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // Given 4.0.0 with 500 clean sessions and one crash never seen before
        try await post(server, shop, Self.sessions("4.0.0", exited: 500, hoursAgo: 1))
        let crash = try await http.postReports(
            server.baseURL, key: shop.ingest, Payloads.crash(1, version: "4.0.0"), gzip: false)
        #expect(crash.status == 202)
        try await waitForSessions(server, token: shop.upload, ["4.0.0": 500])
        var newFatal: [[String: Any]] = []
        for _ in 0..<300 where newFatal.isEmpty {
            let answer = try await gate(server, token: shop.upload, "4.0.0/gate")
            newFatal = (answer.json["new_fatal_issues"] as? [String: Any])?["issues"] as? [[String: Any]] ?? []
            if newFatal.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        // Then the gate fails on it, naming the issue
        #expect(newFatal.count == 1)
        let api = try await gate(server, token: shop.upload, "4.0.0/gate")
        #expect(api.json["verdict"] as? String == "fail")
        let reasons = api.json["reasons"] as? [String] ?? []
        #expect(reasons.contains { $0.hasPrefix("1 new fatal issue first seen in 4.0.0 (0 allowed): #") }, "\(reasons)")

        // The CLI reading the data folder answers the very JSON the API does, and passes it with one new fatal issue
        // allowed.
        let strict = try await ServerProcess.run([
            "gate", "--data", folder, "--project", "shop", "--release", "4.0.0", "--json",
        ])
        #expect(strict.status == 1, "\(strict)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(strict.out.utf8)) as? [String: Any])
        #expect(json["verdict"] as? String == "fail")
        #expect(NSDictionary(dictionary: json) == NSDictionary(dictionary: api.json), "\(json)\n\(api.json)")
        let allowed = try await ServerProcess.run([
            "gate", "--data", folder, "--project", "shop", "--release", "4.0.0", "--max-new-fatal", "1",
        ])
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.out.contains("1 new fatal issue first seen in 4.0.0 (1 allowed)"), "\(allowed.out)")
        // Bad options are refused before anything is read.
        let refused = try await ServerProcess.run([
            "gate", "--data", folder, "--project", "shop", "--release", "4.0.0", "--confidence", "2",
        ])
        #expect(refused.status == 64, "\(refused)")
        #expect(refused.err.contains("--confidence"), "\(refused.err)")
        let unknown = try await ServerProcess.run(["gate", "--data", folder, "--project", "nope", "--release", "4.0.0"])
        #expect(unknown.status == 3, "\(unknown)")

        // The release page shows the gate, its verdict in words and its reasons.
        var page = ""
        for _ in 0..<300 where !page.contains("gate-fail") {
            let releases = folder + "/site/shop/releases"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: releases)) ?? [] {
                let text = (try? String(contentsOfFile: releases + "/" + name, encoding: .utf8)) ?? ""
                if text.contains("<h1>Release 4.0.0</h1>") { page = text }
            }
            if !page.contains("gate-fail") { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(page.contains("<h2 id=\"gate-heading\">Release gate</h2>"))
        #expect(page.contains("<strong class=\"gate-verdict gate-fail\">Fail</strong>"), "\(page)")
        #expect(page.contains("1 new fatal issue first seen in 4.0.0 (0 allowed)"))
        #expect(page.contains("<code>faultline gate --project shop --release 4.0.0</code>"))
    }
}
