import FaultlineCore
import Foundation
import Synchronization
import Testing

@testable import Dashboard

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
                changedAt: 1_000, events: events[id.rawValue] ?? 1, status: detail.summary.status.rawValue,
                noteBytes: -1)
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
            sources: Fixtures.sources(insights: insights), now: Fixtures.now,
            since: Fixtures.now.addingTimeInterval(-60),
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
                IssueID(issue), of: Fixtures.demo, sources: Fixtures.sources(insights: insights), now: Fixtures.now,
                ledger: ledger,
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

/// Issue #13: the mark an issue page ends with (what it was rendered from) reads back exactly, and anything else at
/// a page's end (hostile or cut short) reads as no mark.
@Suite("Issue page marks")
struct IssuePageMarkTests {
    static let version = IssueVersion(changedAt: 1_764_000_000_123, events: 42, status: "regressed", noteBytes: -1)

    @Test("a page's and a gone page's marks read back from the end of a page")
    func roundTrip() throws {
        for entry in [
            IssuePageLedger.Entry.page(Self.version), .gone,
            .page(IssueVersion(changedAt: .min, events: .max, status: "open", noteBytes: 0)),
        ] {
            let mark = IssuePageMark(stamp: "0123456789abcdef", entry: entry)
            let text = try #require(mark.text)
            let page = Array(
                ("<!doctype html>\n<html><body>" + String(repeating: "x", count: 500) + "</body></html>" + text).utf8)
            #expect(IssuePageMark(tail: Array(page.suffix(IssuePageMark.tailBytes))) == mark)
            #expect(text.utf8.count <= IssuePageMark.tailBytes)
        }
    }

    @Test("no mark where the end of a page holds anything else")
    func hostileTails() {
        let good = IssuePageMark(stamp: "abc", entry: .page(Self.version)).text!
        let bad = [
            "", "<!-- faultline-page 1 ", "<!-- faultline-page 1 abc v 1 2 3 open",  // no end
            "<!-- faultline-page 1 abc v 1 2 open -->",  // a field missing
            "<!-- faultline-page 1 abc v 99999999999999999999 2 3 open -->",  // too large
            "<!-- faultline-page 1 abc v x 2 3 open -->", "<!-- faultline-page 1 abc v 1 2 3 OPEN -->",
            "<!-- faultline-page 1 ABC gone -->", "<!-- faultline-page 1  gone -->",
            "<!-- faultline-page 2 abc gone -->",
            "<!-- faultline-page 1 abc gone extra -->", "<!-- faultline-page 1 abc w 1 2 3 open -->",
            String(good.dropLast(6)), "\u{FF}\u{FE}<!-- faultline-page 1 abc v 1 2 -3 \u{0}open -->",
        ]
        for text in bad { #expect(IssuePageMark(tail: Array(text.utf8)) == nil, "\(text)") }
        #expect(IssuePageMark(tail: [0xff, 0xfe, 0x00]) == nil)
        // The last mark counts (a page quoting a mark-like text in its data comes before the real one).
        let quoted = "<!-- faultline-page 1 abc gone -->" + good
        #expect(IssuePageMark(tail: Array(quoted.utf8))?.entry == .page(Self.version))
        // A status a comment cannot carry as one word gives no mark at all: the page is rendered when asked.
        #expect(
            IssuePageMark(
                stamp: "abc", entry: .page(IssueVersion(changedAt: 1, events: 1, status: "a -->", noteBytes: 1))
            ).text == nil)
    }

    /// Pages kept in a dictionary, as the site folder keeps them.
    final class Site: Sendable {
        let files = Mutex<[String: String]>([:])
        func write(_ path: String, _ html: String) { files.withLock { $0[path] = html } }
        func tail(_ path: String) -> [UInt8]? {
            files.withLock { $0[path] }.map { Array($0.utf8.suffix(IssuePageLedger.markBytes)) }
        }
    }

    static func fullRender(
        _ insights: FakeInsights, site: Site, ledger: IssuePageLedger, build: String
    ) async throws -> (SiteRenderer.CycleResult, kept: Set<String>) {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory, build: build)
        let kept = Mutex<Set<String>>([])
        let result = try await renderer.render(
            sources: Fixtures.sources(insights: insights), now: Fixtures.now, since: nil,
            cycle: SiteRenderer.Cycle(ledger: ledger, issuePageKept: { path in _ = kept.withLock { $0.insert(path) } })
        ) { path, html in site.write(path, html) }
        return (result, kept.withLock { $0 })
    }

    @Test("a new ledger over the same pages (a restart) renders only pages whose issue or renderer changed")
    func restartKeepsCurrentPages() async throws {
        let site = Site()
        let data = IssuePageLedgerTests.versioned()
        let (first, _) = try await Self.fullRender(
            data, site: site, ledger: IssuePageLedger(pageTail: site.tail), build: "b1")
        let issuePages = site.files.withLock { $0.keys.filter(IssuePageLedgerTests.isIssuePage) }
        #expect(first.issuePages == issuePages.count && first.issuePages >= 2)

        let restarted = IssuePageLedger(pageTail: site.tail)
        let (again, kept) = try await Self.fullRender(data, site: site, ledger: restarted, build: "b1")
        #expect(again.issuePages == 0 && again.issuePagesCurrent == first.issuePages && again.complete)
        #expect(kept == Set(issuePages), "every skipped page handed over as kept")
        #expect(restarted.issuePagesReadBack == first.issuePages && restarted.issuePagesRendered == 0)

        // Issue 2 changed while the server was down: that page alone.
        let (changed, _) = try await Self.fullRender(
            IssuePageLedgerTests.versioned(events: [2: 9]), site: site, ledger: IssuePageLedger(pageTail: site.tail),
            build: "b1")
        #expect(changed.issuePages == 1 && changed.issuePagesCurrent == first.issuePages - 1)

        // Another build: all of them; a ledger that reads no file (the default): all of them.
        let (upgraded, _) = try await Self.fullRender(
            data, site: site, ledger: IssuePageLedger(pageTail: site.tail), build: "b2")
        #expect(upgraded.issuePages == first.issuePages && upgraded.issuePagesCurrent == 0)
        let (blind, _) = try await Self.fullRender(data, site: site, ledger: IssuePageLedger(), build: "b2")
        #expect(blind.issuePages == first.issuePages)
    }

    @Test("after a restart a page asked for is current by its mark; a gone page's mark counts too")
    func refreshReadsTheMark() async throws {
        let site = Site()
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory, build: "b1")
        func ask(_ ledger: IssuePageLedger, _ insights: FakeInsights) async throws -> SiteRenderer.IssuePageRefresh {
            try await renderer.refreshIssuePage(
                IssueID(1), of: Fixtures.demo, sources: Fixtures.sources(insights: insights), now: Fixtures.now,
                ledger: ledger,
                pageExists: site.tail("demo/issues/1.html") != nil, write: { site.write($0, $1) })
        }
        let data = IssuePageLedgerTests.versioned()
        #expect(try await ask(IssuePageLedger(pageTail: site.tail), data) == .rendered)
        let restarted = IssuePageLedger(pageTail: site.tail)
        #expect(try await ask(restarted, data) == .current)
        #expect(restarted.issuePagesRendered == 0)
        var gone = data
        gone.projects[Fixtures.demoID]?.details[IssueID(1)] = nil
        #expect(try await ask(restarted, gone) == .rendered)
        #expect(try await ask(IssuePageLedger(pageTail: site.tail), gone) == .current, "the gone page's mark")
        #expect(try await ask(IssuePageLedger(pageTail: site.tail), data) == .rendered, "back: a page again")
    }
}
