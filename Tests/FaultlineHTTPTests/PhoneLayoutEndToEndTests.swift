import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #35, part 7: phone width as a first-class layout, on the real `faultline` binary on 127.0.0.1 in headless
/// Chromium (tools/a11y/phone_layout.py). At 390 px every list (issues, top issues, releases, search results) is a
/// stack of rows whose title, users, events and status lie inside the viewport with nothing hidden in a scroll box;
/// a table that still scrolls shows a hint; chart text is drawn at 11 px or more; the page never scrolls sideways.
/// At 1366 px the same lists are tables (one line per row). axe-core finds nothing at either width.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct PhoneLayoutEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    struct Page: Decodable {
        struct Cell: Decodable {
            var name: String
            var header: Bool
            /// The label drawn before the cell (its `::before` text), empty when none.
            var label: String
            var text: String
            var left: Int
            var right: Int
            var top: Int
            var width: Int
            var height: Int
            var clipped: Bool
        }
        struct Row: Decodable {
            var table: String
            var cells: [Cell]
        }
        struct CutTable: Decodable {
            var caption: String
            var hint: Bool
        }
        struct View: Decodable {
            var title: String
            var rows: [Row]
            var cutTables: [CutTable]
            var chartTextPx: Double?
            var innerWidth: Int
            var scrollWidth: Int
            var violations: [ReleaseComparisonEndToEndTests.Layout.View.Violation]
        }
        var desktop: View
        var phone: View
    }

    /// The columns a phone must show of a row, by list: the title (the row's header cell) and these.
    static func required(_ table: String) -> [String] {
        if table.contains("issue-list") || table.contains("search-issues") { return ["Status", "Events", "Users"] }
        if table.contains("top-list") { return ["Users affected", "Events", "Status"] }
        if table.contains("release-list") { return ["Adoption", "Crash-free users", "Crash-free sessions"] }
        return []
    }

    @Test func listsStackAtPhoneWidthWithEveryFigureOnScreen() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // Given two releases with sessions, two crashes and a non-fatal with a long title…
        var sessions: [String] = []
        for (index, release) in ["2.3.0", "2.4.0"].enumerated() {
            sessions += ReleaseComparisonEndToEndTests.sessions(release, index: index + 4, crashed: index * 5)
        }
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Type", "application/json")],
            body: Array(("[" + sessions.joined(separator: ",") + "]").utf8))
        #expect(answer.status == 202)
        let reports = [
            InsightsEndToEndTests.crash(1, site: "parseCart", version: "2.4.0", user: "2.4.0-u0", session: "2.4.0-0"),
            InsightsEndToEndTests.crash(2, site: "renderList", version: "2.3.0", user: "2.3.0-u1"),
            TopIssueKindsEndToEndTests.timeout(3, user: "2.4.0-u7").replacingOccurrences(
                of: "The request timed out.",
                with: "The request timed out while loading the feed of recommended products for the home screen"),
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
                let overview = (try? String(contentsOfFile: folder + "/site/shop/index.html", encoding: .utf8)) ?? ""
                return ids.count == 3
                    && FileManager.default.fileExists(atPath: folder + "/site/shop/issues/\(issueID).html")
                    && overview.contains("renderList") && overview.contains("recommended products")
            })
        let releasePage = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder + "/site/shop/releases").sorted().first)
        let login = try await HTTP(client: SecurityEndToEndTests.noRedirects).send(
            .POST, server.baseURL + "/login", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))

        // When each page is measured at 1366 and 390 px…
        let pages = [
            "/shop/issues.html", "/shop/list?sort=users", "/shop/index.html", "/shop/releases.html",
            "/shop/releases/\(releasePage)", "/shop/issues/\(issueID).html", "/shop/search?q=main",
        ]
        let script = URL(fileURLWithPath: AccessibilityEndToEndTests.script).deletingLastPathComponent()
            .appendingPathComponent("phone_layout.py").path
        let run = try Command.run(
            "python3", [script, "--axe", axe, "--cookie", cookie] + pages.map { server.baseURL + $0 })
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let results = try JSONDecoder().decode([String: Page].self, from: Data(run.out.utf8))

        // Then…
        var stackedLists = Set<String>()
        var labelled = 0
        for path in pages {
            let result = try #require(results[server.baseURL + path], "no result for \(path)")
            for (width, view) in [("desktop", result.desktop), ("phone", result.phone)] {
                #expect(!view.title.hasPrefix("Sign in"), "\(path) asked to log in")
                #expect(
                    view.violations.isEmpty,
                    "\(path) at \(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
                #expect(
                    view.scrollWidth <= view.innerWidth, "\(path) scrolls sideways at \(width): \(view.scrollWidth)")
                // …chart text is readable at both widths (it was about 6 px at 390 px before)…
                if let px = view.chartTextPx { #expect(px >= 11, "\(path) at \(width): chart text of \(px) px") }
            }
            #expect(result.phone.innerWidth == 390 && result.desktop.innerWidth == 1366)
            // …no table is cut without a hint, and an issue's breakdowns (events and users per value) not at all…
            for table in result.phone.cutTables {
                #expect(table.hint, "\(path): \"\(table.caption)\" scrolls at 390 px without a hint")
                #expect(
                    !table.caption.hasPrefix("Events and users by"), "\(path): \"\(table.caption)\" is cut at 390 px")
            }
            // …at a laptop's width a list is a table: a row's cells side by side on one line, without labels…
            for row in result.desktop.rows {
                let tops = Set(row.cells.map(\.top))
                #expect(tops.count == 1, "\(path) \(row.table): not one line at 1366 px: \(row.cells.map(\.top))")
                #expect(row.cells.allSatisfy { $0.label.isEmpty }, "\(path) \(row.table): labels at 1366 px")
            }
            // …and at a phone's, a stack: the title above its figures, every figure inside the screen.
            for row in result.phone.rows {
                stackedLists.insert(row.table.split(separator: " ").map(String.init).last ?? row.table)
                let title = try #require(row.cells.first { $0.header }, "\(path) \(row.table): no title")
                for name in Self.required(row.table) {
                    let cell = try #require(row.cells.first { $0.name == name }, "\(path): no \(name) in \(row.table)")
                    #expect(
                        cell.width > 0 && cell.height > 0 && cell.left >= 0 && cell.right <= 390 && !cell.clipped,
                        "\(path) \(row.table): \(name) \"\(cell.text)\" off screen at 390 px: \(cell)")
                    #expect(cell.top > title.top, "\(path) \(row.table): \(name) not below the title")
                }
                #expect(title.left >= 0 && title.right <= 390 && !title.clipped, "\(path): title \(title)")
                // Each figure's label names its column (the header it stands under at a laptop's width).
                for cell in row.cells where !cell.label.isEmpty && cell.label != "#" {
                    labelled += 1
                    #expect(
                        cell.name.hasPrefix(cell.label), "\(path) \(row.table): \(cell.name) labelled \(cell.label)")
                }
            }
        }
        #expect(
            stackedLists.isSuperset(of: ["issue-list", "release-list", "search-issues"])
                && stackedLists.contains {
                    $0.hasPrefix("top-list")
                },
            "lists measured at 390 px: \(stackedLists)")
        #expect(labelled > 0, "no figure labelled at 390 px")
    }
}
