import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #12's front door and issue actions, against the real `faultline` binary on 127.0.0.1: `/` is the rendered
/// projects page, login returns to the page asked for, and an issue is closed, muted and reopened through its
/// page's form (CSRF token bound to the login session; refused without it; never across projects).
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DashboardActionsEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let form = [("Content-Type", "application/x-www-form-urlencoded")]

    func issueID(_ server: ServerProcess, token: String) async throws -> Int {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(token)")])
        let issues = answer.json["issues"] as? [[String: Any]] ?? []
        guard let id = issues.first?["id"] as? Int else { throw TestFailure("no issue yet") }
        return id
    }

    func status(_ server: ServerProcess, _ id: Int, token: String) async throws -> String? {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/issues/\(id)", headers: [("Authorization", "Bearer \(token)")])
        return (answer.json["issue"] as? [String: Any])?["status"] as? String
    }

    func login(_ server: ServerProcess, admin: String, next: String) async throws -> (cookie: String, location: String?)
    {
        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form, body: Array("token=\(admin)&next=\(next)".utf8))
        #expect(login.status == 303)
        let cookie = try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        return (cookie, login.headers["Location"].first)
    }

    /// The value of the page's hidden CSRF input.
    static func csrf(_ page: String) -> String? {
        guard let start = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[start.upperBound...].prefix { $0 != "\"" })
    }

    @Test func frontDoorServesTheProjectsPageAndLoginReturnsToThePageAskedFor() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site/index.html") })

        // A browser without a session asking for a filtered page goes to the login form and keeps its query…
        let asked = try await browser.send(
            .GET, server.baseURL + "/shop/issues.html?status=open", headers: [("Accept", "text/html")])
        #expect(asked.status == 303)
        #expect(asked.headers["Location"].first == "/login?next=/shop/issues.html%3Fstatus%3Dopen")
        let form = try await browser.send(.GET, server.baseURL + "/login?next=%2Fshop%2Fissues.html%3Fstatus%3Dopen")
        #expect(String(decoding: form.body, as: UTF8.self).contains("value=\"/shop/issues.html?status=open\""))
        // …and lands there after logging in; an off-site `next` becomes `/`.
        let back = try await login(server, admin: admin, next: "%2Fshop%2Fissues.html%3Fstatus%3Dopen")
        #expect(back.location == "/shop/issues.html?status=open")
        let offsite = try await login(server, admin: admin, next: "https%3A%2F%2Fevil.example%2F")
        #expect(offsite.location == "/")
        let slashes = try await login(server, admin: admin, next: "%2F%2Fevil.example")
        #expect(slashes.location == "/")

        // `/` is the rendered projects page (the same bytes as /index.html), not the landing page.
        let front = try await browser.send(.GET, server.baseURL + "/", headers: [("Cookie", back.cookie)])
        #expect(front.status == 200)
        let html = String(decoding: front.body, as: UTF8.self)
        #expect(!html.contains("has not been rendered"))
        #expect(html.contains("shop"))
        let index = try String(contentsOfFile: folder + "/site/index.html", encoding: .utf8)
        #expect(html == index)
        // Still behind the guard.
        #expect(try await browser.send(.GET, server.baseURL + "/").status == 401)
    }

    @Test func anIssueIsClosedMutedAndReopenedFromItsPageWithTheSessionsToken() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let crash = InsightsEndToEndTests.crash(1, site: "parseCart", version: "1.0", user: "u1")
        #expect(try await http.postReports(server.baseURL, key: shop.ingest, crash).status == 202)
        #expect(
            try await http.postReports(
                server.baseURL, key: other.ingest,
                InsightsEndToEndTests.crash(2, site: "boot", version: "1.0", user: "u2")
            ).status == 202)
        #expect(
            try await eventually {
                let mine = try? await issueID(server, token: shop.upload)
                let theirs = try? await issueID(server, token: other.upload)
                return mine != nil && theirs != nil
            })
        let id = try await issueID(server, token: shop.upload)
        let otherID = try await issueID(server, token: other.upload)
        let pagePath = "/shop/issues/\(id).html"
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site" + pagePath) })

        let session = try await login(server, admin: admin, next: "%2F")
        let cookie = [("Cookie", session.cookie)]
        let page = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(page.contains("<form class=\"issue-actions\" method=\"post\" action=\"\(id)/status\">"))
        #expect(page.contains("value=\"closed\">Close</button>") && page.contains("value=\"muted\">Mute</button>"))
        #expect(!page.contains(">Reopen</button>"), "an open issue offers no reopen")
        let token = try #require(Self.csrf(page))
        #expect(token.count == 64 && token != "__FAULTLINE_CSRF__")
        // The stored page holds only the stand-in, never a session's token.
        let stored = try String(contentsOfFile: folder + "/site" + pagePath, encoding: .utf8)
        #expect(!stored.contains(token))
        let action = server.baseURL + "/shop/issues/\(id)/status"
        let formHeaders = cookie + Self.form

        // Without the token, with a wrong one, or with another session's token: 403, and nothing changes.
        let bare = try await browser.send(.POST, action, headers: formHeaders, body: Array("status=closed".utf8))
        #expect(bare.status == 403)
        #expect((bare.json["message"] as? String)?.contains("CSRF token is missing") == true)
        let wrong = try await browser.send(
            .POST, action, headers: formHeaders,
            body: Array("csrf=\(String(repeating: "0", count: 64))&status=closed".utf8))
        #expect(wrong.status == 403)
        let second = try await login(server, admin: admin, next: "%2F")
        let crossSession = try await browser.send(
            .POST, action, headers: [("Cookie", second.cookie)] + Self.form,
            body: Array("csrf=\(token)&status=closed".utf8))
        #expect(crossSession.status == 403)
        // Basic auth (which a browser would replay on a cross-site post) has no session and so cannot post.
        let basic = "Basic " + Data("me:\(admin)".utf8).base64EncodedString()
        let viaBasic = try await browser.send(
            .POST, action, headers: [("Authorization", basic)] + Self.form,
            body: Array("csrf=\(token)&status=closed".utf8))
        #expect(viaBasic.status == 403)
        #expect(try await status(server, id, token: shop.upload) == "open")

        // Another project's issue cannot be changed through this project's path.
        let across = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(otherID)/status", headers: formHeaders,
            body: Array("csrf=\(token)&status=closed".utf8))
        #expect(across.status == 404)
        #expect(try await status(server, otherID, token: other.upload) == "open")
        let badStatus = try await browser.send(
            .POST, action, headers: formHeaders, body: Array("csrf=\(token)&status=fixed".utf8))
        #expect(badStatus.status == 400)

        // With the token: each change answers 303 back to the page, the API sees it, and the page is re-rendered.
        for (wanted, label, offered) in [
            ("closed", "closed", "Reopen"), ("muted", "muted", "Close"), ("open", "open", "Mute"),
        ] {
            let done = try await browser.send(
                .POST, action, headers: formHeaders, body: Array("csrf=\(token)&status=\(wanted)".utf8))
            #expect(done.status == 303)
            #expect(done.headers["Location"].first == pagePath)
            #expect(try await status(server, id, token: shop.upload) == wanted)
            // The page the browser is sent back to shows the change at once (rendered before the 303).
            let html = String(
                decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
            #expect(
                html.contains(">\(label)</span>") && html.contains(">\(offered)</button>")
                    && !html.contains("value=\"\(wanted)\">"),
                "the page shows \(wanted) right after the 303")
        }
        #expect(try await status(server, otherID, token: other.upload) == "open")
        let reopened = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(reopened.contains("Reopened <time"))
        #expect(reopened.contains("by the admin token (dashboard session "), "\(reopened)")

        // A note: escaped on the page, at most 2 KB, and refused without the token.
        let noteAction = server.baseURL + "/shop/issues/\(id)/note"
        let noteless = try await browser.send(.POST, noteAction, headers: formHeaders, body: Array("note=sneaky".utf8))
        #expect(noteless.status == 403)
        let long = try await browser.send(
            .POST, noteAction, headers: formHeaders,
            body: Array("csrf=\(token)&note=\(String(repeating: "x", count: 2049))".utf8))
        #expect(long.status == 400)
        #expect(long.json["field"] as? String == "note")
        let saved = try await browser.send(
            .POST, noteAction, headers: formHeaders,
            body: Array("csrf=\(token)&note=%3Cb%3EFixed+in+2.1%3C%2Fb%3E+%22soon%22".utf8))
        #expect(saved.status == 303)
        #expect(saved.headers["Location"].first == pagePath)
        let withNote = String(
            decoding: try await browser.send(.GET, server.baseURL + pagePath, headers: cookie).body, as: UTF8.self)
        #expect(
            withNote.contains("<p class=\"note\">&lt;b&gt;Fixed in 2.1&lt;/b&gt; &quot;soon&quot;</p>"),
            "the note shows right after the 303")
        #expect(!withNote.contains("<b>Fixed"))
        #expect(!withNote.contains("sneaky"))
        // Another project's issue gets no note through this project's path.
        let acrossNote = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(otherID)/note", headers: formHeaders,
            body: Array("csrf=\(token)&note=x".utf8))
        #expect(acrossNote.status == 404)
    }
}
