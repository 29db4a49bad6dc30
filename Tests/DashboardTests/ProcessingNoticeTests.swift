import FaultlineCore
import Foundation
import Synchronization
import Testing

@testable import Dashboard

/// Issue #35 (6): while reports wait to be processed every page says how many and when the page was drawn; the pages
/// drawn so are never taken as current, so the first render after the backlog draws them again without the notice.
@Suite("Processing notice")
struct ProcessingNoticeTests {
    /// Pages written by one render (path → HTML).
    final class Pages: Sendable {
        let state = Mutex<[String: String]>([:])
        func put(_ path: String, _ html: String) { state.withLock { $0[path] = html } }
        var all: [String: String] { state.withLock { $0 } }
    }

    static func sources(pending: Int, insights: FakeInsights = IssuePageLedgerTests.versioned()) -> DashboardSources {
        var sources = Fixtures.sources(insights: insights)
        sources.pendingReports = { limit in min(pending, limit) }
        return sources
    }

    static func render(pending: Int, ledger: IssuePageLedger, since: Date? = nil) async throws -> (
        SiteRenderer.CycleResult, [String: String]
    ) {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let pages = Pages()
        let result = try await renderer.render(
            sources: sources(pending: pending), now: Fixtures.now, since: since,
            cycle: SiteRenderer.Cycle(ledger: ledger)
        ) { path, html in pages.put(path, html) }
        return (result, pages.all)
    }

    @Test("every page says how many reports wait and when it was drawn, as a status, in words")
    func everyPageCarriesTheNotice() async throws {
        // Given 1,234 reports waiting, when the site is rendered at 12:00:00 UTC
        let (result, pages) = try await Self.render(pending: 1_234, ledger: IssuePageLedger())
        #expect(result.processing == 1_234)
        let html = pages.filter { $0.key.hasSuffix(".html") }
        #expect(html.count > 5)
        // Then every page (index, overviews, lists, issue pages) carries the notice with the count and the time
        for (path, page) in html {
            #expect(page.contains("<p class=\"processing-notice\" role=\"status\">"), "\(path)")
            #expect(page.contains("1234 reports are still being processed, updated"), "\(path)")
            #expect(page.contains("<time datetime=\"\(Format.isoTime(Fixtures.now))\">12:00:00 UTC</time>"), "\(path)")
        }
        // And an issue page drawn so carries no mark: it is never taken as current
        let issue = try #require(html["demo/issues/1.html"])
        #expect(!issue.contains(IssuePageMark.opening))
    }

    @Test("no notice when nothing waits; one report is singular; a huge backlog is capped")
    func wording() async throws {
        let (result, pages) = try await Self.render(pending: 0, ledger: IssuePageLedger())
        #expect(result.processing == 0)
        #expect(pages.filter { $0.key.hasSuffix(".html") }.values.allSatisfy { !$0.contains("processing-notice") })
        #expect(try #require(pages["demo/issues/1.html"]).contains(IssuePageMark.opening))
        #expect(ProcessingNotice(pending: 1, at: Fixtures.now)?.text == "1 report is still being processed")
        #expect(
            ProcessingNotice(pending: ProcessingNotice.countLimit, at: Fixtures.now)?.text
                == "More than 100000 reports are still being processed")
        #expect(ProcessingNotice(pending: 0, at: Fixtures.now) == nil)
    }

    @Test("pages drawn with the notice are drawn again once caught up, without it")
    func caughtUpPagesLoseTheNotice() async throws {
        // Given a render during a backlog
        let ledger = IssuePageLedger()
        _ = try await Self.render(pending: 50, ledger: ledger)
        // Then the ledger says a full render is owed, once
        #expect(ledger.takeNoticeDrawn())
        #expect(!ledger.takeNoticeDrawn())
        // When the next render has nothing waiting (the full render the server then asks for)
        let (result, pages) = try await Self.render(pending: 0, ledger: ledger)
        // Then the issue pages are drawn again (none was current), without the notice, and are current from then on
        #expect(result.issuePagesCurrent == 0)
        let issue = try #require(pages["demo/issues/1.html"])
        #expect(!issue.contains("processing-notice"))
        #expect(issue.contains(IssuePageMark.opening))
        let (again, _) = try await Self.render(pending: 0, ledger: ledger)
        #expect(again.issuePages == 0)
        #expect(!ledger.takeNoticeDrawn())
    }

    @Test("an issue number without an issue: 'does not exist (yet)', with the notice while reports wait")
    func missingIssuePage() async throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let html = try await renderer.missingIssuePage(
            IssueID(777), of: Fixtures.demo, sources: Self.sources(pending: 3), now: Fixtures.now)
        #expect(html.contains("<h1>Issue 777</h1>"))
        #expect(html.contains("This issue does not exist (yet)."))
        #expect(html.contains("href=\"../issues.html\""))
        #expect(html.contains("3 reports are still being processed"))
        #expect(!html.contains("no longer exists"))
        // The page written for an issue that existed says that instead.
        let gone = try renderer.templates.render(
            IssueGonePage(slug: Fixtures.demo.slug, id: IssueID(5), now: Fixtures.now), as: "issue_gone")
        #expect(gone.contains("This issue no longer exists: its events were grouped again, into other issues."))
        #expect(!gone.contains("does not exist (yet)"))
    }
}
