import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// Crashes, hangs and non-fatal errors ranked apart on the overview and the release page: a timeout that reached more
/// users than any crash never outranks one, nor pushes one out of a short ranking; nor does a hang.
@Suite struct TopIssueKindsTests {
    /// The demo project with a non-fatal that reached 117 users ranked first in every window.
    static func insights() -> FakeInsights {
        var insights = Fixtures.insights()
        var timeout = Fixtures.summary(4, title: "NSURLErrorDomain: The request timed out.")
        timeout.kind = .nonfatal
        let first = TopIssue(issue: timeout, users: 117, events: 400, previous: .init(users: 100, events: 300))
        var data = insights.data(Fixtures.demoID)
        for window in [TopIssueWindow.last24Hours, .last7Days, .release(Fixtures.release)] {
            data.top[window] = [first] + (data.top[window] ?? [])
        }
        insights.projects[Fixtures.demoID] = data
        return insights
    }

    /// The part of `html` from the section `id` opens to the end of that section (sections of rankings do not nest).
    static func section(_ id: String, in html: String) throws -> String {
        let start = try #require(html.range(of: "<section id=\"\(id)\""), "no section \(id)").lowerBound
        let end = try #require(html[start...].range(of: "</section>")).upperBound
        return String(html[start..<end])
    }

    @Test func theOverviewRanksCrashesApartFromNonFatalsCrashesFirst() async throws {
        // Given two issues in each ranking, of which the first is a non-fatal with the most users,
        let (pages, _) = try await Fixtures.render(
            insights: Self.insights(), limits: SiteRenderer.Limits(topIssues: 2))
        let overview = try #require(pages[SitePaths.overview(Fixtures.demo.slug)])
        // then each window's crashes rank the two crashes, without the timeout,
        for window in ["24h", "7d", "release"] {
            let crashes = try Self.section("crashes-\(window)", in: overview)
            #expect(crashes.contains("Tom &amp; Jerry"), "\(window): the second crash is ranked")
            #expect(!crashes.contains("NSURLErrorDomain"), "\(window): no non-fatal among the crashes")
            #expect(crashes.contains("<caption>Top crashes, "))
            let nonFatal = try Self.section("non-fatal-\(window)", in: overview)
            #expect(nonFatal.contains("NSURLErrorDomain: The request timed out."))
            #expect(!nonFatal.contains("Tom &amp; Jerry"))
        }
        // and the crashes come first, each kind under its own heading, linked from the top of the section.
        let crashes = try #require(overview.range(of: "<h3 id=\"crashes-heading\">Crashes</h3>"))
        let nonFatals = try #require(overview.range(of: "<h3 id=\"non-fatal-heading\">Non-fatal errors</h3>"))
        #expect(crashes.lowerBound < nonFatals.lowerBound)
        #expect(overview.contains("<li><a href=\"#non-fatal\">Non-fatal errors</a></li>"))
        #expect(overview.contains("<h4 id=\"crashes-24h-heading\">Last 24 hours</h4>"))
    }

    @Test func theReleasePageRanksItsCrashFirstWhateverANonFatalReached() async throws {
        let (pages, _) = try await Fixtures.render(
            insights: Self.insights(), limits: SiteRenderer.Limits(topIssues: 2))
        let page = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        let crashes = try Self.section("crashes", in: page)
        #expect(crashes.contains("<h3 id=\"crashes-heading\">Crashes</h3>"))
        #expect(!crashes.contains("NSURLErrorDomain"))
        // Rank 1 of the crashes is the crash with the most users.
        let first = try #require(crashes.range(of: "<td class=\"rank\">1</td>")).upperBound
        #expect(crashes[first...].prefix(2000).contains("Crash &lt;script&gt;"))
        let nonFatal = try Self.section("non-fatal", in: page)
        #expect(nonFatal.contains("NSURLErrorDomain: The request timed out."))
        #expect(page.range(of: "id=\"crashes\"")!.lowerBound < page.range(of: "id=\"non-fatal\"")!.lowerBound)
    }

    @Test func aProjectWithAHangRanksItInASectionOfItsOwn() async throws {
        // Given the demo project with a hang (sent as a crash, marked a hang when filed) ranked first in every window,
        var insights = Self.insights()
        var hang = Fixtures.summary(5, title: "ApplicationNotResponding: Application Not Responding for 5000 ms.")
        hang.hang = true
        var data = insights.data(Fixtures.demoID)
        data.issues.append(hang)
        for window in [TopIssueWindow.last24Hours, .last7Days, .release(Fixtures.release)] {
            data.top[window] = [TopIssue(issue: hang, users: 500, events: 900)] + (data.top[window] ?? [])
        }
        insights.projects[Fixtures.demoID] = data
        let (pages, _) = try await Fixtures.render(insights: insights, limits: SiteRenderer.Limits(topIssues: 2))
        // then the overview ranks it under "Hangs and ANRs", between the crashes and the non-fatal errors, in every
        // window, and never among the crashes,
        let overview = try #require(pages[SitePaths.overview(Fixtures.demo.slug)])
        for window in ["24h", "7d", "release"] {
            let hangs = try Self.section("hangs-\(window)", in: overview)
            #expect(hangs.contains("ApplicationNotResponding"), "\(window)")
            #expect(hangs.contains("<caption>Top hangs and ANRs, "), "\(window)")
            let crashes = try Self.section("crashes-\(window)", in: overview)
            #expect(!crashes.contains("ApplicationNotResponding"), "\(window)")
            #expect(crashes.contains("Tom &amp; Jerry"), "\(window): the hang pushes no crash out")
        }
        let order = ["crashes", "hangs", "non-fatal"].map {
            overview.range(of: "<h3 id=\"\($0)-heading\">")?.lowerBound
        }
        #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted())
        #expect(overview.contains("<li><a href=\"#hangs\">Hangs and ANRs</a></li>"))
        #expect(overview.contains("Crashes, hangs and non-fatal errors are ranked apart"))
        // and so does the release page.
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(try Self.section("hangs", in: release).contains("ApplicationNotResponding"))
        #expect(!(try Self.section("crashes", in: release).contains("ApplicationNotResponding")))
    }

    @Test func aProjectWithoutHangsHasNoHangsSection() async throws {
        let (pages, _) = try await Fixtures.render(insights: Self.insights())
        let overview = try #require(pages[SitePaths.overview(Fixtures.demo.slug)])
        #expect(!overview.contains("id=\"hangs"))
        #expect(overview.contains("Crashes and non-fatal errors are ranked apart"))
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(!release.contains("id=\"hangs"))
    }

    @Test func anEmptyKindSaysSoInItsOwnWords() async throws {
        let (pages, _) = try await Fixtures.render()
        let overview = try #require(pages[SitePaths.overview(Fixtures.demo.slug)])
        #expect(try Self.section("non-fatal-24h", in: overview).contains("<p>No non-fatal errors in this window.</p>"))
    }
}
