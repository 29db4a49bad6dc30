import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #12's filtered, sorted and paged issue lists, against the real `faultline` binary on 127.0.0.1: the live
/// lists at `/{slug}/list` show exactly the expected issues for a status, kind, release and order, page by page; the
/// static `issues.html` is their first page; a row's close / mute button posts with the session's token and comes
/// back to the list it was on; bad query values are refused; one project never sees another's issues.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct IssueListsEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    /// The issue ids a list page links to, in order.
    static func issueIDs(_ html: String) -> [Int] {
        html.matches(of: #/<a href="issues/(\d+)\.html">/#).compactMap { Int($0.output.1) }
    }

    static func nonFatal(_ n: Int, version: String, user: String) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"nonfatal","timestamp":"\(InsightsEndToEndTests.now)","user_id":"\(user)",
         "app":{"version":"\(version)","build":"1"},"error":{"type":"ValidationError","message":"bad input"},
         "threads":[{"name":"main","crashed":true,"frames":[{"function":"validate","file":"src/validate.c","line":7}]}]}
        """
    }

    @Test func listsFilterSortAndPageAndARowActionComesBackToItsList() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // 104 new issues in a minute are more than the default new-issue cap (100 an hour) lets one project make.
        let raised = try await http.send(
            .PUT, server.baseURL + "/api/v1/alert-settings?project=shop",
            headers: [("Authorization", "Bearer \(admin)"), ("Content-Type", "application/json")],
            body: Array(#"{"new_issue_cap": 1000}"#.utf8))
        #expect(raised.status == 200, "\(String(decoding: raised.body, as: UTF8.self))")

        // Given 103 crash sites (one report each; even sites in release 1.0, odd ones in 2.0), site5 hit by 4 users,
        // site7 by 3, site9 six times by one user; one non-fatal issue; and another project's crash.
        var reports: [String] = []
        for k in 0..<103 {
            reports.append(
                InsightsEndToEndTests.crash(k + 1, site: "site\(k)", version: k % 2 == 0 ? "1.0" : "2.0", user: "u"))
        }
        var n = 1000
        for (k, users) in [(5, ["v1", "v2", "v3"]), (7, ["v1", "v2"]), (9, ["u", "u", "u", "u", "u"])] {
            for user in users {
                n += 1
                reports.append(InsightsEndToEndTests.crash(n, site: "site\(k)", version: "2.0", user: user))
            }
        }
        reports.append(Self.nonFatal(2000, version: "1.0", user: "u"))
        #expect(
            try await http.postReports(server.baseURL, key: shop.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)
        #expect(
            try await http.postReports(
                server.baseURL, key: other.ingest,
                InsightsEndToEndTests.crash(3000, site: "theirs", version: "2.0", user: "t")
            ).status == 202)

        // Each site's issue id, from the API once every report is grouped.
        var site: [String: Int] = [:]
        var nonFatalID = 0
        #expect(
            try await eventually {
                let answer = try await http.send(
                    .GET, server.baseURL + "/api/v1/issues?limit=1000",
                    headers: [("Authorization", "Bearer \(shop.upload)")])
                let issues = answer.json["issues"] as? [[String: Any]] ?? []
                guard issues.count == 104, issues.reduce(0, { $0 + ($1["events"] as? Int ?? 0) }) == 114 else {
                    return false
                }
                for issue in issues {
                    let culprit = issue["culprit"] as? String ?? ""
                    if let match = culprit.firstMatch(of: #/(site\d+)\.c/#) {
                        site[String(match.output.1)] = issue["id"] as? Int
                    }
                    if issue["kind"] as? String == "nonfatal" { nonFatalID = issue["id"] as? Int ?? 0 }
                }
                return site.count == 103 && nonFatalID > 0
            }, "the 104 issues are grouped")
        let theirs =
            try #require(
                try await http.send(
                    .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(other.upload)")]
                ).json["issues"] as? [[String: Any]]
            ).first?["id"] as? Int
        let theirID = try #require(theirs)
        let crashIDs = Set(site.values)
        func id(_ k: Int) -> Int { site["site\(k)"] ?? -1 }

        // The static list is the first page of every issue, with the total and a link to the rest.
        #expect(
            try await eventually {
                ((try? String(contentsOfFile: folder + "/site/shop/issues.html", encoding: .utf8)) ?? "").contains(
                    "Issues 1–100 of 104")
            })
        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: DashboardActionsEndToEndTests.form,
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = [
            ("Cookie", try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init)))
        ]
        func page(_ query: String) async throws -> (status: Int, html: String, answer: HTTP.Answer) {
            let answer = try await browser.send(
                .GET, server.baseURL + "/shop/list" + (query.isEmpty ? "" : "?" + query), headers: cookie)
            return (answer.status, String(decoding: answer.body, as: UTF8.self), answer)
        }
        let staticList = try await browser.send(.GET, server.baseURL + "/shop/issues.html", headers: cookie)
        let staticHTML = String(decoding: staticList.body, as: UTF8.self)
        #expect(staticList.headers["Cache-Control"].first == "no-store")
        #expect(Self.issueIDs(staticHTML).count == 100)
        #expect(staticHTML.contains("<a href=\"list?page=2\" rel=\"next\">Next page</a>"))
        let token = try #require(DashboardActionsEndToEndTests.csrf(staticHTML))
        #expect(
            token.count == 64 && !staticHTML.contains("__FAULTLINE_CSRF__"), "every row form has the session's token")

        // Most users first: site5 (4), site7 (3), then site9 (1 user, 6 events); all 103 crashes over two pages.
        let byUsers = try await page("kind=crash&sort=users")
        #expect(byUsers.status == 200)
        #expect(byUsers.answer.headers["Cache-Control"].first == "no-store")
        #expect(byUsers.html.contains("<caption>Crashes, most users affected first</caption>"))
        #expect(byUsers.html.contains("Issues 1–100 of 103"))
        let first = Self.issueIDs(byUsers.html)
        #expect(Array(first.prefix(3)) == [id(5), id(7), id(9)])
        let second = try await page("kind=crash&sort=users&page=2")
        let rest = Self.issueIDs(second.html)
        #expect(second.html.contains("Issues 101–103 of 103"))
        #expect(first.count == 100 && rest.count == 3)
        #expect(
            Set(first + rest) == crashIDs && Set(first).isDisjoint(with: rest), "each crash exactly once over the pages"
        )
        #expect(Self.issueIDs(try await page("sort=events").html).first == id(9))
        #expect(Self.issueIDs(try await page("kind=non-fatal").html) == [nonFatalID])

        // One release: exactly the odd sites (site5/7/9's extra events are in it too).
        let release = try await page("release=2.0+%281%29&sort=events")
        #expect(release.status == 200)
        #expect(Set(Self.issueIDs(release.html)) == Set((0..<103).filter { $0 % 2 == 1 }.map(id)))
        #expect(Self.issueIDs(release.html).first == id(9))
        #expect(Self.issueIDs(try await page("release=9.9").html).isEmpty)

        // Close site7 from the users list: 303 back to that very list, which shows the change at once.
        let action = server.baseURL + "/shop/issues/\(id(7))/status"
        let back = "/shop/list?kind=crash&sort=users"
        let closed = try await browser.send(
            .POST, action, headers: cookie + DashboardActionsEndToEndTests.form,
            body: Array(
                "csrf=\(token)&status=closed&back=\(back.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
                    .utf8))
        #expect(closed.status == 303)
        #expect(closed.headers["Location"].first == back)
        let after = try await page("kind=crash&sort=users")
        #expect(Array(Self.issueIDs(after.html).prefix(2)) == [id(5), id(7)])
        #expect(after.html.contains("value=\"open\" aria-label=\"Reopen issue \(id(7))\""))
        #expect(Self.issueIDs(try await page("status=closed").html) == [id(7)])
        #expect(try await page("status=open&kind=crash").html.contains("Issues 1–100 of 102"))
        // Mute site5 from the static issues.html's form (back to the live default list), then it is the muted list.
        let muted = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(id(5))/status",
            headers: cookie + DashboardActionsEndToEndTests.form,
            body: Array("csrf=\(token)&status=muted&back=%2Fshop%2Flist".utf8))
        #expect(muted.headers["Location"].first == "/shop/list")
        #expect(Self.issueIDs(try await page("status=muted").html) == [id(5)])
        // A `back` outside this project's lists is ignored: the answer goes to the issue's page.
        for bad in [
            "%2Fother%2Flist", "https%3A%2F%2Fevil.example%2F", "%2F%2Fevil.example", "%2Fshop%2F..%2Fother%2Flist",
        ] {
            let answer = try await browser.send(
                .POST, action, headers: cookie + DashboardActionsEndToEndTests.form,
                body: Array("csrf=\(token)&status=open&back=\(bad)".utf8))
            #expect(answer.status == 303)
            #expect(answer.headers["Location"].first == "/shop/issues/\(id(7)).html", "back=\(bad)")
        }

        // Bad values: 400 naming the parameter; a page past the end is an empty page that says so.
        for (query, field) in [
            ("status=fixed", "status"), ("kind=crashes", "kind"), ("sort=newest", "sort"), ("page=0", "page"),
            ("page=-1", "page"), ("page=99999999999999999999", "page"),
            ("release=" + String(repeating: "x", count: 5000), "release"),
        ] {
            let bad = try await page(query)
            #expect(bad.status == 400, "\(query)")
            #expect(bad.answer.json["field"] as? String == field, "\(query)")
        }
        let past = try await page("page=7")
        #expect(past.status == 200)
        #expect(past.html.contains("Page 7 is past the end of this list (2 pages)."))
        #expect(Self.issueIDs(past.html).isEmpty)

        // Isolation: no list of shop shows the other project's issue, and other's lists show only it.
        for query in ["", "page=2", "release=2.0+%281%29", "sort=users"] {
            #expect(!Self.issueIDs(try await page(query).html).contains(theirID))
        }
        let otherList = try await browser.send(.GET, server.baseURL + "/other/list", headers: cookie)
        #expect(Self.issueIDs(String(decoding: otherList.body, as: UTF8.self)) == [theirID])
        #expect(try await browser.send(.GET, server.baseURL + "/nope/list", headers: cookie).status == 404)
        // Behind the dashboard guard, like the site's files.
        #expect(try await browser.send(.GET, server.baseURL + "/shop/list").status == 401)
        let toLogin = try await browser.send(
            .GET, server.baseURL + "/shop/list?status=open", headers: [("Accept", "text/html")])
        #expect(toLogin.headers["Location"].first == "/login?next=/shop/list%3Fstatus%3Dopen")
    }
}
