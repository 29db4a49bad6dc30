import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #35's morning routine, on one real server filled by the committed scenario script (`tools/scenario/morning`:
/// three weeks of three releases, the bad 2.4.0 with a new SIGSEGV and a spike of it, non-fatal timeouts, sentry-sdk
/// events of 2.4.0 with `dist` 240, then a storm), read in headless Chromium at 1366×768 and at 390 px
/// (`tools/a11y/morning_pages.py`):
///
/// - the crashed thread's first frame is on the first screen of the trending issue's page at desktop width;
/// - every crash-free rate shown has its target beside it, and 2.4.0's rates are the ones below it;
/// - crashes and non-fatal errors are ranked in separate sections, the SIGSEGV first among the crashes;
/// - the sentry-sdk and native events of 2.4.0 (240) are one release: one row in the release list, both on its page;
/// - the spiking issue, and only it, carries the trending mark;
/// - during the storm the pages say they are catching up, and stop saying so when they have;
/// - axe-core finds nothing on these pages at either width.
@Suite(.serialized, .tags(.endToEnd, .chromium, .sentryClients), .provisioned)
struct MorningRoutineEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let scenario = root.appendingPathComponent("tools/scenario/morning").path
    static let reader = root.appendingPathComponent("tools/a11y/morning_pages.py").path

    /// What tools/a11y/morning_pages.py measured of one page at one width.
    struct View: Decodable {
        struct Rate: Decodable {
            var rate: String
            var target: String?
            var visible: Bool
            var `where`: String
        }
        struct Violation: Decodable {
            var id: String
            var help: String?
            var nodes: [[String]]?
        }
        var title: String
        var innerWidth: Int
        var innerHeight: Int
        var scrollWidth: Int
        var firstFrameTop: Double?
        var firstFrameBottom: Double?
        var firstFrameText: String?
        var rates: [Rate]
        var sections: [String: [String]]
        var trending: [String]
        var releases: [String]
        var notice: String?
        var violations: [Violation]
    }

    struct Page: Decodable {
        var desktop: View
        var phone: View
        var both: [(String, View)] { [("desktop", desktop), ("phone", phone)] }
    }

    /// `92.10 % (53 of 671 users crashed)`, as the pages write a rate.
    static func rate(_ value: Any?, _ crashed: Any?, of total: Any?, _ noun: String) -> String {
        String(format: "%.2f", ((value as? Double) ?? -1) * 100)
            + " % (\(crashed as? Int ?? -1) of \(total as? Int ?? -1) \(noun) crashed)"
    }

    @Test func aMorningsTriageReadsRightInChromium() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let dsn = "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)"
        let read = [("Authorization", "Bearer \(project.upload)")]

        // Given the scenario's fill, with its default (test) size…
        let fill = try Command.run("python3", [Self.scenario, dsn])
        #expect(fill.status == 0, "\(fill.err.suffix(3000))")
        let sent = try #require(try JSONSerialization.jsonObject(with: Data(fill.out.utf8)) as? [String: Any])
        let reports = try #require(sent["reports"] as? Int) + (sent["sentry"] as? Int ?? 0)
        #expect(reports > 100 && sent["sentry"] as? Int ?? 0 > 0)

        // …processed: every report in an issue, the spike's velocity alert raised, the overview drawn with it.
        var issues: [[String: Any]] = []
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let answer = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: read)
                issues = answer.json["issues"] as? [[String: Any]] ?? []
                let alerts = try await http.send(.GET, server.baseURL + "/api/v1/alerts", headers: read)
                let overview = try await http.send(
                    .GET, server.baseURL + "/shop/index.html", headers: [("Authorization", "Bearer \(admin)")])
                let html = String(decoding: overview.body, as: UTF8.self)
                return issues.reduce(0) { $0 + ($1["events"] as? Int ?? 0) } == reports
                    && (alerts.json["alerts"] as? [[String: Any]] ?? []).contains {
                        $0["kind"] as? String == "velocity"
                    }
                    && html.contains("Trending now") && !html.contains("processing-notice")
            }, "the fill was not processed: \(issues.map { "\($0["title"] ?? "") \($0["events"] ?? "")" })")
        func issue(_ prefix: String) throws -> (id: Int, title: String) {
            let found = try #require(issues.first { ($0["title"] as? String)?.hasPrefix(prefix) == true }, "\(prefix)")
            return (found["id"] as? Int ?? 0, found["title"] as? String ?? "")
        }
        let segv = try issue("SIGSEGV")
        let abort = try issue("SIGABRT")
        let timeout = try issue("NSURLErrorDomain")
        let sentryError = try issue("ValueError")
        #expect(issues.count == 4, "\(issues.map { $0["title"] ?? "" })")

        // The release page of 2.4.0, as the release list links it.
        let list = String(
            decoding: try await http.send(
                .GET, server.baseURL + "/shop/releases.html", headers: [("Authorization", "Bearer \(admin)")]
            ).body, as: UTF8.self)
        let link = try #require(list.range(of: "\">2.4.0</a>"), "no link to 2.4.0 in the release list")
        let href = String(list[..<link.lowerBound].reversed().prefix { $0 != "\"" }.reversed())
        #expect(href.hasPrefix("releases/"), "\(href)")

        // When a person reads the pages in Chromium at both widths…
        let login = try await HTTP(client: SecurityEndToEndTests.noRedirects).send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        let urls = [
            "/shop/index.html", "/shop/releases.html", "/shop/" + href, "/shop/issues/\(segv.id).html",
        ].map { server.baseURL + $0 }
        let run = try Command.run("python3", [Self.reader, "--axe", axe, "--cookie", cookie] + urls)
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let pages = try JSONDecoder().decode([String: Page].self, from: Data(run.out.utf8))
        let overview = try #require(pages[urls[0]])
        let releases = try #require(pages[urls[1]])
        let release = try #require(pages[urls[2]])
        let issuePage = try #require(pages[urls[3]])

        // Then axe-core finds nothing, no page scrolls sideways, and none asked to sign in.
        for (url, page) in pages {
            for (width, view) in page.both {
                #expect(!view.title.hasPrefix("Sign in"), "\(url) \(width): asked to sign in")
                #expect(
                    view.violations.isEmpty,
                    "\(url) \(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
                #expect(view.scrollWidth <= view.innerWidth, "\(url) \(width) scrolls sideways: \(view.scrollWidth)")
            }
        }

        // The stack is on the first screen of the trending crash's page at a laptop's screen.
        let desktop = issuePage.desktop
        #expect(desktop.innerWidth == 1366 && desktop.innerHeight == 768)
        #expect(issuePage.phone.innerWidth == 390)
        let top = try #require(desktop.firstFrameTop, "no frame of the crashed thread found")
        #expect(desktop.firstFrameText?.contains("ImageCache.decode(_:)") == true, "\(desktop.firstFrameText ?? "")")
        #expect(top < 768 && (desktop.firstFrameBottom ?? .infinity) <= 768, "the first frame is at \(top) px")

        // Every crash-free rate shows its target, at both widths, and 2.4.0's are the ones below it.
        for (name, page) in [("overview", overview), ("releases", releases), ("release 2.4.0", release)] {
            for (width, view) in page.both {
                #expect(view.rates.count >= 4, "\(name) \(width): \(view.rates.count) rates")
                let bare = view.rates.filter { $0.target == nil || !$0.visible }
                #expect(bare.isEmpty, "\(name) \(width): rates without a target: \(bare.map(\.rate))")
            }
        }
        let health = try #require(
            (try await http.send(.GET, server.baseURL + "/api/v1/releases", headers: read).json["releases"]
                as? [[String: Any]])?.first { $0["release"] as? String == "2.4.0" }?["health"] as? [String: Any])
        let bad = [
            Self.rate(health["crash_free_users"], health["crashed_users"], of: health["users"], "users"),
            Self.rate(health["crash_free_sessions"], health["crashed_sessions"], of: health["sessions"], "sessions"),
        ]
        for (width, view) in releases.both {
            let below = view.rates.filter { $0.target?.hasPrefix("▼ below") == true }
            // The comparison card and the table row of 2.4.0, both rates; 2.3.0 and the hotfix meet their targets.
            #expect(below.map(\.rate).sorted() == (bad + bad).sorted(), "\(width): \(below.map(\.rate)) ≠ \(bad)")
            #expect(view.rates.count == 12 && view.rates.allSatisfy { $0.target?.contains("target") == true })
        }
        for (width, view) in release.both {
            let headline = view.rates.filter { $0.where == "dd" }
            #expect(headline.map(\.rate) == bad, "\(width): \(headline.map(\.rate))")
            #expect(headline.allSatisfy { $0.target?.hasPrefix("▼ below") == true }, "\(width)")
        }

        // Crashes and non-fatal errors are ranked apart: the SIGSEGV first among the crashes, though the timeout
        // affected more users.
        for (width, view) in overview.both + release.both {
            let crashes = view.sections.filter { $0.key.hasPrefix("crashes") }.values.joined()
            let nonFatal = view.sections.filter { $0.key.hasPrefix("non-fatal") }.values.joined()
            #expect(!crashes.isEmpty && !nonFatal.isEmpty, "\(width): \(view.sections)")
            #expect(crashes.allSatisfy { $0 == segv.title || $0 == abort.title }, "\(width): \(Array(crashes))")
            #expect(
                nonFatal.allSatisfy { $0 == timeout.title || $0 == sentryError.title }, "\(width): \(Array(nonFatal))")
        }
        for (width, view) in overview.both {
            #expect(view.sections["crashes-7d"]?.first == segv.title, "\(width): \(view.sections)")
            #expect(Set(view.sections["non-fatal-7d"] ?? []) == [timeout.title, sentryError.title], "\(width)")
        }
        for (width, view) in release.both {
            #expect(view.sections["crashes"] == [segv.title, abort.title], "\(width): \(view.sections)")
            #expect(Set(view.sections["non-fatal"] ?? []) == [timeout.title, sentryError.title], "\(width)")
        }
        let segvUsers = issues.first { $0["id"] as? Int == segv.id }?["users"] as? Int ?? 0
        let timeoutUsers = issues.first { $0["id"] as? Int == timeout.id }?["users"] as? Int ?? 0
        #expect(timeoutUsers > segvUsers, "the scenario's timeout should outnumber the crash: \(timeoutUsers)")

        // The sentry-sdk and native events of 2.4.0 (240) are one release: one row, both issues on its page, each
        // event of build 240 — the sentry-sdk's by its `dist`.
        for (width, view) in releases.both + overview.both {
            #expect(view.releases == ["2.4.1", "2.4.0", "2.3.0"], "\(width): \(view.releases)")
        }
        for (id, sdk) in [(sentryError.id, true), (segv.id, false)] {
            let detail = try await http.send(.GET, server.baseURL + "/api/v1/issues/\(id)", headers: read).json
            let sample = try #require((detail["samples"] as? [[String: Any]])?.first?["event_id"] as? String)
            let event = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(sample)", headers: read).json
            #expect(event["release"] as? String == "2.4.0")
            #expect((event["app"] as? [String: Any])?["build"] as? String == "240", "\(event["app"] ?? "")")
            let name = (event["sdk"] as? [String: Any])?["name"] as? String
            #expect(sdk ? name?.hasPrefix("sentry.python") == true : name == nil, "\(name ?? "no sdk")")
        }

        // The spiking issue, and only it, carries the trending mark (in "Trending now" and in its rows).
        for (width, view) in overview.both {
            #expect(view.trending.count >= 2 && Set(view.trending) == [segv.title], "\(width): \(view.trending)")
        }
        for (width, view) in release.both { #expect(view.trending == [segv.title], "\(width): \(view.trending)") }

        // And during a storm, the pages say how many reports are still being processed, until they are not.
        let storm = ChildProcess()
        storm.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        storm.arguments = ["python3", Self.scenario, dsn, "--only", "storm", "--storm", "2000"]
        storm.standardOutput = FileHandle.nullDevice
        storm.standardError = FileHandle.nullDevice
        try storm.run()
        defer { if storm.isRunning { storm.terminate() } }
        // The overview is drawn by the background render (at most ~2 s behind a change, longer on a loaded machine);
        // the spiking issue's page, stale while the storm's reports join it, is drawn when it is asked for: either
        // says so while reports wait.
        var notice = ""
        #expect(
            try await eventually(timeout: .seconds(60)) {
                for page in ["/shop/index.html", "/shop/issues/\(segv.id).html"] {
                    let answer = try await http.send(
                        .GET, server.baseURL + page, headers: [("Authorization", "Bearer \(admin)")])
                    let html = String(decoding: answer.body, as: UTF8.self)
                    guard let start = html.range(of: "<p class=\"processing-notice\"") else { continue }
                    notice = String(html[start.lowerBound...].prefix(300))
                    return true
                }
                return false
            }, "no catching-up notice during the storm")
        #expect(notice.contains("reports are still being processed"), "\(notice)")
        while storm.isRunning { try await Task.sleep(for: .milliseconds(50)) }
        #expect(storm.terminationStatus == 0)
        #expect(
            try await eventually(timeout: .seconds(60)) {
                let answer = try await http.send(
                    .GET, server.baseURL + "/shop/index.html", headers: [("Authorization", "Bearer \(admin)")])
                return !String(decoding: answer.body, as: UTF8.self).contains("processing-notice")
            }, "the notice stayed after the storm was processed")
    }
}
