import Dashboard
import FaultlineCore
import Foundation
import Testing

@Suite("Site renderer")
struct SiteRendererTests {
    @Test("a full render writes every page at its path, and the count says so")
    func fullRenderPaths() async throws {
        let (pages, count) = try await Fixtures.render()
        let slug = Fixtures.demo.slug
        let expected = [
            "style.css", "index.html", "demo/index.html", "demo/issues.html", "demo/releases.html", "demo/alerts.html",
            "demo/missing-debug-files.html", "demo/issues/1.html", "demo/issues/2.html", "demo/issues/3.html",
            SitePaths.release(slug, Fixtures.release), SitePaths.release(slug, Fixtures.oldRelease),
            "empty/index.html", "empty/issues.html", "empty/releases.html", "empty/alerts.html",
            "empty/missing-debug-files.html",
        ]
        #expect(Set(pages.keys) == Set(expected))
        #expect(count == expected.count)
        #expect(SitePaths.release(slug, Fixtures.release) == "demo/releases/\(FNV1a.hex64(Fixtures.release)).html")
        #expect(
            pages["style.css"]
                == (try String(contentsOfFile: Fixtures.webDirectory + "/static/style.css", encoding: .utf8)))
    }

    @Test("hostile strings come out escaped on every page and never as live markup")
    func hostileStringsAreEscaped() async throws {
        let (pages, _) = try await Fixtures.render()
        for (path, html) in pages where path.hasSuffix(".html") {
            #expect(!html.contains("<script"), "live script on \(path)")
            #expect(!html.contains("<img"), "live img on \(path)")
            let page = HTMLInspector.parse(html)
            #expect(page.stray == 0, "unaccounted < on \(path)")
            for tag in page.tags {
                #expect(HTMLInspector.allowedTags.contains(tag.name), "unexpected <\(tag.name)> on \(path)")
                #expect(!tag.attributes.contains { $0.name.hasPrefix("on") }, "event handler attribute on \(path)")
                #expect(tag.attributes.allSatisfy { !$0.value.contains("\"") }, "attribute broke out on \(path)")
            }
        }
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; co"
        let issue = try #require(pages["demo/issues/1.html"])
        #expect(issue.contains("<h1>Crash \(escaped)</h1>"))  // title
        #expect(issue.contains("App.\(escaped)()"))  // function name, culprit
        #expect(issue.contains("tap \(escaped)"))  // breadcrumb message
        #expect(issue.contains("ui \(escaped)"))  // breadcrumb category
        #expect(issue.contains("screen \(escaped)"))  // breadcrumb data key
        #expect(issue.contains("<th scope=\"row\">key \(escaped)</th><td>value \(escaped)</td>"))  // custom key
        #expect(issue.contains("Phone \(escaped)"))  // device (report and breakdown)
        #expect(issue.contains("worker \(escaped)"))  // thread name
        #expect(issue.contains("1.0 \(escaped)"))  // release
        let releasePage = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(releasePage.contains("<h1>Release 1.0 \(escaped)</h1>"))
        #expect(
            releasePage.contains("<title id=\"chart-users-title\">Crash-free users per day, release 1.0 \(escaped)"))
        let alerts = try #require(pages["demo/alerts.html"])
        #expect(alerts.contains("Trending \(escaped)"))
        #expect(alerts.contains("<dt>\(escaped)</dt><dd>1.5</dd>"))  // unknown reason key
        let missing = try #require(pages["demo/missing-debug-files.html"])
        #expect(missing.contains("libfoo.so \(escaped)"))
        // A build-id with only its stripped executable still lacks debug information, and says what is there.
        #expect(missing.contains("<code class=\"build-id\">55667788</code></th>\n<td>app</td>\n<td>2</td>"))
        #expect(missing.contains("<td>executable only (names, no files or lines)</td>"))
        #expect(missing.contains("<td>nothing</td>"))
        #expect(try #require(pages["demo/issues.html"]).contains(">Tom &amp; Jerry</a>"))
        #expect(!pages.values.contains { $0.contains("Tom & Jerry") })
    }

    @Test("percentages appear with their exact counts; no sessions reads \"no data\", never 100 %")
    func percentagesWithCounts() async throws {
        let (pages, _) = try await Fixtures.render()
        let index = try #require(pages["index.html"])
        #expect(index.contains("<td>99.52 % (3 of 625 sessions crashed) <span class=\"target-mark"))
        #expect(index.contains("<td>99.00 % (2 of 200 users crashed) <span class=\"target-mark"))
        #expect(index.contains("<td>no data (0 sessions) <span class=\"target-mark"))
        #expect(index.contains("<td>no data (0 users) <span class=\"target-mark"))
        #expect(!index.contains("100.00 %"))

        let overview = try #require(pages["demo/index.html"])
        // 30 days: today 625/3, four days 1000/10, twenty days (10…29 ago) 500/1 → 14625 sessions, 63 crashed.
        #expect(overview.contains("<td>99.57 % (63 of 14625 sessions crashed) <span class=\"target-mark"))
        #expect(overview.contains("25.00 % (1000 of 4000 sessions in the last 7 days)"))
        #expect(overview.contains("99.07 % (43 of 4625 sessions crashed)"))
        #expect(overview.contains("95.60 % (22 of 500 users crashed)"))
        #expect(overview.contains("30 of 1000 sessions of release"))  // the velocity alert in words
        let releases = try #require(pages["demo/releases.html"])
        // A release without any sessions says so instead of showing a rate.
        #expect(releases.contains("data-label=\"Crash-free users\">no session data <span class=\"target-mark"))
        // Every "NN.NN %" on the site is followed by its counts, a window change, or an alert's threshold; the release
        // gate's confidence interval comes right after the rate and counts it is computed from.
        for (path, page) in pages where path.hasSuffix(".html") {
            let html = page.replacing(#/interval \d+\.\d\d % – \d+\.\d\d %/#, with: "interval")
            for match in html.matches(of: #/\d+\.\d\d %(.{0,12})/#) {
                let after = String(match.output.1)
                #expect(
                    after.hasPrefix(" (") || after.hasPrefix(", above") || after.hasPrefix(" target"),
                    "a percentage without counts on \(path): \(match.output.0)")
            }
        }
    }

    @Test("the overview compares today with yesterday and each window with the one before: arrows with numbers")
    func overviewTrends() async throws {
        let (pages, _) = try await Fixtures.render()
        let overview = try #require(pages["demo/index.html"])
        func trend(_ cls: String, _ arrow: String, _ spoken: String, _ change: String, _ before: String) -> String {
            "<span class=\"trend trend-\(cls)\"><span aria-hidden=\"true\">\(arrow)</span><span class=\"visually-hidden\">\(spoken)</span> \(change) <span class=\"trend-before\">\(before)</span></span>"
        }
        // Today 198 of 200 users crash-free, yesterday 295 of 300: up 0.67 points, shown as better.
        #expect(
            overview.contains(
                trend("better", "▲", "up", "+0.67 pp", "(was 98.33 % (5 of 300 users crashed))") + " since yesterday"))
        #expect(
            overview.contains(trend("better", "▲", "up", "+0.52 pp", "(was 99.00 % (10 of 1000 sessions crashed))")))
        // Last 7 days: 1,400 user-days with 22 crashed against 400 with 4 the 7 days before: down 0.57 points.
        #expect(overview.contains("<td>98.43 % (22 of 1400 user-days crashed) <span class=\"target-mark"))
        #expect(
            overview.contains(trend("worse", "▼", "down", "-0.57 pp", "(was 99.00 % (4 of 400 user-days crashed))")))
        // Top issues: more users than the window before is worse, fewer is better, none before is new.
        let day = try #require(overview.range(of: "Last 24 hours</h4>")).upperBound
        let week = try #require(overview.range(of: "Last 7 days</h4>")).upperBound
        let dayTable = String(overview[day..<week])
        #expect(dayTable.contains(trend("worse", "▲", "up", "+6", "(3 users the 24 hours before)")))
        #expect(dayTable.contains(trend("worse", "▲", "new", "new", "(0 users the 24 hours before)")))
        let weekTable = String(
            overview[week...].prefix(while: { _ in true }).split(separator: "</section>").first ?? "")
        #expect(weekTable.contains(trend("better", "▼", "down", "-3", "(12 users the 7 days before)")))
        #expect(weekTable.contains(trend("same", "=", "unchanged", "±0", "(2 users the 7 days before)")))
        // A release's ranking has no window before it: no trend column.
        let release = try #require(pages[SitePaths.release(Fixtures.demo.slug, Fixtures.release)])
        #expect(!release.contains("class=\"trend"))
    }

    @Test("charts are labelled images with a table of every day's numbers")
    func chartsHaveTextAlternatives() async throws {
        let (pages, _) = try await Fixtures.render()
        let overview = try #require(pages["demo/index.html"])
        for id in ["chart-users", "chart-sessions"] {
            #expect(overview.contains("role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\""))
            #expect(overview.contains("<title id=\"\(id)-title\">"))
            #expect(overview.contains("<desc id=\"\(id)-desc\">"))
        }
        // The sessions table has one row per day of the 30, with that day's numbers (or "no data").
        let sessionsTable = try #require(
            overview.components(separatedBy: "Crash-free sessions per day, all releases, last 30 days: every day")
                .dropFirst().first)
        for offset in 0..<30 {
            let day = Fixtures.today.adding(-offset).description
            let cell: String
            switch offset {
            case 0: cell = "99.52 % (3 of 625 sessions crashed)"
            case 1...4: cell = "99.00 % (10 of 1000 sessions crashed)"
            case 5...9: cell = "no data (0 sessions)"
            default: cell = "99.80 % (1 of 500 sessions crashed)"
            }
            #expect(
                sessionsTable.contains("<th scope=\"row\"><time datetime=\"\(day)\">\(day)</time></th><td>\(cell)</td>")
            )
        }
        let issue = try #require(pages["demo/issues/1.html"])
        #expect(issue.contains("<title id=\"chart-events-30-title\">Events per day, last 30 days</title>"))
        let today = Fixtures.today
        #expect(
            issue.contains("<th scope=\"row\"><time datetime=\"\(today)\">\(today)</time></th><td>5</td><td>3</td>"))
        // Event tables list the days with events; the rest are said to be zero, not listed one by one.
        let twoDaysAgo = Fixtures.today.adding(-2)
        #expect(
            issue.contains(
                "<th scope=\"row\"><time datetime=\"\(twoDaysAgo)\">\(twoDaysAgo)</time></th><td>35</td><td>11</td>"))
        #expect(!issue.contains("<time datetime=\"\(Fixtures.today.adding(-89))\">"))
        #expect(issue.contains("days with events (every other day had none)"))
    }

    @Test("the issue page shows the crashed thread first, inline frames marked, file:line and module + offset")
    func issuePageFrames() async throws {
        let (pages, _) = try await Fixtures.render()
        let issue = try #require(pages["demo/issues/1.html"])
        let crashed = try #require(issue.range(of: "Thread 1 “main” (crashed)"))
        let other = try #require(issue.range(of: "Thread 0 “worker"))
        #expect(crashed.lowerBound < other.lowerBound)
        let inlined = " <span class=\"badge badge-inlined\">inlined</span>"
        #expect(issue.contains("<code class=\"function\">Swift runtime failure: Index out of range</code>\(inlined)"))
        #expect(issue.contains("<span class=\"location\">/src/App/Process.swift:42</span>\(inlined)"))
        // Frames read as the developer wrote them; the full demangled name is there on demand.
        #expect(
            issue.contains(
                "<span class=\"location\">/src/App/Main.swift:9</span> <details class=\"frame-full\">"
                    + "<summary>full name<span class=\"visually-hidden\"> of static App.main(arguments:)</span></summary>"
                    + "<code>static main.App.main(arguments: [Swift.String]) async throws -&gt; ()</code></details></div>"
            ))
        // A name that is short already gets none.
        #expect(
            issue.contains(
                "<code class=\"function\">Worker.run()</code> <span class=\"location\">Worker.swift:7</span></div>"))
        #expect(!issue.contains("<summary>full name<span class=\"visually-hidden\"> of Worker.run()"))
        #expect(issue.contains("<code class=\"frame-address\">libfoo.so + 0x1ff</code>"))  // return address − 1, module-relative
        #expect(issue.contains("debug file missing: upload it with symupload"))
        #expect(issue.contains("<ol class=\"timeline\">"))
        #expect(issue.contains("<time datetime=\"2026-11-22T11:48:20Z\">2026-11-22 11:48:20 UTC</time>"))
        #expect(issue.contains("<code>v1:0123456789abcdef</code>"))
        // A sample that was pruned says so.
        var insights = Fixtures.insights()
        var detail = try #require(insights.projects[Fixtures.demoID]?.details[IssueID(1)])
        detail.samples[0].eventID = EventID("00000000000000000000000000000001")!
        insights.projects[Fixtures.demoID]?.details[IssueID(1)] = detail
        let (pruned, _) = try await Fixtures.render(insights: insights)
        #expect(try #require(pruned["demo/issues/1.html"]).contains("no longer stored (it was pruned)"))
    }

    @Test("an incremental render writes the changed issues' pages and always the overview and lists")
    func incrementalRender() async throws {
        let (pages, count) = try await Fixtures.render(since: Fixtures.now.addingTimeInterval(-60))
        #expect(pages["demo/issues/2.html"] != nil)
        #expect(pages["demo/issues/1.html"] == nil)
        #expect(pages["demo/issues/3.html"] == nil)
        for path in [
            "index.html", "style.css", "demo/index.html", "demo/issues.html", "demo/releases.html", "demo/alerts.html",
            "demo/missing-debug-files.html", "empty/index.html",
        ] {
            #expect(pages[path] != nil, "\(path) not written")
        }
        #expect(count == pages.count)
    }

    @Test("an issue that is gone gets a page saying so instead of a dead link")
    func goneIssue() async throws {
        var insights = Fixtures.insights()
        insights.projects[Fixtures.demoID]?.details[IssueID(2)] = nil
        let (pages, _) = try await Fixtures.render(insights: insights)
        #expect(try #require(pages["demo/issues/2.html"]).contains("This issue no longer exists"))
    }

    @Test("every link on every page resolves to a rendered page, the stylesheet, or an id on the same page")
    func linksResolve() async throws {
        let (pages, _) = try await Fixtures.render()
        for (path, html) in pages where path.hasSuffix(".html") {
            let page = HTMLInspector.parse(html)
            let hrefs = page.hrefs
            #expect(
                hrefs.contains { HTMLInspector.resolve($0, from: path) == "style.css" }, "\(path) lacks the stylesheet")
            for href in hrefs {
                #expect(!href.hasPrefix("/") && !href.contains(":"), "\(path) has a non-relative link \(href)")
                if href.hasPrefix("#") {
                    #expect(page.ids.contains(String(href.dropFirst())), "\(path): \(href) names no id")
                } else if let query = href.firstIndex(of: "?") {
                    // Only the live issue lists (`<slug>/list?…`, answered by the server) take a query.
                    let target = HTMLInspector.resolve(String(href[..<query]), from: path)
                    #expect(target == path.split(separator: "/").first.map { "\($0)/list" }, "\(path): \(href)")
                } else {
                    let target = HTMLInspector.resolve(href, from: path)
                    // The live issue lists and settings pages, and the event pages the server answers
                    // (`<slug>/events/<event id>`).
                    let live =
                        target.map {
                            let parts = $0.split(separator: "/")
                            return (($0.hasSuffix("/list") || $0.hasSuffix("/settings")) && parts.count == 2)
                                || (parts.count == 3 && parts[1] == "events" && EventID(String(parts[2])) != nil)
                        } == true
                    // The signed-in person's account page (`account`, every page's navigation) is the server's too.
                    let account = target == SitePaths.account
                    #expect(
                        live || account || target.map { pages[$0] != nil } == true, "\(path): \(href) leads nowhere")
                }
            }
        }
        // The alert about an issue without a page is not linked; the one about issue 1 is.
        let alerts = try #require(pages["demo/alerts.html"])
        #expect(alerts.contains("<a href=\"issues/1.html\">Trending"))
        #expect(!alerts.contains("issues/99.html"))
    }

    @Test(
        "every page has the accessible frame: doctype, lang, viewport, one h1, ordered headings, nav, skip link, main")
    func accessibleFrame() async throws {
        let (pages, _) = try await Fixtures.render()
        var all = pages.filter { $0.key.hasSuffix(".html") }
        all["login"] = try SiteRenderer(webDirectory: Fixtures.webDirectory).loginPage(error: nil, next: "/")
        for (path, html) in all {
            #expect(html.hasPrefix("<!doctype html>\n<html lang=\"en\">"), "\(path)")
            #expect(
                html.contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"), "\(path)")
            #expect(html.contains("<nav aria-label=\"Site\">\n<a class=\"skip-link\" href=\"#main\">"), "\(path)")
            #expect(html.contains("<main id=\"main\""), "\(path)")
            let page = HTMLInspector.parse(html)
            let levels = page.headingLevels
            #expect(levels.first == 1 && levels.filter { $0 == 1 }.count == 1, "\(path): \(levels)")
            for (a, b) in zip(levels, levels.dropFirst()) {
                #expect(b <= a + 1, "\(path) skips from h\(a) to h\(b)")
            }
            let tags = page.tags
            #expect(tags.filter { $0.name == "table" }.count == tags.filter { $0.name == "caption" }.count, "\(path)")
            for th in tags where th.name == "th" {
                #expect(th.attribute("scope") == "col" || th.attribute("scope") == "row", "\(path): <th> without scope")
            }
        }
    }

    @Test("the login page escapes its error and the next target")
    func loginPage() throws {
        let renderer = try SiteRenderer(webDirectory: Fixtures.webDirectory)
        let html = try renderer.loginPage(error: "Bad token \(Fixtures.script)", next: "/demo/\(Fixtures.breakout)")
        #expect(html.contains("<p class=\"error\" role=\"alert\">Bad token &lt;script&gt;alert(1)&lt;/script&gt;</p>"))
        #expect(html.contains("name=\"next\" value=\"/demo/&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\""))
        #expect(html.contains("<link rel=\"stylesheet\" href=\"style.css\">"))
        #expect(try !renderer.loginPage(error: nil, next: "/").contains("role=\"alert\""))
    }

    @Test("a missing web folder or template is an error naming the path")
    func missingPaths() throws {
        let missing = "/nonexistent/faultline-web"
        let error = #expect(throws: DashboardError.self) { try SiteRenderer(webDirectory: missing) }
        #expect(error?.code == .missingPath)
        #expect(error?.message.contains("\(missing)/templates") == true)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dash-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/templates", withIntermediateDirectories: true)
        try "{{<layout}}{{/layout}}".write(
            toFile: folder + "/templates/index.mustache", atomically: true, encoding: .utf8)
        let noLayout = #expect(throws: DashboardError.self) { try SiteRenderer(webDirectory: folder) }
        #expect(noLayout?.message.contains("\(folder)/templates/layout.mustache") == true)
    }

    @Test(
        "the issue page has the status and note forms with the CSRF stand-in, who changed the status, and the note escaped"
    )
    func issueActionForms() async throws {
        let (pages, _) = try await Fixtures.render()
        let issue = try #require(pages["demo/issues/1.html"])
        // One stand-in per form that posts: status, note, tracker issue and merge (and an unmerge per merged
        // fingerprint, none here); a reader who may not post gets the page without them (ActionForms). The
        // navigation's sign-out carries none: it asks again on a page that has the session's token.
        let signOut = issue.components(separatedBy: "<form class=\"nav-signout\" method=\"post\"").count - 1
        #expect(signOut == 1)
        let posting = issue.components(separatedBy: "method=\"post\"").count - 1 - signOut
        #expect(posting >= 4)
        #expect(issue.components(separatedBy: DashboardForms.csrfField).count - 1 == posting, "one stand-in per form")
        #expect(issue.contains("<form class=\"issue-merge\" method=\"post\" action=\"1/merge\">"))
        #expect(issue.contains("<form class=\"issue-tracker\" method=\"post\""))
        #expect(issue.contains("<form class=\"issue-actions\" method=\"post\" action=\"1/status\">"))
        #expect(issue.contains("<form class=\"issue-note\" method=\"post\" action=\"1/note\">"))
        // The fixture issue is open: it can be closed or muted, not reopened.
        #expect(issue.contains("value=\"closed\">Close</button>") && issue.contains("value=\"muted\">Mute</button>"))
        #expect(!issue.contains(">Reopen</button>"))
        #expect(!issue.contains("Status last changed"), "a status that never changed has no history line")

        var insights = Fixtures.insights()
        var detail = try #require(insights.projects[Fixtures.demoID]?.details[IssueID(1)])
        detail.summary.status = .closed
        detail.statusChange = IssueStatusChange(
            at: Fixtures.now.addingTimeInterval(-60), by: "the dashboard (session 4)")
        detail.note = "Fixed in 2.1 \(Fixtures.hostile)"
        insights.projects[Fixtures.demoID]?.details[IssueID(1)] = detail
        let page = try #require(try await Fixtures.render(insights: insights).pages["demo/issues/1.html"])
        #expect(page.contains(">Reopen</button>") && !page.contains(">Close</button>"))
        #expect(page.contains("by the dashboard (session 4)."))
        let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; co"
        #expect(page.contains("<p class=\"note\">Fixed in 2.1 \(escaped)</p>"))
        #expect(!page.contains("<script"))
    }

    /// Both are written by `ChartBlock`/`SVGChart`, every text in them escaped (`ChartBlockTests`, `SVGChartTests`).
    @Test("templates insert raw markup only for the server-made SVG and chart table rows")
    func onlySVGIsRaw() throws {
        let folder = Fixtures.webDirectory + "/templates"
        var raw: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".mustache") {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            raw += text.matches(of: #/\{\{\{\s*([^}]*)\}\}\}|\{\{&\s*([^}]*)\}\}/#).map { String($0.output.0) }
        }
        #expect(raw.sorted() == ["{{{svgMarkup}}}", "{{{tableRowsMarkup}}}"])
    }

    @Test("issues.html is the first page of every issue, with the total and a link to the next page served live")
    func issueListFirstPage() async throws {
        let (all, _) = try await Fixtures.render()
        let allList = try #require(all["demo/issues.html"])
        #expect(allList.components(separatedBy: "<th scope=\"row\">").count - 1 == 2)
        #expect(allList.contains("<p class=\"list-total\">Issues 1–2 of 3</p>"))
        #expect(!allList.contains("rel=\"next\""))
        let (cut, _) = try await Fixtures.render(limits: SiteRenderer.Limits(issuesPerPage: 1))
        let list = try #require(cut["demo/issues.html"])
        #expect(list.components(separatedBy: "<th scope=\"row\">").count - 1 == 1)
        #expect(list.contains("<p class=\"list-total\">Issues 1–1 of 3</p>"))
        #expect(list.contains("<li><a href=\"list?page=2\" rel=\"next\">Next page</a></li>"))
        #expect(list.contains("<li><a href=\"list?page=3\">Last page</a></li>"))
        #expect(list.contains("<p>Page 1 of 3</p>"))
        // The pages of issues left off the list are still rendered (the overview's rankings link to them).
        #expect(
            Set(cut.keys.filter { $0.hasPrefix("demo/issues/") })
                == Set(all.keys.filter { $0.hasPrefix("demo/issues/") }))
    }

    @Test("the overview shows each project's privacy settings, escaped")
    func privacySettingsOnTheOverview() async throws {
        let (pages, _) = try await Fixtures.render()
        let demo = try #require(pages["demo/index.html"])
        #expect(demo.contains("<dt>Scrubbing</dt><dd>On: sensitive keys"))
        #expect(demo.contains("<dt>IP addresses</dt><dd>Dropped</dd>"))
        #expect(demo.contains("<dt>Safe fields</dt><dd>none</dd>"))
        let empty = try #require(pages["empty/index.html"])
        #expect(empty.contains("<dt>Scrubbing</dt><dd>Off: values are stored as sent</dd>"))
        #expect(empty.contains("<dt>Safe fields</dt><dd>order_&lt;id&gt;, plan</dd>"))
        #expect(empty.contains("<dt>IP addresses</dt><dd>Kept</dd>"))
        #expect(!empty.contains("order_<id>"))
        // Minidumps: deleted once processed by default, kept for download when the project says so.
        #expect(demo.contains("<dt>Minidumps</dt><dd>Deleted once processed"))
        #expect(empty.contains("<dt>Minidumps</dt><dd>Kept for the retention period, for download"))
    }
}
