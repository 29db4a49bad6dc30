import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issues, crash-free numbers, alerts, webhooks and the dashboard through the real `faultline` binary.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct InsightsEndToEndTests {
    /// Short timers so that the background services react within a test's patience.
    static let fastServices = [
        "FAULTLINE_RENDER_DEBOUNCE_MS": "200", "FAULTLINE_ALERT_INTERVAL_MS": "300",
        "FAULTLINE_WEBHOOK_BACKOFF_MS": "300",
        "FAULTLINE_WEBHOOK_POLL_MS": "100",
    ]
    let http = HTTP(client: HTTPClient.shared)

    static var now: String { ISO8601DateFormatter().string(from: Date()) }

    /// A crash report whose crashing thread the client symbolicated, at crash site `site`.
    static func crash(
        _ n: Int, site: String, version: String, user: String, session: String? = nil, message: String = "boom"
    ) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(now)",\(session.map { "\"session_id\":\"\($0)\"," } ?? "")
         "user_id":"\(user)","app":{"version":"\(version)","build":"1"},
         "device":{"model":"Pixel <8>","os":"Android","os_version":"15"},
         "error":{"type":"SIGSEGV","message":"\(message)"},
         "threads":[{"name":"main","crashed":true,"frames":[
           {"function":"abort"},{"function":"\(site)","file":"src/\(site).c","line":12},{"function":"main","file":"src/main.c","line":3}]}],
         "breadcrumbs":[{"timestamp":"\(now)","category":"nav","message":"<script>alert(1)</script> opened"}],
         "custom_keys":{"cart":"<b>3 items</b>"}}
        """
    }

    static func session(_ id: String, user: String, release: String, status: String, started: String = now) -> String {
        #"{"session_id":"\#(id)","user_id":"\#(user)","release":"\#(release)","started":"\#(started)","status":"\#(status)","errors":0}"#
    }

    func postSessions(_ server: ServerProcess, key: String, _ sessions: [String]) async throws {
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")],
            body: Array(("[" + sessions.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
    }

    func get(_ server: ServerProcess, _ path: String, token: String) async throws -> [String: Any] {
        let answer = try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
        guard answer.status == 200 else {
            throw TestFailure("GET \(path) → \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.json
    }

    func issues(_ server: ServerProcess, token: String, query: String = "") async throws -> [[String: Any]] {
        try await get(server, "/api/v1/issues" + query, token: token)["issues"] as? [[String: Any]] ?? []
    }

    @Test func issuesHealthRegressionAndTheDashboard() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await ServerProcess.run(["admin-token", "--data", folder]).out.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let server = try await ServerProcess(folder: folder, environment: Self.fastServices)
        defer { server.cleanUp() }

        // Given two releases: 1.0 with 20 users (2 crashed: sites A and B) and 2.0 with 10 users (1 crashed: site A)…
        // (All started at one instant, so that they fall on one day even when the test runs across midnight.)
        let started = Self.now
        var sessions: [String] = []
        for u in 0..<20 {
            sessions.append(
                Self.session(
                    "s\(u)", user: "u\(u)", release: "1.0 (1)", status: u < 2 ? "crashed" : "exited", started: started))
        }
        for u in 20..<30 {
            sessions.append(
                Self.session(
                    "s\(u)", user: "u\(u)", release: "2.0 (1)", status: u == 20 ? "crashed" : "exited", started: started
                ))
        }
        try await postSessions(server, key: project.ingest, sessions)
        let reports = [
            Self.crash(1, site: "parseCart", version: "1.0", user: "u0", session: "s0"),
            Self.crash(2, site: "renderList", version: "1.0", user: "u1", session: "s1"),
            Self.crash(3, site: "parseCart", version: "2.0", user: "u20", session: "s20"),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)

        // Then the worker groups them into two issues, ranked by users.
        #expect(try await eventually { try await issues(server, token: project.upload).count == 2 })
        let listed = try await issues(server, token: project.upload)
        let parse = try #require(listed.first { ($0["culprit"] as? String)?.hasPrefix("parseCart") == true })
        let render = try #require(listed.first { ($0["culprit"] as? String)?.hasPrefix("renderList") == true })
        #expect(parse["events"] as? Int == 2)
        #expect(parse["users"] as? Int == 2)
        #expect(parse["first_release"] as? String == "1.0")
        #expect((parse["signals"] as? [String])?.contains("fresh") == true)
        let top =
            try await get(server, "/api/v1/top-issues?window=24h", token: project.upload)["issues"] as? [[String: Any]]
        #expect((top?.first?["issue"] as? [String: Any])?["id"] as? Int == parse["id"] as? Int)
        #expect(top?.first?["users"] as? Int == 2)

        // And the crash-free numbers are exact, per day and per release.
        let health = try await get(server, "/api/v1/health?days=30", token: project.upload)
        // The day they started: the last day, or the one before it if midnight passed since.
        let days = try #require(health["days"] as? [[String: Any]]).compactMap { $0["health"] as? [String: Any] }
        #expect(days.count { ($0["sessions"] as? Int ?? 0) > 0 } == 1)
        let today = try #require(days.last { ($0["sessions"] as? Int ?? 0) > 0 })
        #expect(today["sessions"] as? Int == 30)
        #expect(today["crashed_sessions"] as? Int == 3)
        #expect(today["users"] as? Int == 30)
        #expect(today["crashed_users"] as? Int == 3)
        #expect(today["crash_free_sessions"] as? Double == 0.9)
        #expect(
            ((health["days"] as? [[String: Any]])?.first?["health"] as? [String: Any])?["crash_free_users"] is NSNull)
        let releases = try #require(
            try await get(server, "/api/v1/releases", token: project.upload)["releases"] as? [[String: Any]])
        let r1 = try #require(releases.first { $0["release"] as? String == "1.0" })
        #expect((r1["health"] as? [String: Any])?["sessions"] as? Int == 20)
        #expect((r1["health"] as? [String: Any])?["crashed_users"] as? Int == 2)
        #expect(r1["new_issues"] as? Int == 2)
        #expect(abs((r1["adoption"] as? Double ?? 0) - 20.0 / 30) < 1e-9)

        // When the renderList issue is closed and then crashes in 2.0, it reopens as regressed and alerts.
        let renderID = try #require(render["id"] as? Int)
        let closed = try await http.send(
            .PATCH, server.baseURL + "/api/v1/issues/\(renderID)",
            headers: [("Authorization", "Bearer \(project.upload)")],
            body: Array(#"{"status":"closed"}"#.utf8))
        #expect(closed.status == 200)
        #expect(closed.json["status"] as? String == "closed")
        let badPatch = try await http.send(
            .PATCH, server.baseURL + "/api/v1/issues/\(renderID)",
            headers: [("Authorization", "Bearer \(project.upload)")],
            body: Array(#"{"status":"fixed"}"#.utf8))
        #expect(badPatch.status == 400)
        #expect(badPatch.json["field"] as? String == "status")
        #expect(
            try await http.postReports(
                server.baseURL, key: project.ingest, Self.crash(4, site: "renderList", version: "2.0", user: "u21")
            ).status == 202)
        #expect(
            try await eventually {
                let issue =
                    try await get(server, "/api/v1/issues/\(renderID)", token: project.upload)["issue"]
                    as? [String: Any]
                return issue?["status"] as? String == "open"
                    && (issue?["signals"] as? [String])?.contains("regressed") == true
            })
        let alerts = try #require(
            try await get(server, "/api/v1/alerts", token: project.upload)["alerts"] as? [[String: Any]])
        #expect(Set(alerts.compactMap { $0["kind"] as? String }) == ["new_issue", "regression"])
        #expect(alerts.first { $0["kind"] as? String == "regression" }?["release"] as? String == "2.0")

        // The CLI changes state too (while the server runs), and the API sees it.
        let muted = try await ServerProcess.run(["issues", "mute", "\(renderID)", "--data", folder])
        #expect(muted.status == 0)
        #expect(muted.out.contains("is muted"))
        #expect(try await issues(server, token: project.upload, query: "?status=muted").count == 1)
        #expect(try await ServerProcess.run(["issues", "close", "999999", "--data", folder]).status == 4)

        // The dashboard is rendered into the data folder and behind the admin token.
        let overview = folder + "/site/shop/index.html"
        #expect(
            try await eventually {
                let html = (try? String(contentsOfFile: overview, encoding: .utf8)) ?? ""
                return html.contains("90.00 %") && html.contains("3 of 30")
            }, "overview: \((try? String(contentsOfFile: overview, encoding: .utf8)) ?? "missing")")
        // A cycle writes its issue pages after the summary pages (and leaves them to the next one when newer data
        // waits): the overview can be current before this file exists (a run once read it 0.8 s in, too early).
        let issuePath = folder + "/site/shop/issues/\(renderID).html"
        #expect(
            try await eventually { FileManager.default.fileExists(atPath: issuePath) },
            "the issue page was never written")
        let issuePage = try String(contentsOfFile: issuePath, encoding: .utf8)
        #expect(issuePage.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!issuePage.contains("<script>alert(1)"))
        #expect(issuePage.contains("renderList"))
        #expect(issuePage.contains("Pixel &lt;8&gt;"))

        var config = HTTPClient.Configuration()
        config.redirectConfiguration = .disallow
        let noRedirects = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        let browser = HTTP(client: noRedirects)
        let anonymous = try await browser.send(.GET, server.baseURL + "/shop/", headers: [("Accept", "text/html")])
        #expect(anonymous.status == 303)
        #expect(anonymous.headers["Location"].first == "/login?next=/shop/")
        let script = try await browser.send(.GET, server.baseURL + "/shop/index.html")
        #expect(script.status == 401)
        #expect(script.headers["WWW-Authenticate"].first?.hasPrefix("Basic") == true)
        let basic = "Basic " + Data("me:\(admin)".utf8).base64EncodedString()
        let withBasic = try await browser.send(
            .GET, server.baseURL + "/shop/index.html", headers: [("Authorization", basic)])
        #expect(withBasic.status == 200)
        #expect(String(decoding: withBasic.body, as: UTF8.self).contains("3 of 30"))
        let wrong = try await browser.send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=nope&next=%2Fshop%2F".utf8))
        #expect(wrong.status == 401)
        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2Fshop%2F".utf8))
        #expect(login.status == 303)
        #expect(login.headers["Location"].first == "/shop/")
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        #expect(login.headers["Set-Cookie"].first?.contains("HttpOnly") == true)
        let withCookie = try await browser.send(.GET, server.baseURL + "/shop/", headers: [("Cookie", cookie)])
        #expect(withCookie.status == 200)
        let offsite = try await browser.send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F%2Fevil.example".utf8))
        #expect(offsite.headers["Location"].first == "/")
        try await noRedirects.shutdown()

        // `faultline render` exports the same site anywhere.
        let out = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", out])
        #expect(rendered.status == 0, "\(rendered.err)")
        for page in [
            "index.html", "style.css", "shop/index.html", "shop/issues.html", "shop/alerts.html", "shop/releases.html",
            "shop/missing-debug-files.html", "shop/issues/\(renderID).html",
        ] {
            #expect(FileManager.default.fileExists(atPath: out + "/" + page), "\(page) missing")
        }
    }

    @Test func webhookDeliveriesRetryAndSurviveARestart() async throws {
        let receiver = try await WebhookReceiver(failing: true)
        defer { receiver.stop() }
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("hooks", in: folder)
        // The receiver is on loopback: both the CLI and the server must be told that internal targets are fine.
        let configured = try await ServerProcess.run(
            ["alerts", "configure", "hooks", "--webhook", receiver.url, "--allow-private-webhooks", "--data", folder])
        #expect(configured.status == 0, "\(configured.err)")
        #expect(configured.out.contains(receiver.url))
        var server = try await ServerProcess(
            folder: folder, arguments: ["--allow-private-webhooks"], environment: Self.fastServices)

        // Given a receiver that fails, a new issue's alert is attempted and retried…
        #expect(
            try await http.postReports(
                server.baseURL, key: project.ingest, Self.crash(1, site: "boot", version: "1.0", user: "u1")
            ).status == 202)
        #expect(try await eventually { receiver.received.count >= 2 })
        // …and when the server is killed while the receiver still fails, the delivery is not lost.
        try await server.kill9()
        receiver.setFailing(false)
        server = try await ServerProcess(
            folder: folder, arguments: ["--allow-private-webhooks"], environment: Self.fastServices)
        defer { server.cleanUp() }
        #expect(
            try await eventually {
                let alerts =
                    try await get(server, "/api/v1/alerts", token: project.upload)["alerts"] as? [[String: Any]]
                return alerts?.first?["delivery"] as? String == "delivered"
            })
        let bodies = receiver.received
        #expect(bodies.count >= 3)
        let last = try #require(bodies.last)
        #expect((last["text"] as? String)?.hasPrefix("[hooks] New issue: SIGSEGV: boom") == true)
        #expect((last["alert"] as? [String: Any])?["kind"] as? String == "new_issue")
        #expect(((last["alert"] as? [String: Any])?["url"] as? String)?.contains("/hooks/issues/") == true)
        // Every attempt carried the same alert (receivers dedupe by alert id).
        #expect(Set(bodies.compactMap { ($0["alert"] as? [String: Any])?["id"] as? Int }).count == 1)
        let delivered = try #require(
            (try await get(server, "/api/v1/alerts", token: project.upload)["alerts"] as? [[String: Any]])?.first)
        // Attempts are recorded after they end, so the one cut short by kill -9 may be uncounted (at-least-once).
        #expect((delivered["delivery_attempts"] as? Int ?? 0) >= 2)
    }

    @Test func velocityAlertFiresOnASpikeAndNotOnNoise() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("spiky", in: folder)
        let server = try await ServerProcess(folder: folder, environment: Self.fastServices)
        defer { server.cleanUp() }
        // Release 3.0: 50 users, 30 of them crash with the same issue within the window → velocity.
        // Release 4.0: 400 users, 3 crash with another issue (0.75 %, 3 users) → steady noise, no velocity alert.
        var sessions: [String] = []
        for u in 0..<50 {
            sessions.append(
                Self.session("a\(u)", user: "a\(u)", release: "3.0 (1)", status: u < 30 ? "crashed" : "exited"))
        }
        for u in 0..<400 {
            sessions.append(
                Self.session("b\(u)", user: "b\(u)", release: "4.0 (1)", status: u < 3 ? "crashed" : "exited"))
        }
        try await postSessions(server, key: project.ingest, sessions)
        var reports = (0..<30).map {
            Self.crash(100 + $0, site: "spike", version: "3.0", user: "a\($0)", session: "a\($0)")
        }
        reports += (0..<3).map {
            Self.crash(200 + $0, site: "noise", version: "4.0", user: "b\($0)", session: "b\($0)")
        }
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)

        #expect(
            try await eventually {
                let alerts =
                    try await get(server, "/api/v1/alerts", token: project.upload)["alerts"] as? [[String: Any]] ?? []
                return alerts.contains { $0["kind"] as? String == "velocity" }
            })
        // Give the alert service a few more rounds: still exactly one velocity alert, for the spike, with its numbers.
        try await Task.sleep(for: .seconds(1))
        let alerts = try #require(
            try await get(server, "/api/v1/alerts", token: project.upload)["alerts"] as? [[String: Any]])
        let velocity = alerts.filter { $0["kind"] as? String == "velocity" }
        #expect(velocity.count == 1)
        #expect(velocity.first?["release"] as? String == "3.0")
        let reason = try #require(velocity.first?["reason"] as? [String: Double])
        #expect(reason["issue_sessions"] == 30)
        #expect(reason["release_sessions"] == 50)
        #expect(reason["issue_users"] == 30)
        #expect(reason["share_percent"] == 60)

        // The spike's issue is marked trending, with the alert's numbers, in the list, on its page and on the
        // overview (the alert re-renders the dashboard); the noise's issue is not.
        let spike = try #require(velocity.first?["issue_id"] as? Int)
        let numbers = "30 of 50 sessions of 3.0 in 30 min (60 %), 30 users"
        let site = folder + "/site/spiky/"
        func page(_ path: String) -> String { (try? String(contentsOfFile: site + path, encoding: .utf8)) ?? "" }
        #expect(
            try await eventually {
                page("index.html").contains(numbers) && page("issues.html").contains(numbers)
                    && page("issues/\(spike).html").contains("is-trending-note")
            }, "no trending mark: \(page("issues.html"))")
        let rows = page("issues.html").components(separatedBy: "<tr")
        #expect(rows.filter { $0.contains("badge-trending") }.count == 1)
        #expect(rows.first { $0.contains("badge-trending") }?.contains("issues/\(spike).html") == true)
        #expect(page("issues/\(spike).html").contains("above the 1 % threshold); 30 users affected"))
        #expect(page("index.html").contains("Trending now"))
        // No webhook was set: the Alerts page says nobody was told, and how to change that.
        let alertsPage = page("alerts.html")
        #expect(alertsPage.contains("No delivery channel is configured"))
        #expect(alertsPage.contains("faultline alerts configure spiky --webhook URL"))
        #expect(alertsPage.contains("Trending (velocity) (1)"))
    }
}
