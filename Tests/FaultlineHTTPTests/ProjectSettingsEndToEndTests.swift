import AsyncHTTPClient
import Foundation
import Testing

/// A project's settings page (`/{slug}/settings`, issue #37) against the real `faultline` binary on 127.0.0.1 and its
/// SQLite file: a viewer and a member read it without a form and their posts are 403 with the database unchanged; an
/// admin changes a role, the webhook and the targets, invites and removes people; each change is in the trail on the
/// page and in `GET /api/v1/audit`, paged the same way; an internal webhook is refused with a message on the page.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct ProjectSettingsEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    let people = PeopleEndToEndTests()

    /// What a refused post must leave as it was: people, roles, alert settings, the project's settings, the trail.
    static func snapshot(_ folder: String) throws -> String {
        try PeopleEndToEndTests.snapshot(folder)
            + PeopleEndToEndTests.sqlite(
                folder, "SELECT * FROM projects ORDER BY id; SELECT count(*) FROM invites; SELECT * FROM audit_log;")
    }

    /// `value` percent-encoded for a form body.
    static func encoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? value
    }

    /// The alert form as the page sends it with the default settings and `webhook`.
    static func alertForm(webhook: String) -> String {
        "webhook_url=\(encoded(webhook))&alert_on_new_issue=1&alert_on_regression=1&velocity_percent=1"
            + "&velocity_min_users=25&velocity_min_release_users=10&velocity_window_minutes=30&crash_free_target="
            + "&crash_free_min_sessions=100"
    }

    func get(_ server: ServerProcess, _ path: String, _ cookie: String) async throws -> (status: Int, html: String) {
        let answer = try await browser.send(
            .GET, server.baseURL + path, headers: [("Cookie", cookie), ("Accept", "text/html")])
        return (answer.status, String(decoding: answer.body, as: UTF8.self))
    }

    func post(_ server: ServerProcess, _ path: String, _ cookie: String, _ body: String) async throws -> HTTP.Answer {
        try await browser.send(
            .POST, server.baseURL + path, headers: PeopleEndToEndTests.form + [("Cookie", cookie)],
            body: Array(body.utf8))
    }

    /// The person id of `login`, from the database.
    static func personID(_ folder: String, _ login: String) throws -> Int {
        let out = try PeopleEndToEndTests.sqlite(folder, "SELECT id FROM people WHERE login = '\(login)';")
        return try #require(Int(out.trimmingCharacters(in: .whitespacesAndNewlines)))
    }

    /// The number of trail rows on a settings page.
    static func trailRows(_ html: String) -> Int { html.components(separatedBy: "<tr><td><time datetime=").count - 1 }

    @Test func viewersReadAdminsChangeAndEveryChangeIsInTheTrail() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        _ = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        var cookies: [String: String] = [:]
        var invites: [String: String] = [:]
        for (login, role, project) in [
            ("vic@example.org", "viewer", "shop"), ("mia@example.org", "member", "shop"),
            ("ann@example.org", "admin", "shop"), ("out@example.org", "admin", "other"),
        ] {
            invites[login] = try await PeopleEndToEndTests.invite(folder, login, role: role, project: project)
        }
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        for (login, name) in [
            ("vic@example.org", "Vic"), ("mia@example.org", "Mia"), ("ann@example.org", "Ann"),
            ("out@example.org", "Otto"),
        ] {
            cookies[login] = try await people.accept(server, try #require(invites[login]), name: name)
        }
        let (vic, mia, ann) = (cookies["vic@example.org"]!, cookies["mia@example.org"]!, cookies["ann@example.org"]!)
        let miaID = try Self.personID(folder, "mia@example.org")

        // A viewer and a member read the settings without a form and without the trail; the nav links to the page.
        for cookie in [vic, mia] {
            let page = try await get(server, "/shop/settings", cookie)
            #expect(page.status == 200)
            #expect(page.html.contains("<h1>Settings of shop</h1>") && page.html.contains("mia@example.org"))
            #expect(!page.html.contains("action=\"settings/"), "no forms for a reader who may not change settings")
            #expect(!page.html.contains("<caption>Changes to shop"), "the trail is for admins")
            #expect(page.html.contains("href=\"settings/grouping\">Grouping rules</a>"))
            #expect(page.html.contains("<a href=\"settings\" aria-current=\"page\">Settings</a>"))
        }
        let overview = try await get(server, "/shop/list", vic)
        #expect(overview.html.contains("<a href=\"settings\">Settings</a>"), "each project page links to it")

        // Their posts, with their own session's valid CSRF token (from their account page), are 403; nothing changes.
        let before = try Self.snapshot(folder)
        for cookie in [vic, mia] {
            let token = try #require(try await people.csrf(server, page: "/account", cookie: cookie).token)
            for (path, body) in [
                ("/shop/settings/members/\(miaID)/role", "role=admin"),
                ("/shop/settings/members/\(miaID)/remove", ""),
                ("/shop/settings/members/invite", "login=eve%40example.org&role=admin"),
                ("/shop/settings/alerts", Self.alertForm(webhook: "https://93.184.216.34/hook")),
                ("/shop/settings/targets", "users=90&sessions=90"),
                ("/shop/settings/privacy", ""),
                ("/shop/settings/in-app", "include=libshop*.so"),
            ] {
                let answer = try await post(server, path, cookie, "csrf=\(token)&\(body)")
                #expect(answer.status == 403, "\(path)")
            }
        }
        // An admin of another project gets 404 for the page and its forms: the project is not theirs to learn of.
        let out = cookies["out@example.org"]!
        #expect(try await get(server, "/shop/settings", out).status == 404)
        let outToken = try #require(try await people.csrf(server, page: "/account", cookie: out).token)
        let across = try await post(server, "/shop/settings/targets", out, "csrf=\(outToken)&users=1&sessions=1")
        #expect(across.status == 404)
        #expect(try Self.snapshot(folder) == before, "a refused post changes nothing")

        // The admin gets the forms; a post without the session's CSRF token is 403 too.
        let adminPage = try await people.csrf(server, page: "/shop/settings", cookie: ann)
        let token = try #require(adminPage.token)
        #expect(adminPage.html.contains("action=\"settings/alerts\"") && adminPage.html.contains("<caption>Changes to"))
        let forged = try await post(server, "/shop/settings/targets", ann, "csrf=\(String(repeating: "0", count: 64))")
        #expect(forged.status == 403)
        #expect(try Self.snapshot(folder) == before)

        // An internal webhook is refused with a message on the page, and nothing is stored.
        let internalHook = try await post(
            server, "/shop/settings/alerts", ann, "csrf=\(token)&" + Self.alertForm(webhook: "http://127.0.0.1:9/hook"))
        let refusedPage = String(decoding: internalHook.body, as: UTF8.self)
        #expect(internalHook.status == 400)
        #expect(refusedPage.contains("<p class=\"error\" role=\"alert\">Webhook URL:"), "\(refusedPage.prefix(3000))")
        #expect(try Self.snapshot(folder) == before)

        // A pattern past the limit is refused the way `faultline projects configure` refuses it.
        let longPattern = try await post(
            server, "/shop/settings/in-app", ann, "csrf=\(token)&include=\(String(repeating: "a", count: 129))")
        #expect(longPattern.status == 400)
        #expect(String(decoding: longPattern.body, as: UTF8.self).contains("an in-app pattern must be 1–128 bytes"))
        #expect(try Self.snapshot(folder) == before)

        // The admin changes a role, the webhook, the targets, privacy and in-app rules (lists one entry a line).
        for (path, body) in [
            ("/shop/settings/members/\(miaID)/role", "role=viewer"),
            ("/shop/settings/alerts", Self.alertForm(webhook: "https://93.184.216.34/hooks/secret-path")),
            ("/shop/settings/targets", "users=99.2&sessions=99.8"),
            ("/shop/settings/privacy", "scrubbing=1&sensitive_fields=card_holder%0D%0A%0D%0Aloyalty_id"),
            ("/shop/settings/in-app", "include=libshop*.so&exclude=libvendor.so"),
        ] {
            let answer = try await post(server, path, ann, "csrf=\(token)&\(body)")
            #expect(answer.status == 303, "\(path): \(String(decoding: answer.body, as: UTF8.self).prefix(2000))")
            #expect(answer.headers["Location"].first == "/shop/settings")
        }
        let stored = try PeopleEndToEndTests.sqlite(
            folder,
            """
            SELECT role FROM memberships WHERE person_id = \(miaID);
            SELECT settings FROM alert_settings;
            """)
        #expect(
            stored.contains("viewer") && stored.contains("93.184.216.34") && stored.contains("secret-path"), "\(stored)"
        )

        // Each change is on the page's trail, as Ann from 127.0.0.1, the webhook's path masked.
        let changed = try await get(server, "/shop/settings", ann)
        #expect(
            changed.html.contains(
                "<td>Ann</td><td>127.0.0.1</td><td>member.role</td><td>mia@example.org</td><td>member</td><td>viewer</td>"
            ), "\(changed.html)")
        #expect(changed.html.contains("<td>Ann</td><td>127.0.0.1</td><td>project.webhook</td>"))
        for kind in ["project.webhook", "project.targets", "project.privacy", "project.in_app"] {
            #expect(changed.html.contains("<td>Ann</td><td>127.0.0.1</td><td>\(kind)</td>"), "\(kind)")
        }
        #expect(changed.html.contains(">card_holder\nloyalty_id</textarea>"))
        #expect(changed.html.contains(">libshop*.so</textarea>") && changed.html.contains(">libvendor.so</textarea>"))
        #expect(changed.html.contains("crash-free users 99.2"))
        #expect(!changed.html.contains("secret-path"), "the webhook is shown masked")
        #expect(changed.html.contains("99.8"))
        // …and in the API, read by the admin token.
        let api = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop", headers: [("Authorization", "Bearer \(admin)")])
        let entries = try #require(api.json["entries"] as? [[String: Any]])
        let newest = entries.prefix(5).map { "\($0["kind"] as? String ?? "")|\($0["actor"] as? String ?? "")" }
        #expect(
            newest == [
                "project.in_app|Ann", "project.privacy|Ann", "project.targets|Ann", "project.webhook|Ann",
                "member.role|Ann",
            ], "\(entries)")
        #expect(entries.prefix(5).allSatisfy { $0["address"] as? String == "127.0.0.1" })

        // An invite made on the page shows its link once; the link works.
        let invited = try await post(
            server, "/shop/settings/members/invite", ann, "csrf=\(token)&login=eve%40example.org&role=member")
        let invitedPage = String(decoding: invited.body, as: UTF8.self)
        #expect(invited.status == 200)
        let secret = try #require(
            invitedPage.range(of: "/invite/").map { String(invitedPage[$0.upperBound...].prefix { $0.isHexDigit }) })
        #expect(secret.count == 64)
        #expect(try await browser.send(.GET, server.baseURL + "/invite/\(secret)").status == 200)
        let withEve = try await get(server, "/shop/settings", ann).html
        #expect(withEve.contains("<td>eve@example.org (invited)</td>"), "\(withEve)")

        // Removing Mia from the project takes it from her at once; her session goes on (the account page).
        let removed = try await post(server, "/shop/settings/members/\(miaID)/remove", ann, "csrf=\(token)")
        #expect(removed.status == 303)
        #expect(try await get(server, "/shop/settings", mia).status == 404)
        #expect(try await get(server, "/account", mia).status == 200)
        // Nor is she a member whose role the page changes any more.
        #expect(
            try await post(server, "/shop/settings/members/\(miaID)/role", ann, "csrf=\(token)&role=admin").status
                == 404)

        // The admin token's session (the break-glass owner) gets the forms too, and is recorded as itself.
        let breakGlass = try await DashboardActionsEndToEndTests().login(
            server, admin: admin, next: "%2Fshop%2Fsettings")
        let ownerPage = try await people.csrf(server, page: "/shop/settings", cookie: breakGlass.cookie)
        let ownerToken = try #require(ownerPage.token)
        #expect(ownerPage.html.contains("action=\"settings/targets\""))
        let ownerSave = try await post(
            server, "/shop/settings/targets", breakGlass.cookie, "csrf=\(ownerToken)&users=99.3&sessions=99.8")
        #expect(ownerSave.status == 303)
        #expect(
            try await get(server, "/shop/settings", ann).html.contains(
                "<td>the admin token</td><td>127.0.0.1</td><td>project.targets</td>"))

        // The trail pages as the API does: 50 entries, then an older page from the same `before`.
        let vicID = try Self.personID(folder, "vic@example.org")
        for round in 0..<43 {
            let role = round % 2 == 0 ? "member" : "viewer"
            let answer = try await post(
                server, "/shop/settings/members/\(vicID)/role", ann, "csrf=\(token)&role=\(role)")
            #expect(answer.status == 303)
        }
        let first = try await get(server, "/shop/settings", ann)
        #expect(Self.trailRows(first.html) == 50)
        let pageAPI = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop", headers: [("Authorization", "Bearer \(admin)")])
        let nextBefore = try #require(pageAPI.json["next_before"] as? Int)
        #expect(first.html.contains("<a href=\"settings?before=\(nextBefore)#trail-heading\">Older changes</a>"))
        let older = try await get(server, "/shop/settings?before=\(nextBefore)", ann)
        let olderAPI = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop&before=\(nextBefore)",
            headers: [("Authorization", "Bearer \(admin)")])
        let olderEntries = try #require(olderAPI.json["entries"] as? [[String: Any]])
        #expect(!olderEntries.isEmpty && Self.trailRows(older.html) == olderEntries.count)
        #expect(older.html.contains("<td>the CLI</td><td>—</td><td>project.created</td>"), "the oldest entry")
        #expect(older.html.contains("Newest changes") && !older.html.contains("Older changes"))
        let bad = try await get(server, "/shop/settings?before=x", ann)
        #expect(bad.status == 400)
    }
}
