import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// The issue page opens on the crash: title, culprit, key numbers and actions, then the crashed thread's stack
/// (system frames folded, each frame naming its module), then breadcrumbs timed against the crash, keys and
/// device; charts, breakdowns and "why grouped" below. Every sample event links to its own page, which steps
/// through the issue's events.
@Suite struct IssuePageLayoutTests {
    /// The issue page of the source-context fixture (system frames around the app's in the crashed thread).
    static func issuePage(title: String? = nil, report: Report = SourceContextPageTests.report) async throws -> String {
        var insights = Fixtures.insights()
        if let title {
            var detail = try #require(insights.projects[Fixtures.demoID]?.details[IssueID(1)])
            detail.summary.title = title
            insights.projects[Fixtures.demoID]?.details[IssueID(1)] = detail
        }
        var sources = Fixtures.sources(insights: insights)
        let symbols = SourceContextPageTests.symbols
        sources.event = { sample in sample.eventID == Fixtures.sample.eventID ? (report, symbols) : nil }
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: Fixtures.now, since: nil) { path, html in
            await store.put(path, html)
        }
        return try #require(await store.pages["demo/issues/1.html"])
    }

    /// Where each of `markers` first appears in `page`, in the order given; fails when one is missing.
    static func offsets(_ markers: [String], in page: String) throws -> [Int] {
        try markers.map { marker in
            let range = try #require(page.range(of: marker), "the page lacks \(marker)")
            return page.distance(from: page.startIndex, to: range.lowerBound)
        }
    }

    @Test func theCrashComesFirstAndChartsBreakdownsAndGroupingBelow() async throws {
        let page = try await Self.issuePage()
        let order = [
            "<h1>", "<code class=\"culprit\">", "<dl class=\"figures key-numbers\"", "<form class=\"issue-actions\"",
            "<h2 id=\"event-heading\">", "<h3 id=\"primary-thread-heading\">Thread 1 “main” (crashed)",
            "<ol class=\"frames\"", "<h3>Breadcrumbs</h3>", "<h3>Custom keys</h3>", "<h3>Device, app and user</h3>",
            "<h3>Other threads</h3>", "<h2 id=\"activity-heading\">", "<h2 id=\"breakdowns-heading\">",
            "<h2 id=\"grouping-heading\">", "<h2 id=\"samples-heading\">", "<h2 id=\"note-heading\">",
        ]
        let found = try Self.offsets(order, in: page)
        #expect(found == found.sorted(), "sections out of order: \(zip(order, found).map { "\($0.0)@\($0.1)" })")
        // The key numbers: events with their week's trend, users, first and last release.
        #expect(page.contains("<div><dt>Events</dt><dd>40 <span class=\"trend trend-worse\">"))
        #expect(page.contains("new <span class=\"trend-before\">(0 events the 7 days before)</span>"))
        #expect(page.contains("<dt>First release</dt>") && page.contains("<dt>Last release</dt>"))
        // The other threads are folded under one summary, after the crashed thread's context.
        #expect(page.contains("<details class=\"other-threads\">\n<summary>1 other thread</summary>"))
    }

    @Test func framesAreOneLineEachWithTheirModuleAndSystemRunsFolded() async throws {
        let page = try await Self.issuePage()
        // Every frame names its module: libc's by its file name, the app's by its own.
        #expect(
            page.components(separatedBy: "<span class=\"visually-hidden\">in module </span>libc.so.6</span>").count - 1
                == 5)
        #expect(page.contains("<span class=\"visually-hidden\">in module </span>App</span>"))
        // Runs of system frames are folded, saying how many; the app frame between them is open.
        #expect(page.contains("<details class=\"frames-folded\">\n<summary>2 system frames</summary>"))
        #expect(page.contains("<summary>3 system frames</summary>"))
        #expect(
            page.contains("<ol class=\"frames\" start=\"2\">\n<li class=\"frame-in-app\">\n<div class=\"frame-line\">"))
        // A frame's entry, module and flags are one line (one `frame-line` block).
        let line = try #require(
            page.components(separatedBy: "<li class=\"frame-in-app\">\n<div class=\"frame-line\">\n").dropFirst().first?
                .components(separatedBy: "</div>\n").dropLast().joined(separator: "</div>\n"))
        #expect(line.contains("<code class=\"function\">App.process()</code>"))
        #expect(line.contains("<span class=\"badge badge-in-app\">in app</span>"))
    }

    @Test func theFullNameIsThereOnDemand() async throws {
        let (pages, _) = try await Fixtures.render()
        let page = try #require(pages["demo/issues/1.html"])
        let full = "static main.App.main(arguments: [Swift.String]) async throws -&gt; ()"
        #expect(
            page.contains(
                "<code class=\"function\" title=\"\(full)\">static App.main(arguments:)</code> "
                    + "<span class=\"location\">/src/App/Main.swift:9</span> <details class=\"frame-full\">"
                    + "<summary>full name<span class=\"visually-hidden\"> of static App.main(arguments:)</span></summary>"
                    + "<code>\(full)</code></details></div>"))
        // A name that is short already has none.
        #expect(
            page.contains(
                "<code class=\"function\">Worker.run()</code> <span class=\"location\">Worker.swift:7</span></div>"))
    }

    @Test func breadcrumbsAreTimedToTheSecondAndAgainstTheCrash() async throws {
        let (pages, _) = try await Fixtures.render()
        let page = try #require(pages["demo/issues/1.html"])
        // The fixture's breadcrumb was left 100 s before the crash.
        #expect(
            page.contains(
                "<span class=\"crumb-relative\">−1 min 40 s</span>\n"
                    + "<time datetime=\"2026-11-22T11:48:20Z\">2026-11-22 11:48:20 UTC</time>"))
        let crash = Fixtures.now
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-3.2), to: crash) == "−3.2 s")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-0.04), to: crash) == "0.0 s")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(0.5), to: crash) == "+0.5 s")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-59.9), to: crash) == "−59.9 s")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-252), to: crash) == "−4 min 12 s")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-120), to: crash) == "−2 min")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-7500), to: crash) == "−2 h 5 min")
        #expect(SampleEventView.relativeTime(crash.addingTimeInterval(-3 * 86_400), to: crash) == "−3 d")
        // A hostile clock still gives text, not a trap.
        #expect(SampleEventView.relativeTime(.distantPast, to: .distantFuture) == "−3650 d")
        #expect(SampleEventView.relativeTime(Date(timeIntervalSince1970: .infinity), to: crash) == "")
        #expect(TimeView.toTheSecond(crash.addingTimeInterval(7)).text == "2026-11-22 12:00:07 UTC")
    }

    @Test func sampleEventsLinkToTheirPagesAndTheShownEventToItsOwn() async throws {
        var insights = Fixtures.insights()
        var detail = try #require(insights.projects[Fixtures.demoID]?.details[IssueID(1)])
        var older = Fixtures.sample
        older.eventID = EventID("0000000000000000000000000000000a")!
        older.cursor = 3
        detail.samples.append(older)
        insights.projects[Fixtures.demoID]?.details[IssueID(1)] = detail
        let (pages, _) = try await Fixtures.render(insights: insights)
        let page = try #require(pages["demo/issues/1.html"])
        let newest = Fixtures.sample.eventID.rawValue
        #expect(page.contains("<th scope=\"row\"><a href=\"../events/\(newest)\"><code>\(newest)</code></a></th>"))
        #expect(page.contains("<a href=\"../events/\(older.eventID.rawValue)\"><code>"))
        #expect(page.contains("<nav class=\"event-steps\" aria-label=\"Events of this issue\">"))
        #expect(page.contains("<li><a href=\"../events/\(newest)\">This event on its own page</a></li>"))
        #expect(page.contains("<li><a href=\"../events/\(older.eventID.rawValue)\" rel=\"next\">Older</a></li>"))
    }

    @Test func anEventPageStepsThroughItsIssuesEvents() async throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let id = { (hex: Character) in EventID(String(repeating: hex, count: 32))! }
        let neighbours = IssueEventNeighbours(newest: id("a"), newer: id("b"), older: id("c"), oldest: id("d"))
        let page = try await renderer.eventPage(
            project: Fixtures.demo, eventID: Fixtures.report.eventID.rawValue,
            event: (Fixtures.report, Fixtures.symbols, IssueID(1)), neighbours: neighbours)
        #expect(page.contains("<nav class=\"event-steps\" aria-label=\"Events of issue 1\">"))
        let links = try Self.offsets(
            [
                "<a href=\"\(id("a").rawValue)\">Newest</a>", "<a href=\"\(id("b").rawValue)\" rel=\"prev\">Newer</a>",
                "<a href=\"\(id("c").rawValue)\" rel=\"next\">Older</a>", "<a href=\"\(id("d").rawValue)\">Oldest</a>",
            ], in: page)
        #expect(links == links.sorted())
        // The newest event: no newer one, and "Newest" is not a link to itself.
        let first = IssueEventNeighbours(newest: Fixtures.report.eventID, newer: nil, older: id("c"), oldest: id("d"))
        let newest = try await renderer.eventPage(
            project: Fixtures.demo, eventID: Fixtures.report.eventID.rawValue,
            event: (Fixtures.report, Fixtures.symbols, IssueID(1)), neighbours: first)
        #expect(newest.contains("<li><span class=\"event-nav-off\">Newest</span></li>"))
        #expect(newest.contains("<li><span class=\"event-nav-off\">Newer</span></li>"))
        // An event not grouped yet has no steps.
        let ungrouped = try await renderer.eventPage(
            project: Fixtures.demo, eventID: Fixtures.report.eventID.rawValue,
            event: (Fixtures.report, Fixtures.symbols, nil), neighbours: neighbours)
        #expect(!ungrouped.contains("event-nav"))
    }

    @Test func aSignalCrashSaysItsSignalOnce() async throws {
        let message = "SIGSEGV (signal 11, Segmentation fault): the process was killed by the signal; exit status 139"
        var report = SourceContextPageTests.report
        report.error = ErrorInfo(type: "SIGSEGV", code: "11", message: message)
        let page = try await Self.issuePage(title: "SIGSEGV: " + message, report: report)
        #expect(page.contains("<h1>\(message)</h1>"))
        #expect(!page.contains("<dt>Message</dt>"))
        #expect(page.contains("<div><dt>Type</dt><dd>SIGSEGV</dd></div>"))

        #expect(IssueTitle.display("SIGSEGV: SIGSEGV (signal 11)") == "SIGSEGV (signal 11)")
        #expect(
            IssueTitle.display("NSURLErrorDomain: The request timed out.") == "NSURLErrorDomain: The request timed out."
        )
        #expect(IssueTitle.display(": x") == ": x")
        #expect(IssueTitle.display("no colon") == "no colon")
        #expect(IssueTitle.adds("boom", to: "SIGSEGV: boom", type: "SIGSEGV") == nil)
        #expect(IssueTitle.adds(" SIGABRT ", to: "Fatal error", type: "SIGABRT") == nil)
        #expect(IssueTitle.adds("  ", to: nil, type: nil) == nil)
        #expect(IssueTitle.adds("index 4 of 3", to: "Fatal error: Index out of range", type: nil) == "index 4 of 3")
    }

    @Test func framesOfAnEventTheAppSymbolicatedDoNotEachSaySo() {
        var report = Fixtures.report
        report.threads = [
            ThreadInfo(name: "main", crashed: true, frames: [Frame(function: "f()", file: "a.c", line: 1)])
        ]
        let status = { (symbols: SymbolicatedReport?) in
            SampleEventView(report: report, symbols: symbols).primaryThread?.frames.first?.frameStatus
        }
        #expect(status(SymbolicatedReport(state: .notNeeded, threads: [], missing: [])) == nil)
        // Without a result yet the frame says where its name came from.
        #expect(status(nil) == "symbolicated by the app")
    }

    @Test func theWeekTrendCountsTheLastSevenDaysAgainstTheSevenBefore() {
        let today = Fixtures.today
        let days = [
            IssueDay(day: today, events: 5, users: 1), IssueDay(day: today.adding(-6), events: 2, users: 1),
            IssueDay(day: today.adding(-7), events: 4, users: 1), IssueDay(day: today.adding(-13), events: 1, users: 1),
            IssueDay(day: today.adding(-14), events: 100, users: 1),
            IssueDay(day: today.adding(1), events: 100, users: 1),
            IssueDay(day: DayNumber(rawValue: .min), events: .max, users: 1),
        ]
        let trend = IssuePage.weekTrend(days, today: today)
        #expect(trend.trendChange == "+2")
        #expect(trend.trendBefore == "(5 events the 7 days before)")
        #expect(trend.trendSpoken == "up")
    }
}
