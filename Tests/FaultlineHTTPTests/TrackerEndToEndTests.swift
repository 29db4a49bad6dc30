import AsyncHTTPClient
import Foundation
import Testing

/// Issue #36's tracker links, against the real `faultline` binary on 127.0.0.1: a project's tracker set with the CLI
/// gives the issue page a prefilled "Open in GitHub" link that links back to the page; the tracker issue's URL is set
/// and read through the API and the page's form (CSRF-guarded), and a bad URL is a 400 naming the field.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct TrackerEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    let actions = DashboardActionsEndToEndTests()

    @Test func anIssuePageOpensAPrefilledTrackerIssueAndRecordsIt() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        // Given a project whose tracker is a GitHub repository (a bad URL is refused by the CLI)
        let refused = try await ServerProcess.run([
            "projects", "configure", "shop", "--data", folder, "--tracker", "github", "--tracker-url", "javascript:x",
        ])
        #expect(refused.status != 0)
        #expect(refused.err.contains("--tracker-url must start with http:// or https://"))
        let set = try await ServerProcess.run([
            "projects", "configure", "shop", "--data", folder, "--tracker", "github", "--tracker-url",
            "https://github.com/acme/shop/", "--json",
        ])
        #expect(set.status == 0, "\(set)")
        #expect(set.out.contains("\"tracker_url\":\"https:\\/\\/github.com\\/acme\\/shop\""))
        let server = try await ServerProcess(
            folder: folder, arguments: ["--public-url", "https://faultline.acme.dev"],
            environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let crash = InsightsEndToEndTests.crash(1, site: "parseCart", version: "1.0", user: "u1")
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, crash).status == 202)
        #expect(try await eventually { (try? await actions.issueID(server, token: shop.upload)) != nil })
        let id = try await actions.issueID(server, token: shop.upload)
        let pagePath = "/shop/issues/\(id).html"
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site" + pagePath) })

        // Then the page links to a new GitHub issue, prefilled, with a link back to the page
        let session = try await actions.login(server, admin: admin, next: "%2F")
        let cookie = [("Cookie", session.cookie)]
        let page = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(page.contains("href=\"https://github.com/acme/shop/issues/new?title="))
        #expect(page.contains("&amp;body="))
        #expect(page.contains("Faultline%20issue%3A%20https%3A%2F%2Ffaultline.acme.dev%2Fshop%2Fissues%2F\(id).html"))
        #expect(page.contains(">Open in GitHub</a>"))
        #expect(page.contains("No tracker issue recorded."))

        // The API refuses a bad URL with a 400 naming the field, and changes nothing
        let auth = [("Authorization", "Bearer \(shop.upload)"), ("Content-Type", "application/json")]
        let issueURL = server.baseURL + "/api/v1/issues/\(id)"
        for bad in ["ftp://x/y", "https://host/a b", "https://" + String(repeating: "a", count: 2100)] {
            let answer = try await http.send(
                .PATCH, issueURL, headers: auth,
                body: Array(try JSONSerialization.data(withJSONObject: ["tracker_url": bad])))
            #expect(answer.status == 400, "\(bad)")
            #expect(answer.json["field"] as? String == "tracker_url")
        }
        let both = try await http.send(
            .PATCH, issueURL, headers: auth, body: Array(#"{"status":"closed","tracker_url":"nope"}"#.utf8))
        #expect(both.status == 400)
        let unchanged = try await http.send(.GET, issueURL, headers: auth)
        #expect((unchanged.json["issue"] as? [String: Any])?["status"] as? String == "open")
        #expect((unchanged.json["issue"] as? [String: Any])?["tracker_url"] == nil)

        // It records a good one, and reads it back
        let good = try await http.send(
            .PATCH, issueURL, headers: auth,
            body: Array(#"{"tracker_url":"https://github.com/acme/shop/issues/12"}"#.utf8))
        #expect(good.status == 200)
        #expect(good.json["tracker_url"] as? String == "https://github.com/acme/shop/issues/12")
        let read = try await http.send(.GET, issueURL, headers: auth)
        #expect(
            (read.json["issue"] as? [String: Any])?["tracker_url"] as? String
                == "https://github.com/acme/shop/issues/12")

        // The page's form changes it with the session's token, and refuses without it
        let fresh = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(fresh.contains("Tracked at <a href=\"https://github.com/acme/shop/issues/12\""))
        let token = try #require(DashboardActionsEndToEndTests.csrf(fresh))
        let action = server.baseURL + "/shop/issues/\(id)/tracker"
        let form = cookie + DashboardActionsEndToEndTests.form
        let tokenless = try await browser.send(
            .POST, action, headers: form, body: Array("tracker_url=https%3A%2F%2Fx.dev%2F1".utf8))
        #expect(tokenless.status == 403)
        let badForm = try await browser.send(
            .POST, action, headers: form, body: Array("csrf=\(token)&tracker_url=javascript%3Aalert(1)".utf8))
        #expect(badForm.status == 400)
        #expect(badForm.json["field"] as? String == "tracker_url")
        let done = try await browser.send(
            .POST, action, headers: form,
            body: Array("csrf=\(token)&tracker_url=https%3A%2F%2Fgithub.com%2Facme%2Fshop%2Fissues%2F13".utf8))
        #expect(done.status == 303)
        #expect(done.headers["Location"].first == pagePath)
        let after = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(after.contains("Tracked at <a href=\"https://github.com/acme/shop/issues/13\""))
        // An empty field clears it
        let cleared = try await browser.send(
            .POST, action, headers: form, body: Array("csrf=\(token)&tracker_url=".utf8))
        #expect(cleared.status == 303)
        let none = try await http.send(.GET, issueURL, headers: auth)
        #expect((none.json["issue"] as? [String: Any])?["tracker_url"] == nil)
    }
}
