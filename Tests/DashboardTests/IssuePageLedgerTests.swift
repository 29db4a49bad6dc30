import Dashboard
import FaultlineCore
import Foundation
import Synchronization
import Testing

/// Issue #13: issue pages are rendered only when their issue changed (a render counter says so), the summary pages
/// of a cycle come before every issue page, and a page asked for is made current on that request.
@Suite("Issue page ledger")
struct IssuePageLedgerTests {
    /// The fixture data with versions on every issue detail (issues 1 and 2 changed).
    static func versioned(events: [Int64: Int64] = [:]) -> FakeInsights {
        var insights = Fixtures.insights()
        var demo = insights.data(Fixtures.demoID)
        for (id, detail) in demo.details {
            var detail = detail
            detail.version = IssueVersion(
                changedAt: 1_000, events: events[id.rawValue] ?? 1, status: detail.summary.status.rawValue, noteBytes: -1)
            demo.details[id] = detail
        }
        demo.changed = [IssueID(1), IssueID(2)]
        insights.projects[Fixtures.demoID] = demo
        return insights
    }

    /// Writes in order, and how many had been written when the summary pages were said to be done.
    final class Recorder: Sendable {
        let state = Mutex<(paths: [String], atSummary: Int?)>(([], nil))
        func write(_ path: String) { state.withLock { $0.paths.append(path) } }
        func summaryDone() { state.withLock { $0.atSummary = $0.paths.count } }
        var paths: [String] { state.withLock { $0.paths } }
        var atSummary: Int? { state.withLock { $0.atSummary } }
    }

    static func cycle(
        _ insights: FakeInsights, ledger: IssuePageLedger, stop: Bool = false
    ) async throws -> (SiteRenderer.CycleResult, Recorder) {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let recorder = Recorder()
        let cycle = SiteRenderer.Cycle(
            ledger: ledger, summariesWritten: { recorder.summaryDone() }, stopIssuePages: { stop })
        let result = try await renderer.render(
            sources: Fixtures.sources(insights: insights), now: Fixtures.now, since: Fixtures.now.addingTimeInterval(-60),
            cycle: cycle
        ) { path, _ in recorder.write(path) }
        return (result, recorder)
    }

    static func isIssuePage(_ path: String) -> Bool { path.contains("/issues/") }

    @Test("summary pages first; an issue page is rendered again only when its issue's version moved")
    func pagesRenderOnlyWhenTheirIssueChanged() async throws {
        let ledger = IssuePageLedger()
        let (first, written) = try await Self.cycle(Self.versioned(), ledger: ledger)
        let paths = written.paths
        let firstIssue = try #require(paths.firstIndex(where: Self.isIssuePage))
        #expect(paths[..<firstIssue].count == first.summaryPages)
        #expect(paths[firstIssue...].allSatisfy(Self.isIssuePage), "every summary page before any issue page")
        #expect(written.atSummary == first.summaryPages, "told when the summary pages were all written")
        #expect(paths.contains("demo/index.html") && paths.contains("index.html") && paths.contains("demo/issues.html"))
        #expect(Set(paths[firstIssue...]) == ["demo/issues/1.html", "demo/issues/2.html"])
        #expect(first.issuePages == 2 && first.issuePagesCurrent == 0 && first.complete)
        #expect(ledger.issuePagesRendered == 2)

        // Nothing changed: the summary pages again, no issue page.
        let (second, again) = try await Self.cycle(Self.versioned(), ledger: ledger)
        #expect(second.issuePages == 0 && second.issuePagesCurrent == 2 && second.complete)
        #expect(!again.paths.contains(where: Self.isIssuePage))
        #expect(again.paths.count == second.summaryPages)
        #expect(ledger.issuePagesRendered == 2)

        // Issue 2 got an event: only its page.
        let (third, changed) = try await Self.cycle(Self.versioned(events: [2: 2]), ledger: ledger)
        #expect(changed.paths.filter(Self.isIssuePage) == ["demo/issues/2.html"])
        #expect(third.issuePages == 1 && third.issuePagesCurrent == 1)
        #expect(ledger.issuePagesRendered == 3)
    }

    @Test("newer data waiting: the cycle writes its summary pages and leaves the issue pages to the next one")
    func newerDataLeavesIssuePagesForLater() async throws {
        let ledger = IssuePageLedger()
        let (cut, written) = try await Self.cycle(Self.versioned(), ledger: ledger, stop: true)
        #expect(!cut.complete && cut.issuePages == 0)
        #expect(!written.paths.contains(where: Self.isIssuePage))
        #expect(written.paths.contains("demo/index.html") && written.paths.contains("index.html"))
        #expect(ledger.issuePagesRendered == 0)
        // The next cycle renders them.
        let (next, _) = try await Self.cycle(Self.versioned(), ledger: ledger)
        #expect(next.complete && next.issuePages == 2)
    }

    @Test("a page asked for is rendered when its issue changed or it is missing, never for an unknown issue")
    func refreshOnRequest() async throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let ledger = IssuePageLedger()
        let recorder = Recorder()
        func ask(_ issue: Int64, _ insights: FakeInsights, exists: Bool) async throws -> SiteRenderer.IssuePageRefresh {
            try await renderer.refreshIssuePage(
                IssueID(issue), of: Fixtures.demo, sources: Fixtures.sources(insights: insights), now: Fixtures.now, ledger: ledger,
                pageExists: exists
            ) { path, html in
                #expect(!html.contains("<script>"), "escaped on \(path)")
                recorder.write(path)
            }
        }
        let data = Self.versioned()
        // No such issue and no page of it: nothing written (made-up numbers write no files).
        #expect(try await ask(99, data, exists: false) == .absent)
        #expect(try await ask(1, Fixtures.insights().withoutProject(), exists: false) == .absent, "another project's")
        #expect(recorder.paths.isEmpty)
        // First request: rendered; again: current; the file gone: rendered again.
        #expect(try await ask(1, data, exists: false) == .rendered)
        #expect(try await ask(1, data, exists: true) == .current)
        #expect(try await ask(1, data, exists: false) == .rendered)
        #expect(recorder.paths == ["demo/issues/1.html", "demo/issues/1.html"])
        // A new event: rendered on the next request.
        #expect(try await ask(1, Self.versioned(events: [1: 5]), exists: true) == .rendered)
        #expect(try await ask(1, Self.versioned(events: [1: 5]), exists: true) == .current)
        // The issue gone while its page is there: the "no longer exists" page, once.
        var gone = Self.versioned()
        gone.projects[Fixtures.demoID]?.details[IssueID(1)] = nil
        #expect(try await ask(1, gone, exists: true) == .rendered)
        #expect(try await ask(1, gone, exists: true) == .current)
        #expect(recorder.paths.count == 4)
        #expect(ledger.issuePagesRendered == 4)
    }
}

extension FakeInsights {
    /// The same answers with the demo project's data filed under another project (so demo has none).
    func withoutProject() -> FakeInsights {
        var copy = self
        copy.projects[Fixtures.demoID] = nil
        copy.projects[ProjectID(77)] = data(Fixtures.demoID)
        return copy
    }
}
