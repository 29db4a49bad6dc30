import Dashboard
import FaultlineCore
import Foundation
import Testing

/// The live issue lists (`SiteRenderer.issueListPage`) and the list parts of the static site, on fixed data.
@Suite struct IssueListPageTests {
    /// The demo project with `count` open crashes (ids 1…count, issue n seen n minutes ago, n users) plus one muted
    /// and regressed non-fatal issue (id 1000).
    static func insights(count: Int) -> FakeInsights {
        var data = FakeInsights.ProjectData()
        data.issues = (1...count).map { n in
            var issue = Fixtures.summary(Int64(n), title: "Crash \(n)")
            issue.lastSeen = Fixtures.now.addingTimeInterval(-60 * Double(n))
            issue.users = n
            issue.events = 100
            return issue
        }
        var muted = Fixtures.summary(1000, title: "Muted \(Fixtures.hostile)", status: .muted)
        muted.kind = .nonfatal
        muted.signals.regressed = true
        muted.lastSeen = Fixtures.now.addingTimeInterval(-86_400)
        muted.users = 0
        muted.events = 1
        data.issues.append(muted)
        data.releases = [
            ReleaseRow(
                release: Fixtures.release, firstSeen: Fixtures.now, lastSeen: Fixtures.now, health: ReleaseHealth(),
                adoption: nil,
                recentSessions: 0, newIssues: 0)
        ]
        return FakeInsights(projects: [Fixtures.demoID: data])
    }

    static func page(_ parameters: [String: String], count: Int = 5, perPage: Int = 2, token: String? = "ab12")
        async throws -> String
    {
        let renderer = try SiteRenderer(
            webDirectory: Fixtures.webDirectory, limits: SiteRenderer.Limits(issuesPerPage: perPage))
        return try await renderer.issueListPage(
            project: Fixtures.demo, request: try IssueListRequest(parameters: parameters),
            insights: insights(count: count),
            csrfToken: token, now: Fixtures.now)
    }

    /// The issue links of a page, in order.
    static func issueLinks(_ html: String) -> [String] {
        HTMLInspector.parse(html).hrefs.filter { $0.hasPrefix("issues/") }
    }

    @Test("a page of a list shows its issues in the list's order, the total, and links to the other pages")
    func pagesOfAList() async throws {
        let first = try await Self.page(["sort": "users"])
        #expect(Self.issueLinks(first) == ["issues/5.html", "issues/4.html"])
        #expect(first.contains("<p class=\"list-total\">Issues 1–2 of 6</p>"))
        #expect(first.contains("<p>Page 1 of 3</p>"))
        #expect(first.contains("<a href=\"list?sort=users&amp;page=2\" rel=\"next\">Next page</a>"))
        #expect(first.contains("<a href=\"list?sort=users&amp;page=3\">Last page</a>"))
        #expect(!first.contains("rel=\"prev\""))
        #expect(first.contains("<caption>Issues, most users affected first</caption>"))
        let last = try await Self.page(["sort": "users", "page": "3"])
        #expect(Self.issueLinks(last) == ["issues/1.html", "issues/1000.html"])
        #expect(last.contains("<a href=\"list?sort=users&amp;page=2\" rel=\"prev\">Previous page</a>"))
        #expect(last.contains("<a href=\"list?sort=users\">First page</a>"))
        #expect(!last.contains("rel=\"next\""))
        // Every issue exactly once over the pages.
        var seen: [String] = []
        for page in 1...3 { seen += Self.issueLinks(try await Self.page(["sort": "users", "page": "\(page)"])) }
        #expect(seen.count == 6 && Set(seen).count == 6)
    }

    @Test("filters pick the issues and the form shows what is selected")
    func filters() async throws {
        let muted = try await Self.page(["status": "muted"])
        #expect(Self.issueLinks(muted) == ["issues/1000.html"])
        #expect(muted.contains("<option value=\"muted\" selected>Muted</option>"))
        #expect(muted.contains("<caption>Muted issues, most recently seen first</caption>"))
        #expect(muted.contains("<p class=\"list-total\">Issues 1–1 of 1</p>"))
        #expect(!muted.contains("class=\"pager\""), "one page needs no pager")
        #expect(
            Self.issueLinks(try await Self.page(["status": "regressed", "kind": "non-fatal"])) == ["issues/1000.html"])
        #expect(
            Self.issueLinks(try await Self.page(["kind": "crash", "status": "open"])) == [
                "issues/1.html", "issues/2.html",
            ])
        let none = try await Self.page(["status": "closed"])
        #expect(Self.issueLinks(none).isEmpty)
        #expect(none.contains("<p>No issues in this list.</p>"))
        #expect(none.contains("<p class=\"list-total\">0 issues</p>"))
        // The form is a plain GET to the live list, with a label for every select.
        let page = HTMLInspector.parse(muted)
        let form = try #require(page.tags.first { $0.name == "form" && $0.attribute("class") == "list-filters" })
        #expect(form.attribute("action") == "list")
        let selects = page.tags.filter { $0.name == "select" }.compactMap { $0.attribute("id") }
        let labels = page.tags.filter { $0.name == "label" }.compactMap { $0.attribute("for") }
        #expect(
            selects == ["filter-status", "filter-kind", "filter-release", "filter-sort"]
                && Set(labels).isSuperset(of: selects))
    }

    @Test("a release list selects the release (escaped) and links to the release's page")
    func releaseList() async throws {
        let html = try await Self.page(["release": Fixtures.release])
        let escaped = "1.0 &lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; co"
        #expect(html.contains("<option value=\"\(escaped)\" selected>\(escaped)</option>"))
        #expect(
            html.contains(
                "<a href=\"\(SitePaths.relative(from: "demo/list", to: SitePaths.release(Fixtures.demo.slug, Fixtures.release)))\">"
            ))
        #expect(!html.contains("<script>"))
        // An unknown release is still offered (selected), and links nowhere.
        let other = try await Self.page(["release": "9.9"])
        #expect(other.contains("<option value=\"9.9\" selected>9.9</option>"))
        #expect(!other.contains("stability and top issues"))
    }

    @Test("a page past the end is an empty page that says so and links back")
    func pastTheEnd() async throws {
        let html = try await Self.page(["page": "9"])
        #expect(Self.issueLinks(html).isEmpty)
        #expect(html.contains("<p>Page 9 is past the end of this list (3 pages).</p>"))
        #expect(html.contains("<a href=\"list?page=3\" rel=\"prev\">Previous page</a>"))
        #expect(html.contains("<a href=\"list\">First page</a>"))
    }

    @Test("each row has status buttons posting to the issue with the session's token and the way back to the list")
    func rowActions() async throws {
        let html = try await Self.page(["status": "muted", "sort": "events"], token: "ab12")
        #expect(html.contains("<form class=\"row-actions\" method=\"post\" action=\"issues/1000/status\">"))
        #expect(html.contains("<input type=\"hidden\" name=\"csrf\" value=\"ab12\">"))
        #expect(
            html.contains("<input type=\"hidden\" name=\"back\" value=\"/demo/list?status=muted&amp;sort=events\">"))
        // A muted issue can be reopened or closed, not muted again.
        #expect(html.contains("value=\"open\" aria-label=\"Reopen issue 1000\">Reopen</button>"))
        #expect(html.contains("value=\"closed\" aria-label=\"Close issue 1000\">Close</button>"))
        #expect(!html.contains("aria-label=\"Mute issue 1000\""))
        // Without a session the stand-in stays (the server refuses it and says to log in).
        let anonymous = try await Self.page([:], token: nil)
        #expect(
            anonymous.components(separatedBy: DashboardForms.csrfField).count - 1 == 3, "one per row, one to merge")
    }

    @Test("the static issues.html has the same row forms with the CSRF stand-in, returning to the live list")
    func staticRowActions() async throws {
        let (pages, _) = try await Fixtures.render()
        let list = try #require(pages["demo/issues.html"])
        #expect(list.components(separatedBy: DashboardForms.csrfField).count - 1 == 3, "one per row, one to merge")
        #expect(list.contains("<form class=\"row-actions\" method=\"post\" action=\"issues/1/status\">"))
        #expect(list.contains("<input type=\"hidden\" name=\"back\" value=\"/demo/list\">"))
        #expect(list.contains("<form class=\"list-filters\" method=\"get\" action=\"list\">"))
        // The release page links to its release's list.
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(
            release.contains(
                "<a href=\"../list?release=\(IssueListFilter.percentEncoded(Fixtures.release))\">All issues of this release</a>"
            ))
    }

    @Test("a list of every kind keeps crashes, hangs and non-fatal errors in sections of their own, in that order")
    func kindSections() async throws {
        // Given a page holding (most users first) a non-fatal, a hang sent as a non-fatal, and a crash…
        var data = FakeInsights.ProjectData()
        var timeout = Fixtures.summary(1, title: "NSURLErrorDomain: The request timed out.")
        timeout.kind = .nonfatal
        timeout.users = 30
        var hang = Fixtures.summary(2, title: "App Hanging: App hanging for at least 2000 ms.")
        hang.kind = .nonfatal
        hang.hang = true
        hang.users = 20
        var crash = Fixtures.summary(3, title: "SIGSEGV: boom")
        crash.users = 10
        data.issues = [timeout, hang, crash]
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        func page(_ parameters: [String: String]) async throws -> String {
            try await renderer.issueListPage(
                project: Fixtures.demo, request: try IssueListRequest(parameters: parameters),
                insights: FakeInsights(projects: [Fixtures.demoID: data]), csrfToken: nil, now: Fixtures.now)
        }
        // When the list of every kind is shown by users…
        let every = try await page(["sort": "users"])
        // Then the crash comes first under its heading, then the hang, then the timeout, each in a section.
        #expect(Self.issueLinks(every) == ["issues/3.html", "issues/2.html", "issues/1.html"])
        let headings = ["Crashes", "Hangs and ANRs", "Non-fatal errors"].map {
            every.range(of: ">\($0)</h2>")?.lowerBound
        }
        #expect(headings.allSatisfy { $0 != nil } && headings.compactMap { $0 } == headings.compactMap { $0 }.sorted())
        #expect(every.contains("<section id=\"crash\" class=\"issue-kind\" aria-labelledby=\"crash-heading\">"))
        // Each section links to its kind's own list, hangs too.
        #expect(every.contains("<a href=\"list?kind=crash&amp;sort=users\">Every crash of this list</a>"))
        #expect(every.contains("<a href=\"list?kind=hang&amp;sort=users\">Every hang and ANR of this list</a>"))
        #expect(every.contains("<a href=\"list?kind=non-fatal&amp;sort=users\">Every non-fatal error of this list</a>"))
        #expect(every.components(separatedBy: "<a href=\"list?kind=").count - 1 == 3)
        #expect(every.contains("<span class=\"kind\">hang</span>"))
        // A list of one kind is one table without a kind heading.
        let crashes = try await page(["kind": "crash"])
        #expect(Self.issueLinks(crashes) == ["issues/3.html"])
        #expect(!crashes.contains("</h2>") && !crashes.contains("Every crash"))
        // The list of hangs holds the hang alone, though it was sent as a non-fatal; the crashes' list has no hang.
        let hangs = try await page(["kind": "hang"])
        #expect(Self.issueLinks(hangs) == ["issues/2.html"])
        #expect(hangs.contains("Hangs and ANRs, most recently seen first"))
        #expect(Self.issueLinks(try await page(["kind": "non-fatal"])) == ["issues/1.html"])
    }
}
