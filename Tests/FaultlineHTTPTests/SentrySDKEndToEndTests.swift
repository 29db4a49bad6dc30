import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The real sentry-sdk (Python, from PyPI; tools/test installs it) against a real Faultline: a DSN is all an
/// app changes. Errors, crashes, breadcrumbs, tags, user, contexts and release-health sessions become
/// Faultline reports, issues and crash-free numbers.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct SentrySDKEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
        "Python/sentry_app.py"
    ).path

    struct Setup {
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        var dsn: String { "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)" }
    }

    func start(rateLimit: Double? = nil) async throws -> Setup {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject(
            "shop", in: folder, extra: rateLimit.map { ["--rate-limit", String($0)] } ?? [])
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        return Setup(server: server, project: project)
    }

    func python(_ arguments: [String]) throws -> Command.Result {
        try Command.run("python3", [Self.script] + arguments)
    }

    func get(_ s: Setup, _ path: String) async throws -> [String: Any] {
        let answer = try await http.send(
            .GET, s.server.baseURL + path, headers: [("Authorization", "Bearer \(s.project.upload)")])
        guard answer.status == 200 else {
            throw TestFailure("GET \(path) → \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        return answer.json
    }

    func reports(_ s: Setup, _ query: String = "") async throws -> [[String: Any]] {
        try await get(s, "/api/v1/reports" + query)["reports"] as? [[String: Any]] ?? []
    }

    func metric(_ s: Setup, _ line: String) async throws -> Int {
        let text = String(decoding: try await http.send(.GET, s.server.baseURL + "/metrics").body, as: UTF8.self)
        return text.split(separator: "\n").first { $0.hasPrefix(line + " ") }.flatMap {
            Int($0.split(separator: " ").last ?? "")
        } ?? 0
    }

    /// The HTML of an event page's section under `<h3>heading</h3>`, up to the next `<h3>`.
    static func section(_ heading: String, in html: String) -> String? {
        guard let start = html.range(of: "<h3>\(heading)</h3>") else { return nil }
        let rest = html[start.upperBound...]
        return String(rest[..<(rest.range(of: "<h3")?.lowerBound ?? rest.endIndex)])
    }

    @Test(arguments: [true, false])
    func handledErrorsWithContext(brotli: Bool) async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let run = try python([s.dsn, "handled"] + (brotli ? [] : ["--no-brotli"]))
        #expect(run.status == 0, "\(run.err)")

        // The SDK compressed with brotli when the module was importable, else gzip — both were understood.
        #expect(try await metric(s, #"faultline_sentry_envelopes_total{encoding="\#(brotli ? "br" : "gzip")"}"#) >= 3)
        #expect(try await eventually { try await reports(s).count == 3 })
        let listed = try await reports(s)
        #expect(listed.allSatisfy { $0["kind"] as? String == "nonfatal" })
        #expect(Set(listed.compactMap { $0["release"] as? String }) == ["1.0"])
        #expect(
            Set(listed.compactMap { $0["error_type"] as? String }).isSuperset(of: ["ZeroDivisionError", "ValueError"]))

        let zero = try #require(listed.first { $0["error_type"] as? String == "ZeroDivisionError" })
        let full = try await get(s, "/api/v1/reports/\(try #require(zero["event_id"] as? String))")
        #expect(full["user_id"] as? String == "user-7")
        #expect(full["environment"] as? String == "production")
        // Tags, custom keys, the SDK and the contexts apart: set_tag is a tag, not a custom key; set_context("order")
        // its own block beside the SDK's runtime and trace ones.
        let tags = full["tags"] as? [String: String] ?? [:]
        #expect(tags["plan"] == "pro")
        #expect(tags["payment"] == "<card>")
        #expect(tags["level"] == "error")
        let keys = full["custom_keys"] as? [String: Any] ?? [:]
        #expect(keys["plan"] == nil && keys["sdk"] == nil && keys["level"] == nil, "\(keys)")
        let sdk = full["sdk"] as? [String: Any] ?? [:]
        #expect((sdk["name"] as? String)?.hasPrefix("sentry.python") == true, "\(sdk)")
        #expect((sdk["integrations"] as? [String])?.contains("excepthook") == true, "\(sdk)")
        #expect((sdk["packages"] as? [[String: String]])?.first?["name"] == "pypi:sentry-sdk", "\(sdk)")
        let contexts = full["contexts"] as? [String: [String: String]] ?? [:]
        #expect(contexts["order"] == ["id": "1234", "items": "3"], "\(contexts)")
        #expect(contexts["runtime"]?["name"] == "CPython")
        #expect(contexts["device"] == nil && contexts["os"] == nil)
        let crumbs = (full["breadcrumbs"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(crumbs.contains("tapped Pay"))
        let frames = ((full["threads"] as? [[String: Any]])?.first?["frames"] as? [[String: Any]]) ?? []
        #expect(frames.first?["function"] as? String == "checkout")  // innermost first
        // The chained exception is the captured one (the last of Sentry's values), not its cause.
        #expect(
            listed.contains {
                $0["error_type"] as? String == "ValueError"
                    && ($0["error_message"] as? String)?.contains("no total") == true
            })

        // Grouped into three non-fatal issues.
        #expect(try await eventually { (try await get(s, "/api/v1/issues")["issues"] as? [[String: Any]])?.count == 3 })
        if brotli {
            // The event's page shows each apart, escaped.
            let admin = try await SecurityEndToEndTests.adminToken(s.server.folder)
            let page = try await http.send(
                .GET, s.server.baseURL + "/shop/events/\(try #require(zero["event_id"] as? String))",
                headers: [("Authorization", "Bearer \(admin)")])
            #expect(page.status == 200)
            let html = String(decoding: page.body, as: UTF8.self)
            let tagSection = try #require(Self.section("Tags", in: html))
            #expect(tagSection.contains("<th scope=\"row\">plan</th><td>pro</td>"))
            #expect(tagSection.contains("<th scope=\"row\">payment</th><td>&lt;card&gt;</td>"))
            #expect(Self.section("Custom keys", in: html)?.contains("plan") == false)
            let sdkSection = try #require(Self.section("SDK", in: html))
            #expect(sdkSection.contains("<dt>Name</dt><dd>sentry.python"))
            #expect(sdkSection.contains("excepthook"))
            let contextSection = try #require(Self.section("Contexts", in: html))
            #expect(contextSection.contains("<h4>order</h4>"))
            #expect(contextSection.contains("<dt>id</dt><dd>1234</dd>"))
            #expect(contextSection.contains("<h4>runtime</h4>"))
        }
    }

    /// Server-side scrubbing with the real SDK: `send_default_pii=True` sends the user's IP, and the app put a
    /// password in extra data, a card number in a message and a database password in a breadcrumb URL.
    @Test func personalDataIsScrubbedBeforeItIsStored() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let run = try python([s.dsn, "pii"])
        #expect(run.status == 0, "\(run.err)")
        #expect(try await eventually { try await reports(s).count == 1 })
        let id = try #require(try await reports(s).first?["event_id"] as? String)
        let full = try await get(s, "/api/v1/reports/\(id)")
        #expect(full["user_id"] as? String == "user-9")
        let keys = full["custom_keys"] as? [String: Any] ?? [:]
        #expect(keys["extra.password"] as? String == "[Filtered]")
        #expect(keys["extra.order"] as? String == "A-1001")
        let message = (full["error"] as? [String: Any])?["message"] as? String
        #expect(message == "charge failed for card [Filtered]")
        let crumbs = (full["breadcrumbs"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(crumbs.contains("connect postgres://shop:[Filtered]@db.internal/shop"))

        // Nothing of it reached the disk: not in the stored payload (inflated), not anywhere in the database files.
        let stored = try Command.run("python3", [PrivacyEndToEndTests.storedBytesScript, s.server.folder])
        #expect(stored.status == 0, "\(stored.err)")
        #expect(stored.out.contains("user-9"))
        for secret in ["hunter2-extra", "4111 1111 1111 1111", "pgsecret77", "203.0.113.99"] {
            #expect(!stored.out.contains(secret), "\(secret) was stored")
        }
    }

    @Test func unhandledCrashAndSessionsAcrossTwoReleases() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        // An unhandled exception kills the app: sys.excepthook reports it as a crash, the session ends crashed.
        let crash = try python([s.dsn, "crash"])
        #expect(crash.status != 0)
        #expect(crash.err.contains("ZeroDivisionError"))
        // 1.0: 10 sessions — 6 exited, 2 errored, 2 crashed; 2.0: 8 sessions — 7 exited, 1 crashed.
        let one = try python([s.dsn, "sessions", "shop@1.0", "10", "exited", "exited", "errored", "exited", "crashed"])
        #expect(one.status == 0, "\(one.err)")
        let two = try python([
            s.dsn, "sessions", "shop@2.0", "8", "exited", "exited", "exited", "exited", "exited", "exited", "exited",
            "crashed",
        ])
        #expect(two.status == 0, "\(two.err)")

        // 1 from the crash scenario, 2 crashed sessions in 1.0, 1 in 2.0.
        #expect(try await eventually { try await reports(s, "?kind=crash").count == 4 })
        let crashReport = try #require(
            try await reports(s, "?kind=crash").first { $0["user"] as? String == "user-crash" })
        #expect(crashReport["error_type"] as? String == "ZeroDivisionError")

        #expect(
            try await eventually {
                let releases = try await get(s, "/api/v1/releases")["releases"] as? [[String: Any]] ?? []
                return releases.count == 2
            })
        let releases = try await get(s, "/api/v1/releases")["releases"] as? [[String: Any]] ?? []
        let r1 = try #require(releases.first { $0["release"] as? String == "1.0" }?["health"] as? [String: Any])
        #expect(r1["sessions"] as? Int == 11)  // 10 + the crash scenario's session
        #expect(r1["crashed_sessions"] as? Int == 3)
        #expect(r1["errored_sessions"] as? Int == 2)
        #expect(r1["users"] as? Int == 11)
        #expect(r1["crashed_users"] as? Int == 3)
        let r2 = try #require(releases.first { $0["release"] as? String == "2.0" }?["health"] as? [String: Any])
        #expect(r2["sessions"] as? Int == 8)
        #expect(r2["crashed_sessions"] as? Int == 1)
        #expect(r2["crash_free_sessions"] as? Double == 0.875)

        // Crashes and handled errors are separate issues.
        let issues = try await get(s, "/api/v1/issues")["issues"] as? [[String: Any]] ?? []
        #expect(Set(issues.compactMap { $0["kind"] as? String }) == ["crash", "nonfatal"])
    }

    /// Issue #35: an event's `dist` is the build beneath its release, not a release of its own. The SDK sends `dist`
    /// with events and never with sessions: crashes and sessions meet in one release, the build kept on the report.
    @Test func eventsWithADistAndSessionsWithoutOneAreOneRelease() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let run = try python([s.dsn, "dist", "com.example.shop@2.4.0+240", "240"])
        #expect(run.status == 0, "\(run.err)")
        // Also sessions of another release without any events, and events of a release without any sessions.
        let handled = try python([s.dsn, "handled"])
        #expect(handled.status == 0, "\(handled.err)")

        #expect(try await eventually { try await reports(s, "?release=2.4.0").count == 2 })
        for report in try await reports(s, "?release=2.4.0") {
            let full = try await get(s, "/api/v1/reports/\(try #require(report["event_id"] as? String))")
            #expect(full["release"] as? String == "2.4.0")
            #expect((full["app"] as? [String: Any])?["build"] as? String == "240", "\(full)")
            #expect((full["custom_keys"] as? [String: Any])?["dist"] == nil)
        }
        // One release 2.4.0, whose two sessions (one crashed) are the crashes' sessions; and 1.0, events only.
        #expect(
            try await eventually {
                let releases = try await get(s, "/api/v1/releases")["releases"] as? [[String: Any]] ?? []
                let health = releases.first { $0["release"] as? String == "2.4.0" }?["health"] as? [String: Any]
                return releases.count == 2 && health?["sessions"] as? Int == 2
            })
        let releases = try await get(s, "/api/v1/releases")["releases"] as? [[String: Any]] ?? []
        #expect(Set(releases.compactMap { $0["release"] as? String }) == ["2.4.0", "1.0"])
        let health = try #require(releases.first { $0["release"] as? String == "2.4.0" }?["health"] as? [String: Any])
        #expect(health["crashed_sessions"] as? Int == 1)
        #expect(health["crash_free_sessions"] as? Double == 0.5)
        let eventsOnly = try #require(releases.first { $0["release"] as? String == "1.0" }?["health"] as? [String: Any])
        #expect(eventsOnly["sessions"] as? Int == 0)
        #expect(eventsOnly["crash_free_sessions"] == nil || eventsOnly["crash_free_sessions"] is NSNull)
        let issues = try await get(s, "/api/v1/issues?release=2.4.0")["issues"] as? [[String: Any]] ?? []
        #expect(!issues.isEmpty)
        #expect(issues.allSatisfy { $0["first_release"] as? String == "2.4.0" })
    }

    @Test func anSDKThatGets429BacksOffButSessionsFlow() async throws {
        // 1 event/s with a 10-event burst.
        let s = try await start(rateLimit: 1)
        defer { s.server.cleanUp() }
        let run = try python([s.dsn, "burst", "40"])
        #expect(run.status == 0, "\(run.err)")
        // The SDK read X-Sentry-Rate-Limits and disabled the error category (only that one).
        let disabled =
            run.out.split(separator: "\n").first { $0.hasPrefix("disabled:") }?.dropFirst(9).split(separator: ",") ?? []
        #expect(disabled.contains("error"))
        #expect(!disabled.contains("session"))
        let stored = try await reports(s)
        #expect(stored.count >= 10)
        #expect(stored.count < 40)
        #expect(
            try await metric(s, #"faultline_http_requests_total{route="/api/{project_id}/envelope",status="429"}"#) >= 1
        )
        // The SDK then reported what it dropped (client reports), and the project's statistics show it.
        #expect(
            try await eventually {
                let dropped = try await get(s, "/api/v1/dropped-events")["dropped"] as? [[String: Any]] ?? []
                return dropped.contains { $0["category"] as? String == "error" && ($0["quantity"] as? Int ?? 0) > 0 }
            })
    }
}
