import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #36's merge and unmerge against the real `faultline` binary on 127.0.0.1: through the API (an upload token,
/// never across projects), a merged issue's number redirecting to the survivor, its future events landing there, and
/// the issue page's merge and unmerge forms (CSRF-guarded), the merged issue's page sending the browser on.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct IssueMergeEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let json = [("Content-Type", "application/json")]

    /// The project's issues by their title's site (`crash in` … as the client's frames name it), with their events.
    func issues(_ server: ServerProcess, token: String) async throws -> [(id: Int, events: Int, fingerprint: String)] {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(token)")])
        return (answer.json["issues"] as? [[String: Any]] ?? []).compactMap {
            guard let id = $0["id"] as? Int, let events = $0["events"] as? Int,
                let fingerprint = $0["fingerprint"] as? String
            else { return nil }
            return (id, events, fingerprint)
        }
    }

    func events(_ server: ServerProcess, _ id: Int, token: String) async throws -> Int? {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/issues/\(id)", headers: [("Authorization", "Bearer \(token)")])
        return (answer.json["issue"] as? [String: Any])?["events"] as? Int
    }

    @Test func issuesMergeAndUnmergeThroughTheAPIAndTheIssuePage() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let auth = [("Authorization", "Bearer \(shop.upload)")]
        let crash = InsightsEndToEndTests.crash
        // Given: three issues of the shop (cart ×2, image, boot), one of the other project.
        for (n, site, user) in [
            (1, "parseCart", "u1"), (2, "parseCart", "u2"), (3, "loadImage", "u1"), (4, "boot", "u3"),
        ] {
            #expect(
                try await http.postReports(server.baseURL, key: shop.ingest, crash(n, site, "1.0", user, nil, "boom"))
                    .status == 202)
        }
        #expect(
            try await http.postReports(server.baseURL, key: other.ingest, crash(5, "boot", "1.0", "u9", nil, "boom"))
                .status == 202)
        #expect(
            try await eventually {
                let mine = try await issues(server, token: shop.upload)
                let theirs = try await issues(server, token: other.upload)
                return mine.count == 3 && mine.map(\.events).reduce(0, +) == 4 && theirs.count == 1
            })
        let listed = try await issues(server, token: shop.upload)
        let cart = try #require(listed.first { $0.events == 2 })
        let rest = listed.filter { $0.id != cart.id }.sorted { $0.id < $1.id }
        let (image, boot) = (rest[0], rest[1])
        let otherIssue = try #require(try await issues(server, token: other.upload).first)

        // Another project's issue: 404 for the shop's token, refused by name for the admin; nothing changes.
        let across = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/merge", headers: auth + Self.json,
            body: Array("{\"issues\": [\(otherIssue.id)]}".utf8))
        #expect(across.status == 404)
        let acrossAdmin = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/merge",
            headers: [("Authorization", "Bearer \(admin)")] + Self.json,
            body: Array("{\"issues\": [\(otherIssue.id)]}".utf8))
        #expect(acrossAdmin.status == 400)
        #expect((acrossAdmin.json["message"] as? String)?.contains("another project") == true)
        let malformed = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/merge", headers: auth + Self.json,
            body: Array("{\"issues\": \"all\"}".utf8))
        #expect(malformed.status == 400 && malformed.json["field"] as? String == "issues")
        #expect(try await issues(server, token: other.upload).count == 1)

        // When the image issue merges into the cart issue through the API.
        let merged = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/merge", headers: auth + Self.json,
            body: Array("{\"issues\": [\(image.id)]}".utf8))
        #expect(merged.status == 200)
        #expect(merged.json["merged"] as? [Int] == [image.id])
        #expect(try await events(server, cart.id, token: shop.upload) == 3)
        // The merged number redirects to the survivor: 302 for a read, 307 for a change.
        let gone = try await browser.send(.GET, server.baseURL + "/api/v1/issues/\(image.id)", headers: auth)
        #expect(gone.status == 302)
        #expect(gone.headers["Location"].first == "/api/v1/issues/\(cart.id)")
        #expect(gone.json["merged_into"] as? Int == cart.id)
        let patched = try await browser.send(
            .PATCH, server.baseURL + "/api/v1/issues/\(image.id)", headers: auth + Self.json,
            body: Array("{\"status\": \"closed\"}".utf8))
        #expect(patched.status == 307)
        let listedMerged = try await http.send(
            .GET, server.baseURL + "/api/v1/issues/\(cart.id)/merged", headers: auth)
        let fingerprints = (listedMerged.json["fingerprints"] as? [[String: Any]] ?? []).compactMap {
            $0["fingerprint"] as? String
        }
        #expect(fingerprints == [image.fingerprint])
        // A new event of the merged fingerprint lands in the survivor.
        #expect(
            try await http.postReports(
                server.baseURL, key: shop.ingest, crash(6, "loadImage", "1.0", "u4", nil, "boom")
            )
            .status == 202)
        #expect(try await eventually { try await events(server, cart.id, token: shop.upload) == 4 })
        #expect(try await issues(server, token: shop.upload).count == 2)

        // The issue page's merge form: refused without the session's token, then boot merges into cart.
        let session = try await DashboardActionsEndToEndTests().login(server, admin: admin, next: "%2F")
        let cookie = [("Cookie", session.cookie)]
        let pagePath = "/shop/issues/\(cart.id).html"
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site" + pagePath) })
        let page = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(page.contains("<form class=\"issue-merge\" method=\"post\" action=\"\(cart.id)/merge\">"))
        #expect(page.contains("<code>\(image.fingerprint)</code>"))
        let token = try #require(DashboardActionsEndToEndTests.csrf(page))
        let form = cookie + DashboardActionsEndToEndTests.form
        let mergeAction = server.baseURL + "/shop/issues/\(cart.id)/merge"
        let bare = try await browser.send(.POST, mergeAction, headers: form, body: Array("issues=\(boot.id)".utf8))
        #expect(bare.status == 403)
        let crossProject = try await browser.send(
            .POST, mergeAction, headers: form, body: Array("csrf=\(token)&issues=\(otherIssue.id)".utf8))
        #expect(crossProject.status == 404)
        let formMerge = try await browser.send(
            .POST, mergeAction, headers: form, body: Array("csrf=\(token)&issues=%23\(boot.id)".utf8))
        #expect(formMerge.status == 303)
        #expect(formMerge.headers["Location"].first == pagePath)
        // Recorded as the admin token's session's change, as a status change from the dashboard is.
        let replacedBy = try PeopleEndToEndTests.sqlite(
            folder, "SELECT replaced_by FROM issues_replaced WHERE issue_id = \(boot.id)")
        #expect(replacedBy.hasPrefix("the admin token (dashboard session "), "\(replacedBy)")
        #expect(try await events(server, cart.id, token: shop.upload) == 5)
        // The merged issue's page links to the survivor and sends the browser there.
        let bootPage = String(
            decoding: try await browser.send(.GET, server.baseURL + "/shop/issues/\(boot.id).html", headers: cookie)
                .body, as: UTF8.self)
        #expect(bootPage.contains("merged into <a href=\"\(cart.id).html\">issue \(cart.id)</a>"))
        #expect(bootPage.contains("<meta http-equiv=\"refresh\" content=\"0; url=\(cart.id).html\">"))

        // The page's unmerge form splits boot back out: its event moves to an issue of its own.
        let refreshed = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(refreshed.contains("<code>\(boot.fingerprint)</code>"))
        let unmerge = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(cart.id)/unmerge", headers: form,
            body: Array("csrf=\(token)&fingerprint=\(boot.fingerprint.replacingOccurrences(of: ":", with: "%3A"))".utf8)
        )
        #expect(unmerge.status == 303)
        #expect(
            try await eventually {
                let now = try await issues(server, token: shop.upload)
                return now.count == 2 && now.first { $0.fingerprint == boot.fingerprint }?.events == 1
            })
        #expect(try await events(server, cart.id, token: shop.upload) == 4)

        // And the API's unmerge splits the image issue back out: 202, its two events move.
        let apiUnmerge = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/unmerge", headers: auth + Self.json,
            body: Array("{\"fingerprint\": \"\(image.fingerprint)\"}".utf8))
        #expect(apiUnmerge.status == 202)
        #expect(apiUnmerge.json["requeued"] as? Int == 4)
        #expect(
            try await eventually {
                try await issues(server, token: shop.upload).first { $0.fingerprint == image.fingerprint }?.events == 2
            })
        #expect(try await events(server, cart.id, token: shop.upload) == 2)
        let again = try await http.send(
            .POST, server.baseURL + "/api/v1/issues/\(cart.id)/unmerge", headers: auth + Self.json,
            body: Array("{\"fingerprint\": \"\(image.fingerprint)\"}".utf8))
        #expect(again.status == 404)
        #expect(again.json["field"] as? String == "fingerprint", "\(again.json)")
        // No new-issue or regression alert came of any of it: only the three first issues were announced.
        let alerts = try await http.send(.GET, server.baseURL + "/api/v1/alerts", headers: auth)
        let kinds = (alerts.json["alerts"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String }
        #expect(kinds.filter { $0 == "new_issue" }.count == 3)
        #expect(!kinds.contains("regression"))
    }
}
