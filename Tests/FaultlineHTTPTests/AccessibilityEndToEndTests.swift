import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The dashboard as a logged-in developer sees it, in real headless Chromium driven by Selenium
/// (`tools/a11y/check_pages.py`): axe-core finds no WCAG 2.1 A/AA or best-practice violation at desktop or phone
/// width, and at phone width (390×844, mobile emulation) no page scrolls sideways, no text is smaller than 12 px,
/// and a screenshot is taken.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct AccessibilityEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    /// axe-core's `axe.min.js` (tools/test fetches it and exports the path).
    static var axe: String? {
        let path =
            TestEnvironment.value("FAULTLINE_AXE_JS")
            ?? FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/faultline/axe-core/axe.min.js"
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// The repository's `tools/a11y/check_pages.py`, found from this file's path.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("tools/a11y/check_pages.py").path

    struct PageResult: Decodable {
        struct View: Decodable {
            struct Violation: Decodable {
                var id: String
                var help: String?
                var nodes: [[String]]?
            }
            var title: String
            var violations: [Violation]
            var scrollWidth: Int?
            var innerWidth: Int?
            var tooWide: [String]?
            var smallestFontPx: Double?
            var screenshotBytes: Int?
        }
        var desktop: View
        var phone: View
    }

    @Test func everyPageIsAccessibleAndReadableAtPhoneWidth() async throws {
        let axe = try #require(Self.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let sessions = (0..<6).map {
            InsightsEndToEndTests.session(
                "s\($0)", user: "u\($0)", release: $0 < 4 ? "1.0 (1)" : "2.0 (1)",
                status: $0 % 3 == 0 ? "crashed" : "exited")
        }
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions", headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(("[" + sessions.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
        let reports = [
            InsightsEndToEndTests.crash(
                1, site: "parseCart", version: "1.0", user: "u0", session: "s0",
                message: "a long message without spaces: " + String(repeating: "x", count: 200)),
            InsightsEndToEndTests.crash(2, site: "renderList", version: "2.0", user: "u3", session: "s3"),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        var issueID = 0
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
                let ids = (answer.json["issues"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
                issueID = ids.first ?? 0
                return ids.count == 2
                    && FileManager.default.fileExists(atPath: folder + "/site/shop/issues/\(issueID).html")
                    && ((try? String(contentsOfFile: folder + "/site/shop/index.html", encoding: .utf8)) ?? "")
                        .contains("renderList")
            })
        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))

        // A release's page (with its release gate): every release page is made from the one template.
        let releasePage = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder + "/site/shop/releases").sorted().first)
        let pages = [
            "/", "/shop/index.html", "/shop/issues.html", "/shop/issues/\(issueID).html", "/shop/releases.html",
            "/shop/releases/\(releasePage)", "/shop/alerts.html", "/shop/missing-debug-files.html",
        ]
        let shots = try TempFolder("a11y-shots")
        let run = try Command.run(
            "python3",
            [Self.script, "--axe", axe, "--shots", shots.path, "--cookie", cookie] + pages.map { server.baseURL + $0 })
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let results = try JSONDecoder().decode([String: PageResult].self, from: Data(run.out.utf8))
        #expect(results.count == pages.count)
        for page in pages {
            let result = try #require(results[server.baseURL + page], "no result for \(page)")
            // Logged in: every page is the dashboard, not the login form.
            #expect(!result.desktop.title.hasPrefix("Sign in"), "\(page) asked to log in: \(result.desktop.title)")
            for (width, view) in [("desktop", result.desktop), ("phone", result.phone)] {
                #expect(
                    view.violations.isEmpty,
                    "\(page) at \(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
            }
            let phone = result.phone
            // A page wider than the phone makes the browser zoom out (the layout viewport grows past 390 px).
            #expect(
                phone.innerWidth == 390,
                "\(page) does not fit 390 px: laid out \(phone.innerWidth ?? -1) px wide; too wide: \(phone.tooWide ?? [])"
            )
            #expect(
                (phone.scrollWidth ?? .max) <= (phone.innerWidth ?? 0),
                "\(page) scrolls sideways at phone width: \(phone.scrollWidth ?? -1) > \(phone.innerWidth ?? -1); too wide: \(phone.tooWide ?? [])"
            )
            #expect(
                (phone.smallestFontPx ?? 0) >= 12, "\(page) has text of \(phone.smallestFontPx ?? 0) px at phone width")
            #expect((phone.screenshotBytes ?? 0) > 5_000, "\(page): no screenshot")
        }
    }
}

extension AccessibilityEndToEndTests.PageResult {
    /// No axe-core violation at desktop or phone width, nothing wider than the phone, no text under 12 px.
    func expectAccessibleAndFitsAPhone(sourceLocation: SourceLocation = #_sourceLocation) {
        for (width, view) in [("desktop", desktop), ("phone", phone)] {
            #expect(
                view.violations.isEmpty,
                "\(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })",
                sourceLocation: sourceLocation)
        }
        #expect(
            (phone.scrollWidth ?? .max) <= (phone.innerWidth ?? 0),
            "scrolls sideways at phone width; too wide: \(phone.tooWide ?? [])", sourceLocation: sourceLocation)
        #expect((phone.smallestFontPx ?? 0) >= 12, sourceLocation: sourceLocation)
    }
}
