import Dashboard
import FaultlineApp
import FaultlineCore
import Foundation
import Testing

/// A render cycle on a real data folder: a full render that is cut short (the disk is full) writes the summary pages,
/// says it is not complete, and removes no page, since it cannot tell the pages of issues that are gone from the
/// pages it did not reach; a full render that completes removes the pages of issues that are gone.
@Suite struct RenderCycleTests {
    static var webDirectory: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("web").path
    }

    /// Posts crashes (number, call site: crashes of one site are one issue) and groups them.
    static func postAndGroup(_ app: TestApp, _ crashes: [(Int, site: Int)]) async throws {
        try await app.test { client in
            try await IssueReportsRouteTests.post(
                client, key: app.credentials.ingestKey,
                crashes.map { IssueReportsRouteTests.crash($0.0, site: $0.site) })
        }
        try await IssueReportsRouteTests.group(app)
    }

    @Test func aFullRenderCutShortRemovesNoPageAndSaysItIsIncomplete() async throws {
        let app = try await TestApp()
        try await Self.postAndGroup(app, [(0, 1), (1, 2)])
        let renderer = try app.root.siteRenderer(webDirectory: Self.webDirectory)
        let issues = app.folder + "/site/app/issues"
        try FileManager.default.createDirectory(atPath: issues, withIntermediateDirectories: true)
        let gone = issues + "/999999.html"
        try Data("an issue that is gone".utf8).write(to: URL(fileURLWithPath: gone))

        let cut = try await app.root.renderCycle(with: renderer, since: nil, stop: { true })
        #expect(!cut.complete)
        #expect(cut.issuePages == 0)
        #expect(cut.summaryPages > 1)
        #expect(FileManager.default.fileExists(atPath: app.folder + "/site/app/index.html"))
        #expect(FileManager.default.fileExists(atPath: gone))

        let whole = try await app.root.renderCycle(with: renderer, since: nil)
        #expect(whole.complete)
        #expect(whole.issuePages == 2)
        #expect(!FileManager.default.fileExists(atPath: gone))
        let pages = try FileManager.default.contentsOfDirectory(atPath: issues).filter { $0.hasSuffix(".html") }
        #expect(pages.count == 2)
    }

    /// Issue #13: a server started again over its data folder knows which issue pages are current from the marks at
    /// their ends (its ledger starts empty): its full render keeps them (and does not remove them as stale), renders
    /// only the page whose issue changed, and renders every page after an upgrade (another build) or when a page
    /// lost its mark.
    @Test func aRestartedServerKeepsTheIssuePagesThatAreStillCurrent() async throws {
        let app = try await TestApp()
        try await Self.postAndGroup(app, [(0, 1), (1, 2)])
        let first = try await app.root.renderCycle(
            with: try app.root.siteRenderer(webDirectory: Self.webDirectory), since: nil)
        #expect(first.complete && first.issuePages == 2)
        let issues = app.folder + "/site/app/issues"
        let pages = try FileManager.default.contentsOfDirectory(atPath: issues).filter { $0.hasSuffix(".html") }
            .sorted()
        try #require(pages.count == 2)
        for page in pages {
            let html = try String(contentsOfFile: issues + "/" + page, encoding: .utf8)
            #expect(
                html.contains("</html>") && html.hasSuffix(" -->\n") && html.contains("<!-- faultline-page 1 "),
                "\(page) ends with its mark")
        }

        // Restarted, nothing changed: no issue page rendered, both kept.
        func restart(build: String? = nil) async throws -> (SiteRenderer.CycleResult, IssuePageLedger) {
            let root = try Composition(folder: app.folder)
            let renderer =
                try build.map { try SiteRenderer(webDirectory: Self.webDirectory, build: $0) }
                ?? root.siteRenderer(webDirectory: Self.webDirectory)
            let result = try await root.renderCycle(with: renderer, since: nil)
            try await root.close()
            return (result, root.issuePages)
        }
        let (again, ledger) = try await restart()
        #expect(again.complete && again.issuePages == 0 && again.issuePagesCurrent == 2)
        #expect(ledger.issuePagesRendered == 0 && ledger.issuePagesReadBack == 2)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: issues).filter { $0.hasSuffix(".html") }.sorted()
                == pages)

        // A new event of the first issue: its page alone.
        try await Self.postAndGroup(app, [(2, 1)])
        let (changed, _) = try await restart()
        #expect(changed.issuePages == 1 && changed.issuePagesCurrent == 1)

        // A page that lost its mark (cut short, edited by hand): rendered again; then current again.
        let cut = issues + "/" + pages[0]
        let text = try String(contentsOfFile: cut, encoding: .utf8)
        try Data(text.utf8.dropLast(8)).write(to: URL(fileURLWithPath: cut))
        let (mended, _) = try await restart()
        #expect(mended.issuePages == 1 && mended.issuePagesCurrent == 1)
        #expect(try String(contentsOfFile: cut, encoding: .utf8).hasSuffix(" -->\n"))

        // Another build of the program (an upgrade): every page rendered again.
        let (upgraded, _) = try await restart(build: "another build")
        #expect(upgraded.issuePages == 2 && upgraded.issuePagesCurrent == 0)
        // ... and that build, started again, keeps them.
        let (kept, _) = try await restart(build: "another build")
        #expect(kept.issuePages == 0 && kept.issuePagesCurrent == 2)
    }

    /// Issue #13: after a restart a page asked for is served as it is when its mark says it is current (no render),
    /// and rendered when its issue changed since.
    @Test func aRestartedServerServesACurrentPageWithoutRenderingIt() async throws {
        let app = try await TestApp()
        try await Self.postAndGroup(app, [(0, 1)])
        _ = try await app.root.renderCycle(with: try app.root.siteRenderer(webDirectory: Self.webDirectory), since: nil)
        let page = try #require(
            try FileManager.default.contentsOfDirectory(atPath: app.folder + "/site/app/issues").first {
                $0.hasSuffix(".html")
            })
        let issue = IssueID(try #require(Int64(page.dropLast(".html".count))))

        let root = try Composition(folder: app.folder)
        let renderer = try root.siteRenderer(webDirectory: Self.webDirectory)
        let slug = try #require(ProjectSlug("app"))
        #expect(try await root.currentIssuePage(with: renderer, slug: slug, issue: issue) == .current)
        #expect(root.issuePages.issuePagesRendered == 0 && root.issuePages.issuePagesReadBack == 1)
        try await Self.postAndGroup(app, [(3, 1)])
        #expect(try await root.currentIssuePage(with: renderer, slug: slug, issue: issue) == .rendered)
        #expect(try await root.currentIssuePage(with: renderer, slug: slug, issue: issue) == .current)
        #expect(root.issuePages.issuePagesRendered == 1)
        try await root.close()
    }
}
