import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Opens the rendered dashboard in a real browser (headless Chromium, Debian's `chromium`, installed by
/// tools/test): every page loads without errors (no missing stylesheet or link targets), shows the expected
/// numbers, keeps hostile event data inert, and renders at phone width.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct ChromiumDashboardTests {
    let http = HTTP(client: HTTPClient.shared)

    static var chromium: String? {
        ["chromium", "chromium-browser", "google-chrome"].first { name in
            (try? Command.run("sh", ["-c", "command -v \(name)"]))?.status == 0
        }
    }

    /// Loads `file` and returns the DOM after load, and what the browser logged.
    func open(_ browser: String, _ path: String, profile: String, extra: [String] = []) throws -> (
        dom: String, log: String
    ) {
        try open(browser, url: "file://" + path, profile: profile, extra: extra)
    }

    func open(_ browser: String, url: String, profile: String, extra: [String] = []) throws -> (
        dom: String, log: String
    ) {
        let result = try Command.run(
            browser,
            [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--user-data-dir=\(profile)", "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files",
            ] + extra + [url])
        #expect(result.status == 0, "chromium failed on \(url): \(result.err.suffix(2000))")
        return (result.out, result.err)
    }

    @Test func renderedPagesOpenInChromium() async throws {
        let browser = try #require(Self.chromium, "chromium is not installed (tools/test installs it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        // Given 8 users on 1.0 (two crash at two sites) and 2 on 2.0 (one crashes)…
        var sessions: [String] = []
        for u in 0..<8 {
            sessions.append(
                InsightsEndToEndTests.session(
                    "s\(u)", user: "u\(u)", release: "1.0 (1)", status: u < 2 ? "crashed" : "exited"))
        }
        for u in 8..<10 {
            sessions.append(
                InsightsEndToEndTests.session(
                    "s\(u)", user: "u\(u)", release: "2.0 (1)", status: u == 8 ? "crashed" : "exited"))
        }
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions", headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(("[" + sessions.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
        let reports = [
            InsightsEndToEndTests.crash(
                1, site: "parseCart", version: "1.0", user: "u0", session: "s0", message: "<img src=x onerror=alert(2)>"
            ),
            InsightsEndToEndTests.crash(2, site: "renderList", version: "1.0", user: "u1", session: "s1"),
            InsightsEndToEndTests.crash(
                3, site: "parseCart", version: "2.0", user: "u8", session: "s8", message: "<img src=x onerror=alert(2)>"
            ),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        var issueIDs: [Int] = []
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
                issueIDs = (answer.json["issues"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                return issueIDs.count == 2
            })

        let site = try TempFolder("faultline-site")
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site.path])
        #expect(rendered.status == 0, "\(rendered.err)")
        let profile = try TempFolder("chromium-profile")

        // Then every page opens without a failed resource or script error, with its numbers in the DOM.
        let expectations: [(String, [String])] = [
            ("index.html", ["shop"]),
            ("shop/index.html", ["70.00 %", "3 of 10", "parseCart", ".html\">1.0</a>", ".html\">2.0</a>"]),
            ("shop/issues.html", ["parseCart", "renderList"]),
            ("shop/issues/\(issueIDs[0]).html", ["main"]),
            ("shop/releases.html", [".html\">1.0</a>", "75.00 %", "2 of 8"]),
            ("shop/alerts.html", ["New issue", "SIGSEGV"]),
            ("shop/missing-debug-files.html", ["symupload"]),
        ]
        for (page, texts) in expectations {
            let (dom, log) = try open(browser, site.file(page), profile: profile.path, extra: ["--dump-dom"])
            #expect(dom.contains("<h1"), "\(page) has no heading")
            for text in texts { #expect(dom.contains(text), "\(page) does not show \(text)") }
            #expect(!dom.contains("<img src=\"x\""), "\(page) turned event data into markup")
            #expect(!dom.contains("<script>alert"), "\(page) turned event data into markup")
            for failure in ["ERR_FILE_NOT_FOUND", "Uncaught", "Not allowed to load local resource"] {
                #expect(
                    !log.contains(failure),
                    "\(page): \(log.split(separator: "\n").filter { $0.contains(failure) }.prefix(3))")
            }
        }
        // An issue page shows the hostile message escaped, as text.
        let issue = try open(
            browser, site.file("shop/issues/\(issueIDs[0]).html"), profile: profile.path, extra: ["--dump-dom"]
        ).dom
        #expect(issue.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

        // And the overview renders at phone width (a screenshot is produced).
        let shot = site.file("phone.png")
        _ = try open(
            browser, site.file("shop/index.html"), profile: profile.path,
            extra: ["--window-size=390,844", "--screenshot=\(shot)"])
        let size = (try FileManager.default.attributesOfItem(atPath: shot)[.size] as? Int) ?? 0
        #expect(size > 1000)
    }

    /// The pages as the server serves them, with its Content-Security-Policy: Chromium logs every blocked style,
    /// image or form ("… violates the following Content Security Policy directive …"); none may be.
    @Test func servedPagesKeepToTheContentSecurityPolicy() async throws {
        let browser = try #require(Self.chromium, "chromium is not installed (tools/test installs it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        // --public-dashboard: the headers are the same, and the browser needs no credentials.
        let server = try await ServerProcess(
            folder: folder, arguments: ["--public-dashboard"], environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let sessions = (0..<4).map {
            InsightsEndToEndTests.session(
                "s\($0)", user: "u\($0)", release: "1.0 (1)", status: $0 == 0 ? "crashed" : "exited")
        }
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions", headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(("[" + sessions.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
        let crash = InsightsEndToEndTests.crash(1, site: "parseCart", version: "1.0", user: "u0", session: "s0")
        #expect(try await http.postReports(server.baseURL, key: project.ingest, crash).status == 202)
        var issueID = 0
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
                issueID = (answer.json["issues"] as? [[String: Any]])?.first?["id"] as? Int ?? 0
                return issueID > 0
                    && FileManager.default.fileExists(atPath: folder + "/site/shop/issues/\(issueID).html")
                    && ((try? String(contentsOfFile: folder + "/site/shop/index.html", encoding: .utf8)) ?? "")
                        .contains("parseCart")
            })
        let profile = try TempFolder("chromium-csp-profile")
        for page in [
            "/index.html", "/shop/index.html", "/shop/issues.html", "/shop/issues/\(issueID).html",
            "/shop/releases.html",
            "/shop/alerts.html", "/shop/missing-debug-files.html", "/login",
        ] {
            let (dom, log) = try open(browser, url: server.baseURL + page, profile: profile.path, extra: ["--dump-dom"])
            #expect(dom.contains("<h1"), "\(page) has no heading")
            #expect(
                !log.contains("Content Security Policy"),
                "\(page): \(log.split(separator: "\n").filter { $0.contains("Content Security Policy") }.prefix(3))")
        }
        // The live issue lists (`/{slug}/list`): a filtered, sorted list shows its issue, the filter form shows what is
        // selected, and its GET form keeps to the policy too; an empty list says so.
        let lists: [(String, [String])] = [
            (
                "/shop/list?status=open&kind=crash&sort=users",
                [
                    "parseCart", "<caption>Open crashes, most users affected first</caption>", "Issues 1–1 of 1",
                    "<option value=\"open\" selected=\"\">Open</option>",
                    "<option value=\"users\" selected=\"\">Users affected</option>",
                ]
            ),
            ("/shop/list?status=closed", ["No issues in this list.", "0 issues"]),
            ("/shop/list?release=1.0+%281%29&page=2", ["Page 2 is past the end of this list (1 page)."]),
        ]
        for (page, texts) in lists {
            let (dom, log) = try open(browser, url: server.baseURL + page, profile: profile.path, extra: ["--dump-dom"])
            #expect(dom.contains("<h1>Issues of shop</h1>"), "\(page)")
            // A public dashboard's reader has no session to post with: the rows carry no Close/Mute buttons.
            #expect(!dom.contains("aria-label=\"Close issue \(issueID)\""), "\(page) shows a button it cannot use")
            for text in texts { #expect(dom.contains(text), "\(page) does not show \(text)") }
            #expect(
                !log.contains("Content Security Policy"),
                "\(page): \(log.split(separator: "\n").filter { $0.contains("Content Security Policy") }.prefix(3))")
        }
        #expect(
            !(try open(
                browser, url: server.baseURL + "/shop/list?status=closed", profile: profile.path, extra: ["--dump-dom"]
            ).dom
                .contains("parseCart")))
        // And a list renders at phone width (a screenshot is produced).
        let shots = try TempFolder("chromium-list-shot")
        let shot = shots.file("list-phone.png")
        _ = try open(
            browser, url: server.baseURL + "/shop/list?sort=users", profile: profile.path,
            extra: ["--window-size=390,844", "--screenshot=\(shot)"])
        #expect(((try FileManager.default.attributesOfItem(atPath: shot)[.size] as? Int) ?? 0) > 1000)
    }

    /// The search box in the nav of a served page, submitted by Chromium itself: the served form's markup (its
    /// action, method and field) goes into a local page that fills the box and submits it, and the browser lands on
    /// the results page, whose title says what was found (read from Chromium's DevTools target list). The results
    /// page then opens with the report found, linked to its event page, under the Content-Security-Policy.
    @Test func theSearchFormFindsAReportInChromium() async throws {
        let browser = try #require(Self.chromium, "chromium is not installed (tools/test installs it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(
            folder: folder, arguments: ["--public-dashboard"], environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let reports = [
            SearchEndToEndTests.crash(
                1, user: "carol-2024", plan: "enterprise", function: "Billing.charge()", message: "card declined"),
            SearchEndToEndTests.crash(2, user: "dave-1999", plan: "free", function: "Feed.load()", message: "timeout"),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        #expect(
            try await eventually {
                guard FileManager.default.fileExists(atPath: folder + "/site/shop/issues.html") else { return false }
                let answer = try await http.send(.GET, server.baseURL + "/shop/search?q=enterprise")
                return String(decoding: answer.body, as: UTF8.self).contains("events/\(Payloads.normalized(1))")
            })
        let profile = try TempFolder("chromium-search-profile")

        // The served issues page has the search box in its nav.
        let issues = try open(
            browser, url: server.baseURL + "/shop/issues.html", profile: profile.path, extra: ["--dump-dom"]
        ).dom
        let formStart = try #require(issues.range(of: "<form class=\"nav-search\""))
        let formEnd = try #require(issues[formStart.lowerBound...].range(of: "</form>"))
        var form = String(issues[formStart.lowerBound..<formEnd.upperBound])
        #expect(form.contains("action=\"search\"") && form.contains("method=\"get\"") && form.contains("name=\"q\""))

        // Chromium submits it (typed text with a space and a hyphen), and lands on the results.
        form = form.replacingOccurrences(of: "action=\"search\"", with: "action=\"\(server.baseURL)/shop/search\"")
        let page = profile.file("submit.html")
        try Data(
            """
            <!doctype html><html><body onload="document.getElementById('nav-search-q').value = 'carol-2024 enterprise';
            document.querySelector('form.nav-search').requestSubmit()">\(form)</body></html>
            """.utf8
        ).write(to: URL(fileURLWithPath: page))
        let chromium = ChildProcess()
        chromium.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        chromium.arguments = [
            browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=\(profile.path)/submit", "--remote-debugging-port=0", "--allow-file-access-from-files",
            "file://" + page,
        ]
        chromium.standardError = FileHandle.nullDevice
        chromium.standardOutput = FileHandle.nullDevice
        try chromium.run()
        defer { chromium.terminate(); chromium.waitUntilExit() }
        var landed: [String: Any] = [:]
        #expect(
            try await eventually {
                guard
                    let port =
                        (try? String(contentsOfFile: profile.path + "/submit/DevToolsActivePort", encoding: .utf8))?
                        .split(separator: "\n").first
                else { return false }
                let targets = try await http.send(.GET, "http://127.0.0.1:\(port)/json/list")
                let list = (try? JSONSerialization.jsonObject(with: Data(targets.body))) as? [[String: Any]] ?? []
                landed =
                    list.first { ($0["url"] as? String)?.hasPrefix(server.baseURL + "/shop/search?q=") == true } ?? [:]
                return (landed["title"] as? String)?.contains("report") == true
            })
        #expect(landed["url"] as? String == server.baseURL + "/shop/search?q=carol-2024+enterprise")
        #expect(landed["title"] as? String == "Search “carol-2024 enterprise”: 1 report · shop · Faultline")

        // The results page as the browser renders it: the report, linked to its event page, which opens too.
        let results = try open(
            browser, url: landed["url"] as? String ?? "", profile: profile.path, extra: ["--dump-dom"])
        #expect(results.dom.contains("href=\"events/\(Payloads.normalized(1))\""))
        #expect(!results.dom.contains(Payloads.normalized(2)))
        #expect(!results.log.contains("Content Security Policy"))
        let event = try open(
            browser, url: server.baseURL + "/shop/events/\(Payloads.normalized(1))", profile: profile.path,
            extra: ["--dump-dom"])
        #expect(event.dom.contains("Billing.charge()") && event.dom.contains("enterprise"))
        #expect(!event.log.contains("Content Security Policy"))
    }
}
