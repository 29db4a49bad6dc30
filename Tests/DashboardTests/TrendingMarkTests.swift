import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// Trending marks: an issue with a velocity alert in the last day is marked, in words and with the alert's numbers,
/// in lists, on its page and on the overview; the Alerts page groups by kind, newest first, and says when nobody is
/// sent the alerts. (The fixture's issue 1 has a velocity alert an hour old: 30 of 1000 sessions, 3 %, 28 users.)
@Suite("Trending marks")
struct TrendingMarkTests {
    static let numbers = "in 30 min (3 %), 28 users"

    @Test("the trending issue is marked with its numbers in the list, on its page and on the overview; others not")
    func marksInListsPageAndOverview() async throws {
        let (pages, _) = try await Fixtures.render()
        let list = try #require(pages["demo/issues.html"])
        let rows = list.components(separatedBy: "<tr")
        let row1 = try #require(rows.first { $0.contains("href=\"issues/1.html\"") })
        let row2 = try #require(rows.first { $0.contains("href=\"issues/2.html\"") })
        #expect(row1.contains("<span class=\"badge badge-trending\">Trending:</span> 30 of 1000 sessions of 1.0 "))
        #expect(row1.contains(Self.numbers))
        #expect(!row2.contains("Trending"))

        let page1 = try #require(pages["demo/issues/1.html"])
        #expect(
            page1.contains(
                "<p class=\"is-trending-note\" role=\"note\"><span class=\"badge badge-trending\">Trending:</span> 30 of 1000 sessions of release 1.0 "
            ))
        #expect(
            page1.contains("in 30 minutes (3 %, above the 1 % threshold); 28 users affected, 300 users on the release.")
        )
        #expect(page1.contains("<a href=\"../alerts.html\">all alerts</a>"))
        #expect(!(try #require(pages["demo/issues/2.html"])).contains("is-trending-note"))

        let overview = try #require(pages["demo/index.html"])
        #expect(overview.contains("<h2 id=\"trending-heading\">Trending now</h2>"))
        let trendingNow = try #require(overview.components(separatedBy: "Trending now</h2>").dropFirst().first)
        #expect(trendingNow.contains("<a href=\"issues/1.html\">Trending "))
        #expect(trendingNow.contains(Self.numbers))
        // Before the stability figures: it is what needs a look first.
        let trendingAt = try #require(overview.range(of: "Trending now")).lowerBound
        let stabilityAt = try #require(overview.range(of: "id=\"health-heading\"")).lowerBound
        #expect(trendingAt < stabilityAt)
        #expect(!(try #require(pages["empty/index.html"])).contains("Trending now"))
        // The top-issues tables of the overview and of a release mark the row too.
        let topRows = overview.components(separatedBy: "<tr").compactMap { $0.components(separatedBy: "</tr>").first }
            .filter { $0.contains("href=\"issues/1.html\"") }
        #expect(!topRows.isEmpty && topRows.allSatisfy { $0.contains("badge-trending") })
        // No other row is: a row without a mark must not take the page's own `trending` (the section above).
        let otherRows = overview.components(separatedBy: "<tr").compactMap { $0.components(separatedBy: "</tr>").first }
            .filter { $0.contains("href=\"issues/") && !$0.contains("href=\"issues/1.html\"") }
        #expect(!otherRows.isEmpty && otherRows.allSatisfy { !$0.contains("badge-trending") }, "\(otherRows)")
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        let releaseRows = release.components(separatedBy: "<tr").compactMap {
            $0.components(separatedBy: "</tr>").first
        }.filter { $0.contains("issues/1.html") }
        #expect(!releaseRows.isEmpty && releaseRows.allSatisfy { $0.contains("badge-trending") })
    }

    @Test("a velocity alert older than a day, or about no issue, marks nothing")
    func oldAlertsMarkNothing() {
        let now = Fixtures.now
        func velocity(_ id: Int64, issue: Int64?, age: TimeInterval) -> Alert {
            Alert(
                id: id, project: Fixtures.demoID, kind: .velocity, issue: issue.map { IssueID($0) }, release: "1.0",
                title: "t", reason: ["issue_sessions": Double(id)], createdAt: now.addingTimeInterval(-age))
        }
        let newIssue = Alert(
            id: 9, project: Fixtures.demoID, kind: .newIssue, issue: IssueID(4), release: nil, title: "n", reason: [:],
            createdAt: now)
        let marks = TrendingMarks(
            [
                velocity(1, issue: 1, age: TrendingMarks.window + 60), velocity(2, issue: nil, age: 10),
                velocity(3, issue: 2, age: 7200), velocity(4, issue: 2, age: 60), newIssue,
            ], now: now)
        #expect(marks.mark(IssueID(1)) == nil)
        #expect(marks.mark(IssueID(4)) == nil)
        // The newest of an issue's velocity alerts is the one shown.
        #expect(marks.mark(IssueID(2))?.trendingShort.hasPrefix("4 of ") == true)
        #expect(marks.issues(since: now.addingTimeInterval(-120)) == [IssueID(2)])
    }

    @Test("an alert that fires after a page was rendered makes the page not current (its version folds it in)")
    func versionFoldsTheAlert() {
        let now = Fixtures.now
        let version = IssueVersion(
            changedAt: Int64(now.addingTimeInterval(-3600).timeIntervalSince1970 * 1000), events: 40, status: "open",
            noteBytes: -1)
        let alert = Alert(
            id: 1, project: Fixtures.demoID, kind: .velocity, issue: IssueID(1), release: "1.0", title: "t",
            reason: [:], createdAt: now.addingTimeInterval(-60))
        let marks = TrendingMarks([alert], now: now)
        #expect(marks.version(version, of: IssueID(1)) != version)
        #expect(
            marks.version(version, of: IssueID(1)).changedAt
                == Int64(now.addingTimeInterval(-60).timeIntervalSince1970 * 1000))
        #expect(marks.version(version, of: IssueID(2)) == version)
    }

    @Test("the live issue list marks the trending row too")
    func liveListMarks() async throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let html = try await renderer.issueListPage(
            project: Fixtures.demo, request: try IssueListRequest(parameters: [:]), insights: Fixtures.insights(),
            csrfToken: nil, now: Fixtures.now)
        #expect(html.contains("badge-trending\">Trending:</span> 30 of 1000 sessions"))
        #expect(html.components(separatedBy: "badge-trending").count == 2)
    }

    /// Renders the site with alert settings answered by `settings` and more alerts than the fixture's.
    static func alertsPage(settings: AlertSettings?) async throws -> String {
        let insights = Fixtures.insights()
        var data = insights.projects[Fixtures.demoID] ?? FakeInsights.ProjectData()
        let now = Fixtures.now
        data.alerts += [
            Alert(
                id: 3, project: Fixtures.demoID, kind: .newIssue, issue: IssueID(2), release: nil,
                title: "Newest new issue", reason: [:], createdAt: now.addingTimeInterval(-60)),
            Alert(
                id: 4, project: Fixtures.demoID, kind: .regression, issue: IssueID(2), release: "1.0",
                title: "Came back", reason: [:], createdAt: now.addingTimeInterval(-30)),
        ]
        var projects = insights.projects
        projects[Fixtures.demoID] = data
        var sources = Fixtures.sources(insights: FakeInsights(projects: projects))
        sources.alertSettings = { _ in settings }
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let store = PageStore()
        _ = try await renderer.render(sources: sources, now: now, since: nil) { path, html in
            await store.put(path, html)
        }
        return try #require(await store.pages["demo/alerts.html"])
    }

    @Test("the Alerts page groups by kind, trending first, newest first in each group, with counts")
    func alertsGroupedNewestFirst() async throws {
        let html = try await Self.alertsPage(settings: nil)
        let headings = html.components(separatedBy: "<h2 id=\"").dropFirst().compactMap {
            $0.components(separatedBy: "</h2>").first?.components(separatedBy: "\">").last
        }
        #expect(headings == ["Trending (velocity) (1)", "Regressions (1)", "New issues (2)"])
        #expect(html.contains("<a href=\"#alerts-velocity\">Trending (velocity) (1)</a>"))
        let newIssues = try #require(html.components(separatedBy: "id=\"alerts-new_issue\"").last)
        let newest = try #require(newIssues.range(of: "Newest new issue")).lowerBound
        let older = try #require(newIssues.range(of: "New issue elsewhere")).lowerBound
        #expect(newest < older)
        // Without settings to go by, the page says nothing about delivery.
        #expect(!html.contains("no-channel"))
    }

    @Test("without a webhook the Alerts page says nobody is told and how to set one; with one, that it is sent")
    func noChannelMessage() async throws {
        let none = try await Self.alertsPage(settings: AlertSettings())
        #expect(none.contains("No delivery channel is configured"))
        #expect(none.contains("<code>faultline alerts configure demo --webhook URL</code>"))
        #expect(none.contains("PUT /api/v1/alert-settings?project=demo"))
        var set = AlertSettings()
        set.webhookURL = "https://hooks.example.com/services/SECRET"
        let configured = try await Self.alertsPage(settings: set)
        #expect(!configured.contains("No delivery channel"))
        #expect(configured.contains("Alerts are also sent to the project"))
        #expect(!configured.contains("SECRET"))
    }
}
