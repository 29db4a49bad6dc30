import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #36's merge from an issue list, against the real `faultline` binary on 127.0.0.1: the rows' checkboxes and
/// the merge form (CSRF-guarded), the selected issues merged into the oldest, the browser sent back to the list; a
/// viewer gets neither form nor merge. And issue #35's error code beside a non-fatal's title, and its hourly chart.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct IssueListMergeEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    @Test func selectedRowsMergeIntoTheOldestAndAViewerCannot() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let invite = try await PeopleEndToEndTests.invite(folder, "vic@example.org", role: "member", project: "shop")
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let token = shop.upload
        // Given: three issues (cart, image, boot), one event each.
        for (n, site) in [(1, "parseCart"), (2, "loadImage"), (3, "boot")] {
            #expect(
                try await http.postReports(
                    server.baseURL, key: shop.ingest,
                    InsightsEndToEndTests.crash(n, site: site, version: "1.0", user: "u\(n)")
                ).status == 202)
        }
        let merge = IssueMergeEndToEndTests()
        #expect(try await eventually { try await merge.issues(server, token: token).count == 3 })
        let ids = try await merge.issues(server, token: token).map(\.id).sorted()

        // A member's list: every row has a checkbox of the merge form, which carries the session's token.
        let people = PeopleEndToEndTests()
        let cookie = try await people.accept(server, invite, name: "Vic")
        let list = try await people.csrf(server, page: "/shop/list?sort=events", cookie: cookie)
        #expect(
            list.html.contains(
                "<form id=\"merge-issues\" class=\"merge-issues\" method=\"post\" action=\"issues/merge\">"))
        for id in ids {
            #expect(
                list.html.contains("<input type=\"checkbox\" name=\"issues\" value=\"\(id)\" form=\"merge-issues\">"))
        }
        let csrf = try #require(list.token)
        let form = DashboardActionsEndToEndTests.form + [("Cookie", cookie)]
        let action = server.baseURL + "/shop/issues/merge"
        let back = "back=%2Fshop%2Flist%3Fsort%3Devents"

        // Refused, nothing changes: no token; one issue; a number that is not one.
        let bare = try await browser.send(
            .POST, action, headers: form, body: Array("issues=\(ids[0])&issues=\(ids[1])".utf8))
        #expect(bare.status == 403)
        let one = try await browser.send(
            .POST, action, headers: form, body: Array("csrf=\(csrf)&issues=\(ids[1])&\(back)".utf8))
        #expect(one.status == 400 && one.json["field"] as? String == "issues")
        let junk = try await browser.send(
            .POST, action, headers: form, body: Array("csrf=\(csrf)&issues=\(ids[1])&issues=all".utf8))
        #expect(junk.status == 400 && junk.json["field"] as? String == "issues")
        #expect(try await merge.issues(server, token: token).count == 3)

        // When the member selects the newest and the oldest, in any order: they merge into the oldest.
        let merged = try await browser.send(
            .POST, action, headers: form,
            body: Array("csrf=\(csrf)&issues=\(ids[2])&issues=\(ids[0])&\(back)".utf8))
        #expect(merged.status == 303)
        #expect(merged.headers["Location"].first == "/shop/list?sort=events")
        #expect(try await merge.events(server, ids[0], token: token) == 2)
        let gone = try await browser.send(
            .GET, server.baseURL + "/api/v1/issues/\(ids[2])", headers: [("Authorization", "Bearer \(token)")])
        #expect(gone.status == 302 && gone.json["merged_into"] as? Int == ids[0])
        let by = try PeopleEndToEndTests.sqlite(
            folder, "SELECT replaced_by FROM issues_replaced WHERE issue_id = \(ids[2])")
        #expect(by.contains("Vic"), "\(by)")
        let after = try await people.csrf(server, page: "/shop/list?sort=events", cookie: cookie)
        #expect(!after.html.contains("value=\"\(ids[2])\" form=\"merge-issues\""))

        // A viewer (the same person, demoted) with the token of an open page: 403, and no form on the list.
        let demoted = try await ServerProcess.run(
            ["users", "role", "vic@example.org", "--role", "viewer", "--project", "shop", "--data", folder])
        #expect(demoted.status == 0, "\(demoted)")
        let refused = try await browser.send(
            .POST, action, headers: form, body: Array("csrf=\(csrf)&issues=\(ids[0])&issues=\(ids[1])".utf8))
        #expect(refused.status == 403)
        #expect(try await merge.issues(server, token: token).count == 2)
        let viewerList = try await people.csrf(server, page: "/shop/list", cookie: cookie)
        #expect(viewerList.html.contains("parseCart"))
        #expect(!viewerList.html.contains("merge-issues") && !viewerList.html.contains("type=\"checkbox\""))
    }

    /// Issue #35: a non-fatal's code is in the list, the issue's header and the API, not only in the error block; its
    /// device and OS breakdowns count users, exact (a user seen twice is one, a retried report counts nothing).
    @Test func aNonFatalsCodeIsShownBesideItsTitle() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let sent = Date()
        func report(_ n: Int, user: String, model: String) -> String {
            """
            {"event_id":"\(Payloads.eventID(n))","kind":"nonfatal","timestamp":"\(ISO8601DateFormatter().string(from: sent))",
             "user_id":"\(user)","app":{"version":"2.4.0","build":"240"},
             "device":{"model":"\(model)","os":"iOS","os_version":"18.1"},
             "error":{"type":"NSURLErrorDomain","code":-1001,"message":"The request timed out."},
             "threads":[{"name":"main","crashed":true,"frames":[{"function":"Feed.load","file":"Feed.swift","line":9}]}]}
            """
        }
        // Given: u1 twice on an iPhone 15 Pro, u2 on an iPhone 14 Pro; then the first report sent again (a retry).
        let reports = [report(1, user: "u1", model: "iPhone16,1"), report(2, user: "u1", model: "iPhone16,1")]
        #expect(
            try await http.postReports(
                server.baseURL, key: shop.ingest, "[" + reports.joined(separator: ",") + "]"
            ).status == 202)
        #expect(
            try await http.postReports(server.baseURL, key: shop.ingest, report(3, user: "u2", model: "iPhone15,2"))
                .status == 202)
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, reports[0]).status == 202)
        let auth = [("Authorization", "Bearer \(shop.upload)")]
        #expect(
            try await eventually {
                let list = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: auth)
                let issue = (list.json["issues"] as? [[String: Any]])?.first
                return issue?["error_code"] as? String == "-1001" && issue?["events"] as? Int == 3
            })
        let id = try await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)
        // The API's breakdowns: events and distinct users per device model and OS; the user breakdown names users.
        let detail = try await http.send(.GET, server.baseURL + "/api/v1/issues/\(id)", headers: auth)
        let breakdowns = try #require(detail.json["breakdowns"] as? [String: [[String: Any]]])
        func rows(_ key: String) -> [String] {
            (breakdowns[key] ?? []).map { "\($0["value"] ?? "") \($0["events"] ?? "") \($0["users"] ?? "-")" }
        }
        #expect(rows("device") == ["iPhone16,1 2 1", "iPhone15,2 1 1"])
        #expect(rows("os") == ["iOS 18.1 3 2"])
        #expect(rows("user").count == 2 && rows("user").allSatisfy { $0.hasSuffix(" -") }, "\(rows("user"))")
        let session = try await DashboardActionsEndToEndTests().login(server, admin: admin, next: "%2F")
        let cookie = [("Cookie", session.cookie)]
        let list = String(
            decoding: try await browser.send(.GET, server.baseURL + "/shop/list", headers: cookie).body, as: UTF8.self)
        #expect(list.contains("The request timed out.</a> <span class=\"error-code\">code <code>-1001</code></span>"))
        let path = "/shop/issues/\(id).html"
        // The page's device and OS tables: events with their share, users with their share of the issue's 2 users.
        let iPhone = "<tr><th scope=\"row\">iPhone 15 Pro (iPhone16,1)</th><td>2 (66.7 %)</td><td>1 (50 %)</td></tr>"
        var page = ""
        #expect(
            try await eventually {
                page = String(
                    decoding: try await browser.send(.GET, server.baseURL + path, headers: cookie).body, as: UTF8.self)
                return page.contains(iPhone)
            }, "\(page)")
        #expect(page.contains("<tr><th scope=\"row\">iOS 18.1</th><td>3 (100 %)</td><td>2 (100 %)</td></tr>"))
        #expect(page.contains("<th scope=\"col\">Events (share)</th>\n<th scope=\"col\">Users (share)</th>"))
        #expect(page.contains("non-fatal error · code <code class=\"error-code\">-1001</code> ·"))
        // The hour-by-hour chart comes first, its table naming the event's hour (UTC).
        let hour = DateFormatter()
        hour.dateFormat = "yyyy-MM-dd HH:00"
        hour.timeZone = TimeZone(identifier: "UTC")
        hour.locale = Locale(identifier: "en_US_POSIX")
        let label = hour.string(from: sent)
        #expect(page.contains("<h3>Events per hour, last 48 hours</h3>"))
        #expect(page.contains("<time datetime=\"\(label)\">\(label)</time></th><td>3</td><td>2</td></tr>"))
        let hourly = try #require(page.range(of: "Events per hour, last 48 hours</h3>"))
        let daily = try #require(page.range(of: "Events per day, last 30 days</h3>"))
        #expect(hourly.lowerBound < daily.lowerBound)
    }
}
