import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// Every crash-free rate shown against the project's target: the marks (words, not only colour), the target line on
/// the charts, and the releases comparison; on the rendered pages, with the default targets and a project's own.
@Suite struct CrashFreeTargetPageTests {
    @Test func aMarkSaysBelowOrMeetsInWordsWithADecorativeIcon() {
        let below = TargetMarkView(rate: 0.8946, target: 99.5)
        #expect(below.targetText == "below 99.5 % target")
        #expect(below.targetIcon == "▼")
        #expect(below.isBelow)
        #expect(below.targetClass == "target-mark target-below")
        let met = TargetMarkView(rate: 0.9995, target: 99.9)
        #expect(met.targetText == "meets 99.9 % target")
        #expect(!met.isBelow)
        let none = TargetMarkView(rate: nil, target: 99.95)
        #expect(none.targetText == "99.95 % target")
        #expect(none.targetIcon == "")
        #expect(!none.isBelow)
        #expect(TargetMarkView.percent(100) == "100 %")
    }

    @Test func aRateChartDrawsItsTargetAndMarksTheDaysBelowItByShape() {
        let points = [
            SVGChart.RatePoint(label: "2026-11-20", rate: 1, note: "a"),
            SVGChart.RatePoint(label: "2026-11-21", rate: nil, note: "b"),
            SVGChart.RatePoint(label: "2026-11-22", rate: 0.99, note: "c"),
        ]
        let svg = SVGChart.rateLine(id: "t", title: "T", description: "D", points: points, target: 99.5)
        #expect(svg.contains("<line class=\"chart-target\""))
        #expect(svg.contains("stroke-dasharray=\"6 4\""))
        #expect(svg.contains(">target 99.5 %</text>"))
        // The day below the target is a triangle whose hover text says so; the day at 100 % is a dot.
        #expect(svg.components(separatedBy: "<path class=\"chart-below\"").count - 1 == 1)
        #expect(svg.contains("2026-11-22: c, below the 99.5 % target</title>"))
        #expect(svg.components(separatedBy: "<circle ").count - 1 == 1)
        #expect(svg.contains("<title>2026-11-20: a</title></circle>"))
        // Without a target nothing of it is drawn.
        let plain = SVGChart.rateLine(id: "t", title: "T", description: "D", points: points)
        #expect(!plain.contains("chart-target") && !plain.contains("chart-below"))
        // A target under every rate is still on the chart: the y axis reaches down to it.
        let high = [SVGChart.RatePoint(label: "d", rate: 1, note: "n")]
        let low = SVGChart.rateLine(id: "t", title: "T", description: "D", points: high, target: 90)
        #expect(SVGChart.lowerBound([100, 90]) <= 90)
        #expect(low.contains(">\(Format.trimmed(SVGChart.lowerBound([100, 90]), places: 2)) %</text>"))
        #expect(low.contains(">target 90 %</text>"))
    }

    @Test func aHealthChartsTableSaysEachDaysStandingAgainstTheTarget() {
        let today = DayNumber(rawValue: 20_779)
        let series = [
            DailyHealth(day: today.adding(-2), health: ReleaseHealth(sessions: 1000, crashedSessions: 1)),
            DailyHealth(day: today, health: ReleaseHealth(sessions: 100, crashedSessions: 2)),
        ]
        let trend = HealthTrend.make(series: series, last: today, length: 3)
        let chart = ChartBlock.health(id: "c", metric: .sessions, scope: "all releases", trend: trend, target: 99.9)
        #expect(chart.columnHeaders == ["Day (UTC)", "Crash-free sessions", "Against the 99.9 % target"])
        #expect(chart.tableRowsMarkup.contains("<td>99.90 % (1 of 1000 sessions crashed)</td><td>meets target</td>"))
        #expect(chart.tableRowsMarkup.contains("<td>no data (0 sessions)</td><td>no data</td>"))
        #expect(chart.tableRowsMarkup.contains("<td>98.00 % (2 of 100 sessions crashed)</td><td>below target</td>"))
        #expect(chart.svgMarkup.contains("Target: 99.9 % (the dashed line); 1 day below it"))
    }

    /// Releases newest first: 3.0 (no crash ranked), 2.4.1, 2.4.0 (bad), 2.3.0, 2.2.0, 2.1.0, 2.0.0.
    static func releases() -> [ReleaseRow] {
        let now = Fixtures.now
        func row(_ name: String, users: Int, crashedUsers: Int, sessions: Int, crashed: Int, newIssues: Int)
            -> ReleaseRow
        {
            ReleaseRow(
                release: name, firstSeen: now, lastSeen: now,
                health: ReleaseHealth(
                    sessions: sessions, crashedSessions: crashed, users: users, crashedUsers: crashedUsers),
                adoption: 0.2, recentSessions: 200, newIssues: newIssues)
        }
        return [
            row("3.0", users: 0, crashedUsers: 0, sessions: 0, crashed: 0, newIssues: 0),
            row("2.4.1", users: 2000, crashedUsers: 2, sessions: 10_000, crashed: 5, newIssues: 1),
            row("2.4.0", users: 683, crashedUsers: 72, sessions: 3000, crashed: 90, newIssues: 3),
            row("2.3.0", users: 1000, crashedUsers: 8, sessions: 5000, crashed: 4, newIssues: 0),
            row("2.2.0", users: 10, crashedUsers: 0, sessions: 10, crashed: 0, newIssues: 0),
            row("2.1.0", users: 10, crashedUsers: 0, sessions: 10, crashed: 0, newIssues: 0),
            row("2.0.0", users: 10, crashedUsers: 0, sessions: 10, crashed: 0, newIssues: 0),
        ]
    }

    @Test func theComparisonShowsTheLatestFiveWithTheirTopCrashAndTargets() throws {
        var timeout = Fixtures.summary(10, title: "NSURLErrorDomain: The request timed out.")
        timeout.kind = .nonfatal
        let segv = Fixtures.summary(11, title: "SIGSEGV in Cart.total")
        let top: [String: [TopIssue]] = [
            // The non-fatal ranks first by users; the top crash is the SIGSEGV behind it.
            "2.4.0": [TopIssue(issue: timeout, users: 117, events: 300), TopIssue(issue: segv, users: 72, events: 90)],
            "2.4.1": [TopIssue(issue: timeout, users: 20, events: 30)],
        ]
        let comparison = ReleaseComparison(
            releases: Self.releases(), top: top, targets: CrashFreeTargets(), slug: Fixtures.demo.slug,
            from: "demo/releases.html", rendered: ["2.4.0"], userDays: ["2.4.0": 182, "2.4.1": 700],
            totalUserDays: 1000)
        #expect(comparison.cards.map(\.release.releaseName) == ["3.0", "2.4.1", "2.4.0", "2.3.0", "2.2.0"])
        #expect(comparison.comparisonHeading == "The latest 5 releases side by side")
        let bad = comparison.cards[2]
        #expect(bad.crashFreeUsersText == "89.46 % (72 of 683 users crashed)")
        #expect(bad.usersTarget.targetText == "below 99.5 % target")
        #expect(bad.sessionsTarget.targetText == "below 99.9 % target")
        #expect(bad.cardClass == "release-card release-card-below")
        #expect(bad.newIssues == 3)
        #expect(bad.usersAdoptionText == "18.20 % (182 of 1000 user-days in the last 7 days)")
        #expect(comparison.cards[3].usersAdoptionText == "0.00 % (0 of 1000 user-days in the last 7 days)")
        let crash = try #require(bad.topCrash)
        #expect(crash.crashTitle == "SIGSEGV in Cart.total")
        #expect(crash.crashHref == "issues/11.html")
        #expect(crash.crashCounts == "72 users, 90 events in this release")
        #expect(bad.release.releaseLinked)
        // 2.4.1 meets both targets (99.90 % users, 99.95 % sessions); its only ranked issue is a non-fatal.
        let hotfix = comparison.cards[1]
        #expect(hotfix.usersTarget.targetText == "meets 99.5 % target")
        #expect(hotfix.sessionsTarget.targetText == "meets 99.9 % target")
        #expect(hotfix.cardClass == "release-card")
        #expect(hotfix.topCrash == nil)
        #expect(hotfix.noTopCrash == "No crash among its top 1 issues")
        // 3.0 has no sessions yet: no data, neither met nor below, and no issues.
        let fresh = comparison.cards[0]
        #expect(fresh.usersTarget.targetText == "99.5 % target")
        #expect(fresh.cardClass == "release-card")
        #expect(fresh.noTopCrash == "No issues")
        // 2.3.0 at 99.20 % users is below 99.5 % even though its sessions (99.92 %) meet 99.9 %.
        #expect(comparison.cards[3].usersTarget.isBelow && !comparison.cards[3].sessionsTarget.isBelow)
        // Another count, and fewer releases than asked for.
        let two = ReleaseComparison(
            releases: Self.releases(), top: [:], targets: CrashFreeTargets(), slug: Fixtures.demo.slug,
            from: "demo/releases.html", rendered: [], count: 2)
        #expect(two.cards.count == 2)
        #expect(two.cards[0].usersAdoptionText == "no data (no users in the last 7 days)")
        let one = ReleaseComparison(
            releases: Array(Self.releases().prefix(1)), top: [:], targets: CrashFreeTargets(), slug: Fixtures.demo.slug,
            from: "demo/releases.html", rendered: [])
        #expect(one.comparisonHeading == "The latest release")
    }

    /// The whole site rendered for `demo` with `targets`.
    func render(_ targets: CrashFreeTargets) async throws -> [String: String] {
        var demo = Fixtures.demo
        demo.targets = targets
        let project = demo
        let sources = DashboardSources(
            projects: { [project] }, insights: Fixtures.insights(), missingDebugFiles: { _ in [] },
            event: { _ in nil })
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: Fixtures.now, since: nil) { path, html in
            await store.put(path, html)
        }
        return await store.pages
    }

    static func mark(_ standing: String, _ text: String) -> String {
        let icon = standing == "below" ? "▼" : standing == "met" ? "✓" : ""
        return "<span class=\"target-mark target-\(standing)\"><span aria-hidden=\"true\">\(icon)</span> \(text)</span>"
    }

    @Test func everyPageShowsEachRateAgainstTheDefaultTargets() async throws {
        let pages = try await render(CrashFreeTargets())
        let below = { (text: String) in Self.mark("below", text) }
        // The projects index: today's 99.00 % users and 99.52 % sessions are both below 99.5 % and 99.9 %.
        let index = try #require(pages["index.html"])
        #expect(index.contains("<td>99.00 % (2 of 200 users crashed) \(below("below 99.5 % target"))</td>"))
        #expect(index.contains("<td>99.52 % (3 of 625 sessions crashed) \(below("below 99.9 % target"))</td>"))
        // The overview: today, the windows, the charts, the releases, and the targets themselves.
        let overview = try #require(pages["demo/index.html"])
        #expect(overview.contains("99.00 % (2 of 200 users crashed) \(below("below 99.5 % target"))"))
        #expect(overview.contains("<td>99.57 % (63 of 14625 sessions crashed) \(below("below 99.9 % target"))</td>"))
        #expect(overview.contains(">target 99.5 %</text>") && overview.contains(">target 99.9 %</text>"))
        #expect(overview.contains("<th scope=\"col\">Against the 99.9 % target</th>"))
        #expect(overview.contains("<dt>Crash-free users target</dt><dd>99.5 %</dd>"))
        #expect(overview.contains("<dt>Crash-free sessions target</dt><dd>99.9 %</dd>"))
        #expect(overview.contains("<a href=\"releases.html\">Compare the latest releases side by side</a>"))
        // The releases page: the comparison first, then every release; no sessions is "no data", not met.
        let releases = try #require(pages["demo/releases.html"])
        #expect(releases.contains("<section id=\"compare\" aria-labelledby=\"compare-heading\">"))
        #expect(releases.contains("The latest 2 releases side by side"))
        #expect(releases.contains("<li class=\"release-card release-card-below\">"))
        #expect(releases.contains("95.60 % (22 of 500 users crashed) \(below("below 99.5 % target"))"))
        #expect(releases.contains("no data (0 sessions) \(Self.mark("none", "99.9 % target"))"))
        #expect(releases.contains("<a href=\"issues/1.html\">Crash &lt;script&gt;"))  // the top crash, escaped
        #expect(releases.contains("9 users, 30 events in this release"))
        // Users' adoption: the release's 5 days × 250 users of the project's 200 + 4 × 300 user-days this week.
        #expect(releases.contains("89.29 % (1250 of 1400 user-days in the last 7 days)"))
        #expect(releases.contains("0.00 % (0 of 1400 user-days in the last 7 days)"))
        // A release's page: its lifetime rates and its charts.
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(release.contains("99.07 % (43 of 4625 sessions crashed) \(below("below 99.9 % target"))"))
        #expect(release.contains(">target 99.9 %</text>") && release.contains("class=\"chart-below\""))
        // No rate on these pages without its mark: each "crashed)" of a rate is followed by one (chart hover texts and
        // chart tables say it in their own words, and trends quote an earlier rate).
        for (path, html) in pages where path.hasSuffix(".html") && !path.contains("/issues/") {
            for match in html.matches(of: #/(users|sessions|user-days) crashed\)([^<]{0,3})(<.{0,40})/#) {
                let next = String(match.output.3)
                #expect(
                    next.hasPrefix("<span class=\"target-mark") || next.hasPrefix("</td><td>")
                        || next.hasPrefix("</title>") || next.hasPrefix("</span>") || String(match.output.2) == ")",
                    "a rate without its target on \(path): \(match.output.0)")
            }
        }
    }

    @Test func aProjectsOwnTargetsAreTheOnesShown() async throws {
        let pages = try await render(CrashFreeTargets(users: 95, sessions: 99))
        let met = { (text: String) in Self.mark("met", text) }
        let overview = try #require(pages["demo/index.html"])
        #expect(overview.contains("99.00 % (2 of 200 users crashed) \(met("meets 95 % target"))"))
        #expect(overview.contains("99.52 % (3 of 625 sessions crashed) \(met("meets 99 % target"))"))
        #expect(overview.contains("<dt>Crash-free users target</dt><dd>95 %</dd>"))
        #expect(overview.contains(">target 95 %</text>") && !overview.contains(">target 99.5 %</text>"))
        let releases = try #require(pages["demo/releases.html"])
        #expect(releases.contains("95.60 % (22 of 500 users crashed) \(met("meets 95 % target"))"))
        #expect(!releases.contains("release-card-below"))
        #expect(try #require(pages["index.html"]).contains(met("meets 99 % target")))
    }
}
