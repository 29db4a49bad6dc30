import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #13 (dashboard refresh in a second), against the real `faultline` binary on 127.0.0.1: an issue page asked
/// for after new events touched its issue is rendered on that request, before any render cycle ran (the cycle's
/// debounce here is a day, so only the startup render and requests render pages); a page whose issue did not change
/// is not rendered again; asking for issues that do not exist writes nothing; a dashboard action still lands on
/// the re-rendered page.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct IssuePageOnRequestEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    /// No render cycle after the one at start within the test's time.
    static let noCycles = ["FAULTLINE_RENDER_DEBOUNCE_MS": "86400000"]

    func issue(_ server: ServerProcess, token: String) async throws -> (id: Int, events: Int)? {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(token)")])
        guard let first = (answer.json["issues"] as? [[String: Any]])?.first, let id = first["id"] as? Int,
            let events = first["events"] as? Int
        else { return nil }
        return (id, events)
    }

    func page(_ server: ServerProcess, _ path: String, headers: [(String, String)]) async throws -> (
        status: Int, html: String
    ) {
        let answer = try await browser.send(.GET, server.baseURL + path, headers: headers)
        return (answer.status, String(decoding: answer.body, as: UTF8.self))
    }

    @Test func aTouchedIssuePageIsCurrentOnItsFirstRequestBeforeAnyRenderCycle() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: Self.noCycles)
        defer { server.cleanUp() }
        // The startup render (of an empty folder) is done before any data arrives.
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site/shop/issues.html") })
        let listAtStart = try String(contentsOfFile: folder + "/site/shop/issues.html", encoding: .utf8)

        let crash = { (n: Int) in InsightsEndToEndTests.crash(n, site: "parseCart", version: "1.0", user: "u\(n)") }
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, crash(1)).status == 202)
        #expect(
            try await http.postReports(
                server.baseURL, key: other.ingest,
                InsightsEndToEndTests.crash(50, site: "boot", version: "1.0", user: "x")
            ).status == 202)
        #expect(try await eventually { try await issue(server, token: shop.upload)?.events == 1 })
        #expect(try await eventually { try await issue(server, token: other.upload) != nil })
        let id = try #require(try await issue(server, token: shop.upload)).id
        let otherID = try #require(try await issue(server, token: other.upload)).id
        let path = "/shop/issues/\(id).html"
        let file = folder + "/site" + path
        #expect(!FileManager.default.fileExists(atPath: file), "no render cycle ran since the data arrived")

        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: SecurityEndToEndTests.form,
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = [
            ("Cookie", try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init)))
        ]

        // The first request renders the page: it shows the one event, with the session's CSRF token filled in.
        let first = try await page(server, path, headers: cookie)
        #expect(first.status == 200)
        #expect(first.html.contains("<dt>Events</dt><dd>1 "), "\(first.html.prefix(2000))")
        #expect(first.html.contains("parseCart"))
        let token = try #require(DashboardActionsEndToEndTests.csrf(first.html))
        #expect(token.count == 64)
        #expect(FileManager.default.fileExists(atPath: file))
        let rendered = try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date

        // Asked again with nothing changed: the same file is served, not rendered again (the file is the one the
        // first request wrote: replaced files get a new inode).
        let inode = try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int
        let second = try await page(server, path, headers: cookie)
        #expect(second.status == 200 && second.html == first.html)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.systemFileNumber] as? Int == inode)
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.modificationDate] as? Date == rendered)

        // Two more events touch the issue: the next request shows them, with no render cycle in between (the list
        // rendered at start still does not show the issue).
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, crash(2)).status == 202)
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, crash(3)).status == 202)
        #expect(try await eventually { try await issue(server, token: shop.upload)?.events == 3 })
        let touched = try await page(server, path, headers: cookie)
        #expect(touched.status == 200)
        #expect(
            touched.html.contains("<dt>Events</dt><dd>3 "), "the page shows the new events on its first request")
        #expect(touched.html.contains("<td>u3</td>"), "the newest sample event's user")
        #expect(try String(contentsOfFile: folder + "/site/shop/issues.html", encoding: .utf8) == listAtStart)
        // A reader without a session (basic auth) gets the same current page from the site folder.
        let basic = [("Authorization", "Basic " + Data("me:\(admin)".utf8).base64EncodedString())]
        let viaBasic = try await page(server, path, headers: basic)
        #expect(viaBasic.status == 200 && viaBasic.html.contains("<dt>Events</dt><dd>3 "))
        #expect(!viaBasic.html.contains(token), "no session's token in a stored page")
        #expect(!viaBasic.html.contains("<form class=\"issue-actions\""), "no forms without a session to post them")

        // An action still lands on the re-rendered page.
        let closed = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(id)/status", headers: cookie + SecurityEndToEndTests.form,
            body: Array("csrf=\(token)&status=closed".utf8))
        #expect(closed.status == 303)
        #expect(closed.headers["Location"].first == path)
        let afterAction = try await page(server, path, headers: cookie)
        #expect(afterAction.html.contains(">closed</span>") && afterAction.html.contains(">Reopen</button>"))
        #expect(afterAction.html.contains("<dt>Events</dt><dd>3 "))

        // Numbers that are no issue of this project write no page: unknown, another project's, absurd.
        for number in ["999999", "\(otherID)", "9223372036854775807", "99999999999999999999", "0"] {
            let missing = try await page(server, "/shop/issues/\(number).html", headers: cookie)
            #expect(missing.status == 404, "issue \(number)")
            #expect(!FileManager.default.fileExists(atPath: folder + "/site/shop/issues/\(number).html"))
        }
        // …and the other project's issue is served under its own project, rendered on request too.
        let theirs = try await page(server, "/other/issues/\(otherID).html", headers: cookie)
        #expect(theirs.status == 200 && theirs.html.contains("boot") && !theirs.html.contains("parseCart"))
        // Without credentials, the guard answers before any render.
        let anonymous = try await page(server, "/other/issues/\(otherID + 1000).html", headers: [])
        #expect(anonymous.status == 401)
    }
}
