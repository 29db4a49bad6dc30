import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Spike protection that still counts (issue #38), against the real `faultline` binary: past a project's quota
/// events get 429 with `Retry-After` and `X-Sentry-Rate-Limits` for the error categories only, every session is
/// kept so the crash-free numbers equal the truth, each dropped event is counted (by release, and by fingerprint
/// when the client sent one), the quota alert is recorded once per window, and the overview shows the counts; the
/// real sentry-sdk backs off its errors and keeps sending sessions.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct SpikeProtectionEndToEndTests {
    typealias Keys = (ingest: String, upload: String, id: Int)
    let http = HTTP(client: HTTPClient.shared)
    static let environment = InsightsEndToEndTests.fastServices.merging(["FAULTLINE_QUOTA_FLUSH_MS": "100"]) { $1 }
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Python/sentry_app.py"
    ).path

    /// A project `shop` with `quota` events per hour (and a per-second rate limit far above it), served. An hour, not a
    /// minute: on a loaded machine the test's requests can span minutes, and each new window admits a new quota.
    func start(quota: Int) async throws -> (ServerProcess, Keys) {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder, extra: ["--rate-limit", "10000"])
        let configured = try await ServerProcess.run(
            ["projects", "configure", "shop", "--data", folder, "--json", "--quota-per-hour", String(quota)])
        #expect(configured.status == 0, "\(configured.err)")
        #expect(configured.out.contains("\"quota_per_hour\":\(quota)"))
        let server = try await ServerProcess(folder: folder, environment: Self.environment)
        return (server, shop)
    }

    /// An envelope of one crash of release `shop@2.0` (fingerprinted when `fingerprint`) and its session `n`, by
    /// user `user`, ending crashed or exited: what an SDK sends when an app crashes (and when a session ends).
    static func envelope(_ n: Int, user: String, crashed: Bool, event: Bool, fingerprint: Bool) -> [UInt8] {
        let now = ISO8601DateFormatter().string(from: Date())
        let eventID = String(format: "%032x", n + 1)
        let sid = String(format: "%08x-0000-4000-8000-%012x", n, n)
        var out = #"{"event_id":"\#(eventID)","sent_at":"\#(now)"}"# + "\n"
        if event {
            let print = fingerprint ? #","fingerprint":["spike-crash"]"# : ""
            let item =
                #"{"event_id":"\#(eventID)","timestamp":"\#(now)","platform":"python","level":"fatal","release":"shop@2.0","user":{"id":"\#(user)"}\#(print),"exception":{"values":[{"type":"RuntimeError","value":"spike","mechanism":{"type":"test","handled":false},"stacktrace":{"frames":[{"function":"main","module":"app","lineno":1},{"function":"boom","module":"app","lineno":7}]}}]}}"#
            out += #"{"type":"event","length":\#(item.utf8.count)}"# + "\n" + item + "\n"
        }
        let status = crashed ? "crashed" : "exited"
        let session =
            #"{"sid":"\#(sid)","did":"\#(user)","init":true,"started":"\#(now)","timestamp":"\#(now)","status":"\#(status)","errors":\#(crashed ? 1 : 0),"attrs":{"release":"shop@2.0","environment":"production"}}"#
        out += #"{"type":"session","length":\#(session.utf8.count)}"# + "\n" + session + "\n"
        return Array(out.utf8)
    }

    func post(_ server: ServerProcess, _ keys: Keys, _ body: [UInt8]) async throws -> HTTP.Answer {
        try await http.send(
            .POST, server.baseURL + "/api/\(keys.id)/envelope/?sentry_key=\(keys.ingest)",
            headers: [("Content-Type", "application/x-sentry-envelope")], body: body)
    }

    func get(_ server: ServerProcess, _ keys: Keys, _ path: String) async throws -> [String: Any] {
        let answer = try await http.send(
            .GET, server.baseURL + path, headers: [("Authorization", "Bearer \(keys.upload)")])
        guard answer.status == 200 else { throw TestFailure("GET \(path) → \(answer.status)") }
        return answer.json
    }

    /// Today's health of all releases (the API's last day with sessions).
    func health(_ server: ServerProcess, _ keys: Keys) async throws -> [String: Any] {
        let days = try await get(server, keys, "/api/v1/health?days=2")["days"] as? [[String: Any]] ?? []
        return days.compactMap { $0["health"] as? [String: Any] }.last { ($0["sessions"] as? Int ?? 0) > 0 } ?? [:]
    }

    /// Rows of `sql` over the server's SQLite file, read with Python's sqlite3 (read-only, beside the server).
    static func rows(_ folder: String, _ sql: String) throws -> [String] {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            for row in db.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in row))
            """
        return try Command.check("python3", ["-c", script, folder + "/faultline.sqlite", sql])
            .split(separator: "\n").map(String.init)
    }

    /// The quota counts of the project: (accepted, dropped, dropped with a fingerprint).
    static func counted(_ folder: String) throws -> (accepted: Int, dropped: Int, fingerprinted: Int) {
        let row =
            try rows(
                folder,
                """
                SELECT coalesce(sum(accepted), 0), coalesce(sum(dropped), 0),
                    coalesce(sum(CASE WHEN fingerprint <> '' THEN dropped ELSE 0 END), 0) FROM quota_counts
                """
            ).first?.split(separator: "|").compactMap { Int($0) } ?? []
        guard row.count == 3 else { throw TestFailure("quota_counts unreadable: \(row)") }
        return (row[0], row[1], row[2])
    }

    @Test func pastTheQuotaEventsAreRefusedSessionsKeptAndDropsCounted() async throws {
        // Given a project with a quota of 10 events an hour
        let (server, shop) = try await start(quota: 10)
        defer { server.cleanUp() }
        // When 40 apps crash at once (every other one with a client fingerprint), each sending its crash and its
        // session, then 20 more sessions end cleanly (no event); users 0–19, every fourth session crashed
        var accepted = 0
        var refused: [HTTP.Answer] = []
        var refusedFingerprinted = 0
        for n in 0..<60 {
            let crashed = n < 40 && n % 4 == 0
            let answer = try await post(
                server, shop,
                Self.envelope(n, user: "user-\(n % 20)", crashed: crashed, event: n < 40, fingerprint: n % 2 == 0))
            if n >= 40 {
                #expect(answer.status == 200, "a request of sessions only is never refused")
            } else if answer.status == 200 {
                accepted += 1
            } else {
                #expect(answer.status == 429)
                refused.append(answer)
                if n % 2 == 0 { refusedFingerprinted += 1 }
            }
        }
        // Then the quota admitted 10 (20 if the test crossed into the next hour), and refused the rest
        #expect((10...20).contains(accepted), "accepted \(accepted)")
        #expect(refused.count == 40 - accepted)
        let first = try #require(refused.first)
        let wait = try #require(first.headers.first(name: "Retry-After").flatMap { Int($0) })
        #expect((1...3600).contains(wait))
        // with the categories the SDKs back off on: errors, not sessions
        let limits = try #require(first.headers.first(name: "X-Sentry-Rate-Limits"))
        #expect(limits == "\(wait):error;default;attachment:project:usage_exceeded", "\(limits)")
        #expect(first.json["error"] as? String == "quota_reached")

        // Every session was kept: the crash-free numbers are the truth (10 crashed of 60; users 0, 4, 8, 12 and 16
        // crashed, of 20), whatever was dropped.
        #expect(
            try await eventually {
                let day = try await health(server, shop)
                return day["sessions"] as? Int == 60
            })
        let day = try await health(server, shop)
        #expect(day["crashed_sessions"] as? Int == 10)
        #expect(day["users"] as? Int == 20)
        #expect(day["crashed_users"] as? Int == 5)

        // Every event is counted: accepted and dropped per release, the fingerprinted drops under the issue's
        // fingerprint.
        #expect(
            try await eventually {
                let counted = try Self.counted(server.folder)
                return counted.accepted == accepted && counted.dropped == refused.count
            })
        #expect(try Self.counted(server.folder).fingerprinted == refusedFingerprinted)
        #expect(try Self.rows(server.folder, "SELECT DISTINCT release FROM quota_counts") == ["2.0"])
        // Two keys: the release alone ('' fingerprint) and the client's fingerprint (the line reader drops the '').
        #expect(
            try Self.rows(server.folder, "SELECT count(DISTINCT fingerprint) FROM quota_counts")
                == [refusedFingerprinted > 0 ? "2" : "1"])
        let fingerprints = try Self.rows(
            server.folder, "SELECT DISTINCT fingerprint FROM quota_counts WHERE fingerprint <> ''")
        // The fingerprinted drops name the issue the accepted fingerprinted crashes were filed under.
        if refusedFingerprinted > 0, let fingerprint = fingerprints.first {
            #expect(
                try await eventually {
                    try Self.rows(server.folder, "SELECT count(*) FROM issues WHERE fingerprint = '\(fingerprint)'")
                        == ["1"]
                })
        }

        // The quota alert: once per window that refused (one, or two if the test crossed an hour).
        #expect(
            try await eventually {
                let alerts = try await get(server, shop, "/api/v1/alerts")["alerts"] as? [[String: Any]] ?? []
                return alerts.contains { $0["kind"] as? String == "quota_reached" }
            })
        let alerts = try await get(server, shop, "/api/v1/alerts")["alerts"] as? [[String: Any]] ?? []
        let quotaAlerts = alerts.filter { $0["kind"] as? String == "quota_reached" }
        #expect((1...2).contains(quotaAlerts.count), "\(quotaAlerts)")
        #expect(try Self.rows(server.folder, "SELECT count(DISTINCT dedupe_key) = count(*) FROM alerts") == ["1"])

        // The overview shows the accepted and dropped counts.
        #expect(
            try await eventually {
                let page = (try? String(contentsOfFile: server.folder + "/site/shop/index.html", encoding: .utf8)) ?? ""
                return page.contains(
                    "<dt>Today</dt><dd>\(accepted) accepted, \(refused.count) dropped</dd>")
                    && page.contains("<dd>10 per hour</dd>")
            })
    }

    @Test func theServersCeilingRefusesAsTheOrganizationsUsage() async throws {
        // Given a server with a ceiling of 2 events an hour over every project, and a project with no quota of its own
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder, extra: ["--rate-limit", "10000"])
        let server = try await ServerProcess(
            folder: folder, arguments: ["--max-events-per-hour", "2"], environment: Self.environment)
        defer { server.cleanUp() }
        // When 3 apps crash
        var answers: [HTTP.Answer] = []
        for n in 0..<3 {
            answers.append(
                try await post(
                    server, shop, Self.envelope(n, user: "user-\(n)", crashed: true, event: true, fingerprint: false)))
        }
        // Then the first 2 are stored (3 if the test crossed an hour) and a third past the ceiling is refused in
        // the organization's scope, naming the server, not the project
        guard let refused = answers.first(where: { $0.status == 429 }) else {
            #expect(answers.map(\.status) == [200, 200, 200], "only an hour's turn admits all three")
            return
        }
        #expect(answers.prefix(2).allSatisfy { $0.status == 200 })
        let limits = try #require(refused.headers.first(name: "X-Sentry-Rate-Limits"))
        #expect(limits.hasSuffix(":error;default;attachment:organization:usage_exceeded"), "\(limits)")
        #expect(refused.json["error"] as? String == "quota_reached")
        #expect((refused.json["message"] as? String)?.hasPrefix("the server is over its ceiling") == true)
        // and its session was kept.
        #expect(try await eventually { try await health(server, shop)["sessions"] as? Int == 3 })
    }

    @Test func anImportPastAQuotaRefusesTheRestInsteadOfWaitingForTheWindow() async throws {
        // Given a project with a quota of 1 event a month, and two crash reports to import
        let scratch = try TempFolder("spike-import")
        try Data(AppleCrashSamples.ips().utf8).write(to: URL(fileURLWithPath: scratch.path + "/a.ips"))
        try Data(AppleCrashSamples.crash(incident: "0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3").utf8)
            .write(to: URL(fileURLWithPath: scratch.path + "/b.crash"))
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("ios", in: folder)
        let configured = try await ServerProcess.run(
            ["projects", "configure", "ios", "--data", folder, "--quota-per-month", "1"])
        #expect(configured.status == 0, "\(configured.err)")
        // When both are imported
        let run = try await ServerProcess.run(["crashes", "import", "ios", scratch.path, "--data", folder])
        // Then the first is accepted and the second refused at once, naming the quota (a month's Retry-After is not
        // waited out, as the per-second rate limit's is)
        #expect(run.status == 1, "\(run)")
        let lines = run.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(run.out)")
        #expect(lines.first?.hasPrefix("accepted\t") == true, "\(run.out)")
        #expect(
            lines.last?.hasPrefix("refused\t\(scratch.path)/b.crash\tproject ios's quota of 1 events per month")
                == true, "\(run.out)")
    }

    @Test func theRealSentrySDKBacksOffItsErrorsAndKeepsSendingSessions() async throws {
        // Given a quota of 3 events an hour
        let (server, shop) = try await start(quota: 3)
        defer { server.cleanUp() }
        let dsn = "http://\(shop.ingest)@127.0.0.1:\(server.port)/\(shop.id)"
        // When an app runs 30 sessions by 20 users, every third crashing (10 crashes)
        let run = try Command.run("python3", [Self.script, dsn, "spike", "2.0", "30", "20"])
        #expect(run.status == 0, "\(run.err)")
        // Then the SDK disabled the error category (only that one) after the 429
        let disabled =
            run.out.split(separator: "\n").first { $0.hasPrefix("disabled:") }?.dropFirst(9).split(separator: ",") ?? []
        #expect(disabled.contains("error"), "\(run.out)")
        #expect(!disabled.contains("session"))
        // and kept sending sessions: all 30 are counted, 10 crashed, by 20 users of whom the users of sessions 0, 3,
        // …, 27 (users 0, 3, 6, 9, 12, 15, 18, 1, 4, 7) crashed.
        #expect(try await eventually { try await health(server, shop)["sessions"] as? Int == 30 })
        let day = try await health(server, shop)
        #expect(day["crashed_sessions"] as? Int == 10)
        #expect(day["users"] as? Int == 20)
        #expect(day["crashed_users"] as? Int == 10)
        // Few crash events reached the server: the quota's 3 (more if an hour began), and the server counted what it
        // refused before the SDK backed off.
        let stored = try await get(server, shop, "/api/v1/reports")["reports"] as? [[String: Any]] ?? []
        #expect((1...6).contains(stored.count), "\(stored.count)")
        #expect(
            try await eventually {
                let counted = try Self.counted(server.folder)
                return counted.accepted == stored.count && counted.dropped >= 1 && counted.fingerprinted >= 1
            })
        // The SDK reported what it dropped while backed off (client reports), so the project's statistics have it.
        #expect(
            try await eventually {
                let dropped =
                    try await get(server, shop, "/api/v1/dropped-events")["dropped"] as? [[String: Any]] ?? []
                return dropped.contains { $0["category"] as? String == "error" && ($0["quantity"] as? Int ?? 0) > 0 }
            })
    }
}
