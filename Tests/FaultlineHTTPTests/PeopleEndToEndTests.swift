import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Issue #37's people and roles against the real `faultline` binary on 127.0.0.1 and its SQLite file: people
/// invited with `faultline users invite`, their passwords set on the link, and every dashboard action route and write
/// API route tried by a viewer, a member, an admin, an owner, a removed person and a person of another project. What
/// a role may not do is 403 (404 for another project's data) and leaves the database as it was, byte for byte.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct PeopleEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let form = [("Content-Type", "application/x-www-form-urlencoded")]
    static let password = "correct+horse+battery"

    /// `faultline users invite`: the secret of the printed link.
    static func invite(_ folder: String, _ login: String, role: String, project: String?) async throws -> String {
        let result = try await ServerProcess.run(
            ["users", "invite", login, "--role", role, "--data", folder] + (project.map { ["--project", $0] } ?? []))
        guard result.status == 0, let line = result.out.split(separator: "\n").first(where: { $0.hasPrefix("link:") }),
            let range = line.range(of: "/invite/")
        else { throw TestFailure("users invite failed: \(result)") }
        return String(line[range.upperBound...])
    }

    /// Sets the password on an invite link (as a browser does: the form's CSRF value and cookie); the session cookie.
    func accept(_ server: ServerProcess, _ secret: String, name: String) async throws -> String {
        let page = try await browser.send(.GET, server.baseURL + "/invite/\(secret)")
        #expect(page.status == 200)
        let csrf = try #require(DashboardActionsEndToEndTests.csrf(String(decoding: page.body, as: UTF8.self)))
        let formCookie = try #require(
            page.headers["Set-Cookie"].first { $0.hasPrefix("faultline_form=") }?.split(separator: ";").first)
        let done = try await browser.send(
            .POST, server.baseURL + "/invite/\(secret)", headers: Self.form + [("Cookie", String(formCookie))],
            body: Array("csrf=\(csrf)&name=\(name)&password=\(Self.password)&confirm=\(Self.password)".utf8))
        #expect(done.status == 303)
        return try #require(
            done.headers["Set-Cookie"].first { $0.hasPrefix("faultline_session=") }?.split(separator: ";").first
                .map(String.init))
    }

    /// Signs in with a login and password; the session cookie.
    func login(_ server: ServerProcess, _ login: String) async throws -> String {
        let answer = try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form,
            body: Array("login=\(login)&password=\(Self.password)".utf8))
        #expect(answer.status == 303, "\(login) signs in")
        return try #require(answer.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
    }

    /// What the tests check is unchanged: issues (status, who, note), alert settings, people and roles.
    static func snapshot(_ folder: String) throws -> String {
        try sqlite(
            folder,
            """
            SELECT id, status, note, status_changed_by FROM issues ORDER BY id;
            SELECT * FROM alert_settings ORDER BY project_id;
            SELECT id, login, owner FROM people ORDER BY id;
            SELECT * FROM memberships ORDER BY person_id, project_id;
            SELECT id, kind, subject FROM audit_log ORDER BY id;
            """)
    }

    /// What `sqlite3 -readonly` prints for `sql` on the server's database in `folder`.
    static func sqlite(_ folder: String, _ sql: String) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = ["-readonly", folder + "/faultline.sqlite", sql]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        process.waitUntilExit()
        return String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func csrf(_ server: ServerProcess, page: String, cookie: String) async throws -> (html: String, token: String?) {
        let answer = try await browser.send(
            .GET, server.baseURL + page, headers: [("Cookie", cookie), ("Accept", "text/html")])
        let html = String(decoding: answer.body, as: UTF8.self)
        return (html, answer.status == 200 ? DashboardActionsEndToEndTests.csrf(html) : nil)
    }

    @Test func eachRoleMayDoWhatItMayAndNothingElseChangesTheDatabase() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        var invites: [String: String] = [:]
        for (login, role, project) in [
            // Vic starts as a member and is made a viewer below, with a page (and its form token) still open.
            ("vic@example.org", "member", "shop"), ("mia@example.org", "member", "shop"),
            ("ann@example.org", "admin", "shop"), ("own@example.org", "owner", nil),
            ("out@example.org", "admin", "other"), ("rem@example.org", "member", "shop"),
        ] {
            invites[login] = try await Self.invite(folder, login, role: role, project: project)
        }
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        #expect(
            try await http.postReports(
                server.baseURL, key: shop.ingest,
                InsightsEndToEndTests.crash(1, site: "parseCart", version: "1.0", user: "u1")
            ).status == 202)
        #expect(
            try await http.postReports(
                server.baseURL, key: other.ingest,
                InsightsEndToEndTests.crash(2, site: "boot", version: "1.0", user: "u2")
            ).status == 202)
        #expect(
            try await eventually {
                let mine = try? await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)
                let theirs = try? await DashboardActionsEndToEndTests().issueID(server, token: other.upload)
                return mine != nil && theirs != nil
            })
        let id = try await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)
        let otherID = try await DashboardActionsEndToEndTests().issueID(server, token: other.upload)
        let page = "/shop/issues/\(id).html"
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site" + page) })

        var cookies: [String: String] = [:]
        for (login, name) in [
            ("vic@example.org", "Vic"), ("mia@example.org", "Mia+Member"), ("ann@example.org", "Ann"),
            ("own@example.org", "Owen"), ("out@example.org", "Otto"), ("rem@example.org", "Rem"),
        ] {
            cookies[login] = try await accept(server, try #require(invites[login]), name: name)
        }
        let vicToken = try #require(try await csrf(server, page: page, cookie: cookies["vic@example.org"]!).token)
        let demoted = try await ServerProcess.run(
            ["users", "role", "vic@example.org", "--role", "viewer", "--project", "shop", "--data", folder])
        #expect(demoted.status == 0, "\(demoted)")
        // The removed person had a live session; removing them ends it at once.
        let removed = try await ServerProcess.run(["users", "remove", "rem@example.org", "--data", folder])
        #expect(removed.status == 0, "\(removed)")

        // Reading: the project's own people read its pages, the viewer without the forms it cannot use; a person of
        // another project gets 404 (not 403: the project's existence is not theirs to learn); a removed person is
        // sent to sign in.
        let viewerPage = try await csrf(server, page: page, cookie: cookies["vic@example.org"]!)
        #expect(viewerPage.html.contains("<h1>"), "the viewer reads the issue")
        #expect(!viewerPage.html.contains("<form class=\"issue-actions\""), "no status buttons for a viewer")
        #expect(!viewerPage.html.contains("<form class=\"issue-note\""), "no note form for a viewer")
        #expect(!viewerPage.html.contains("__FAULTLINE_CSRF__"))
        let viewerList = try await csrf(server, page: "/shop/list", cookie: cookies["vic@example.org"]!)
        #expect(viewerList.html.contains("parseCart") && !viewerList.html.contains("<form class=\"row-actions\""))
        let viewerStatic = try await csrf(server, page: "/shop/issues.html", cookie: cookies["vic@example.org"]!)
        #expect(!viewerStatic.html.contains("<form class=\"row-actions\""))
        for login in ["mia@example.org", "ann@example.org", "own@example.org"] {
            let seen = try await csrf(server, page: page, cookie: cookies[login]!)
            #expect(
                seen.html.contains("<form class=\"issue-actions\"") && seen.token?.count == 64, "\(login) has forms")
        }
        let outsider = try await browser.send(
            .GET, server.baseURL + page, headers: [("Cookie", cookies["out@example.org"]!), ("Accept", "text/html")])
        #expect(outsider.status == 404)
        let outsiderList = try await browser.send(
            .GET, server.baseURL + "/shop/list", headers: [("Cookie", cookies["out@example.org"]!)])
        #expect(outsiderList.status == 404)
        let gone = try await browser.send(
            .GET, server.baseURL + page, headers: [("Cookie", cookies["rem@example.org"]!), ("Accept", "text/html")])
        #expect(gone.status == 303 && gone.headers["Location"].first?.hasPrefix("/login") == true)

        // The dashboard's action routes: each refusal is 403 or 404, and the database is as it was.
        let before = try Self.snapshot(folder)
        #expect(before.contains("|open|"))
        // The viewer presents the valid token of their session (from when they were a member): only the role stops
        // them. The others are stopped before their token is looked at.
        let tokenOf: [String: String] = [
            "vic@example.org": vicToken, "out@example.org": String(repeating: "0", count: 64),
            "rem@example.org": String(repeating: "0", count: 64),
        ]
        for (login, expected) in [("vic@example.org", 403), ("out@example.org", 404), ("rem@example.org", 401)] {
            for (path, body) in [
                ("/shop/issues/\(id)/status", "status=closed"), ("/shop/issues/\(id)/note", "note=sneaky"),
            ] {
                let answer = try await browser.send(
                    .POST, server.baseURL + path, headers: Self.form + [("Cookie", cookies[login]!)],
                    body: Array("csrf=\(tokenOf[login]!)&\(body)".utf8))
                #expect(answer.status == expected, "\(login) \(path)")
                if login == "vic@example.org" {
                    #expect((answer.json["message"] as? String)?.contains("member role") == true)
                }
            }
        }
        // A member of `shop` cannot reach `other`'s issue through either project's path.
        let mia = try await csrf(server, page: page, cookie: cookies["mia@example.org"]!)
        let miaToken = try #require(mia.token)
        for path in ["/other/issues/\(otherID)/status", "/shop/issues/\(otherID)/status"] {
            let across = try await browser.send(
                .POST, server.baseURL + path, headers: Self.form + [("Cookie", cookies["mia@example.org"]!)],
                body: Array("csrf=\(miaToken)&status=closed".utf8))
            #expect(across.status == 404, "\(path)")
        }
        // The write API: a person's session is not an API credential (401); an upload token may not change alert
        // settings (403); another project's upload token cannot see this project's issue (404).
        let settings = Array(#"{"webhook_url": null, "velocity_threshold_percent": 5}"#.utf8)
        for cookie in cookies.values {
            let patch = try await browser.send(
                .PATCH, server.baseURL + "/api/v1/issues/\(id)", headers: [("Cookie", cookie)],
                body: Array(#"{"status":"closed"}"#.utf8))
            #expect(patch.status == 401)
            let put = try await browser.send(
                .PUT, server.baseURL + "/api/v1/alert-settings?project=shop", headers: [("Cookie", cookie)],
                body: settings)
            #expect(put.status == 401)
        }
        let ciPut = try await http.send(
            .PUT, server.baseURL + "/api/v1/alert-settings", headers: [("Authorization", "Bearer \(shop.upload)")],
            body: settings)
        #expect(ciPut.status == 403)
        let otherCI = try await http.send(
            .PATCH, server.baseURL + "/api/v1/issues/\(id)", headers: [("Authorization", "Bearer \(other.upload)")],
            body: Array(#"{"status":"closed"}"#.utf8))
        #expect(otherCI.status == 404)
        #expect(try Self.snapshot(folder) == before, "nothing a refused request did changed the database")

        // What a role may do, it does: the member closes the issue and the page names them.
        let closed = try await browser.send(
            .POST, server.baseURL + "/shop/issues/\(id)/status",
            headers: Self.form + [("Cookie", cookies["mia@example.org"]!)],
            body: Array("csrf=\(miaToken)&status=closed".utf8))
        #expect(closed.status == 303)
        let after = try Self.snapshot(folder)
        #expect(after.contains("|closed||person:"), "\(after)")
        let shown = try await csrf(server, page: page, cookie: cookies["vic@example.org"]!)
        #expect(shown.html.contains("Closed <time"), "\(shown.html)")
        #expect(shown.html.contains("by Mia Member."))
        #expect(!shown.html.contains("(session "))
        // The admin and the owner change notes; the admin token still changes alert settings.
        for login in ["ann@example.org", "own@example.org"] {
            let seen = try await csrf(server, page: page, cookie: cookies[login]!)
            let note = try await browser.send(
                .POST, server.baseURL + "/shop/issues/\(id)/note", headers: Self.form + [("Cookie", cookies[login]!)],
                body: Array("csrf=\(try #require(seen.token))&note=from+\(login)".utf8))
            #expect(note.status == 303, "\(login)")
        }
        #expect(try Self.snapshot(folder).contains("from own@example.org"))
        let adminPut = try await http.send(
            .PUT, server.baseURL + "/api/v1/alert-settings?project=shop",
            headers: [("Authorization", "Bearer \(admin)"), ("Content-Type", "application/json")],
            body: Array(#"{"new_issue_cap": 1000}"#.utf8))
        #expect(adminPut.status == 200, "\(String(decoding: adminPut.body, as: UTF8.self))")

        // The audit trail holds each change, with who made it and from where; the refusals above added nothing.
        let trail = try Self.sqlite(
            folder,
            """
            SELECT a.kind, coalesce(a.actor_name, a.actor_kind), coalesce(a.address, '-'), coalesce(a.subject, ''),
                coalesce(a.before_value, ''), coalesce(a.after_value, '')
            FROM audit_log a ORDER BY a.id;
            """)
        let lines = trail.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.hasPrefix("member.invited|cli|-|") }.count == 6, "\(trail)")
        #expect(lines.contains("member.role|cli|-|vic@example.org|member|viewer"), "\(trail)")
        #expect(lines.contains("member.removed|cli|-|rem@example.org|member|"), "\(trail)")
        #expect(lines.contains("person.removed|cli|-|rem@example.org||"), "\(trail)")
        #expect(lines.contains("issue.status|Mia Member|127.0.0.1|issue \(id)||closed"), "\(trail)")
        #expect(lines.contains("issue.note|Ann|127.0.0.1|issue \(id)||from ann@example.org"), "\(trail)")
        #expect(lines.contains("issue.note|Owen|127.0.0.1|issue \(id)||from own@example.org"), "\(trail)")
        #expect(lines.contains { $0.hasPrefix("project.alerts|admin-token|127.0.0.1|shop|") }, "\(trail)")
        // Two projects made and the admin token made by the CLI, six invites, a role, a removal (the project's and
        // the server's entry), a status, two notes and the alert settings.
        #expect(lines.filter { $0.hasPrefix("project.created|cli|-|") }.count == 2, "\(trail)")
        #expect(lines.contains("token.admin_rotated|cli|-|the admin token||"), "\(trail)")
        #expect(lines.count == 16, "\(trail)")
        // Read through the API: the admin token (newest first, by group); a project's upload token may not.
        let read = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop&kind=issue",
            headers: [("Authorization", "Bearer \(admin)")])
        #expect(read.status == 200)
        let entries = try #require(read.json["entries"] as? [[String: Any]])
        #expect(entries.map { $0["kind"] as? String } == ["issue.note", "issue.note", "issue.status"])
        #expect(entries.last?["actor"] as? String == "Mia Member" && entries.last?["address"] as? String == "127.0.0.1")
        let ciRead = try await http.send(
            .GET, server.baseURL + "/api/v1/audit", headers: [("Authorization", "Bearer \(shop.upload)")])
        #expect(ciRead.status == 403)
        let badKind = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?kind=Issue%20x", headers: [("Authorization", "Bearer \(admin)")])
        #expect(badKind.status == 400 && badKind.json["field"] as? String == "kind")
        // And by the CLI on the data folder.
        let cli = try await ServerProcess.run(["projects", "audit", "shop", "--kind", "member", "--data", folder])
        #expect(cli.status == 0 && cli.out.contains("member.role") && !cli.out.contains("issue.status"), "\(cli)")
    }

    @Test func aPersonsSessionSurvivesARestartAndARemovedPersonsDoesNot() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let stay = try await Self.invite(folder, "stay@example.org", role: "member", project: "shop")
        let leave = try await Self.invite(folder, "leave@example.org", role: "member", project: "shop")
        var server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        _ = try await accept(server, stay, name: "Stay")
        _ = try await accept(server, leave, name: "Leave")
        let stayCookie = try await login(server, "stay@example.org")
        let leaveCookie = try await login(server, "leave@example.org")
        #expect(try await server.terminate() == 0)
        // (not cleanUp(): that deletes the data folder the next server opens)
        server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        for cookie in [stayCookie, leaveCookie] {
            let list = try await browser.send(.GET, server.baseURL + "/shop/list", headers: [("Cookie", cookie)])
            #expect(list.status == 200, "the session outlived the restart")
        }
        #expect(try await ServerProcess.run(["users", "remove", "leave@example.org", "--data", folder]).status == 0)
        let ended = try await browser.send(.GET, server.baseURL + "/shop/list", headers: [("Cookie", leaveCookie)])
        #expect(ended.status == 401, "removed: the session ended at once, without a restart")
        let kept = try await browser.send(.GET, server.baseURL + "/shop/list", headers: [("Cookie", stayCookie)])
        #expect(kept.status == 200)
        // `users list` shows who is left, and their roles.
        let listed = try await ServerProcess.run(["users", "list", "--data", folder])
        #expect(listed.out.contains("stay@example.org") && listed.out.contains("shop:member"))
        #expect(!listed.out.contains("leave@example.org"))
    }
}
