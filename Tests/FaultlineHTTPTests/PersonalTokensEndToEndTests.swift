import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Issue #37's personal API tokens against the real `faultline` binary on 127.0.0.1 and its SQLite file: tokens made
/// with `faultline tokens create` and on the account page, each scope tried on a read route, an issue change, the
/// alert settings and a debug-file route, for people of several roles. What a token may not do is 403 (404 for
/// another project) and leaves the database as it was; a revoked token, a lowered role and a removed person take
/// effect on the next request; the real sentry-cli and symupload upload with a person's `upload:symbols` token.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct PersonalTokensEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let json = [("Content-Type", "application/json")]

    /// `faultline tokens create`: the printed token, or the command's output when it failed.
    static func create(_ folder: String, _ login: String, _ scopes: [String]) async throws -> (
        status: Int32, token: String?, output: String
    ) {
        let result = try await ServerProcess.run(
            ["tokens", "create", login, "--name", "test \(scopes.joined(separator: "+"))", "--data", folder]
                + scopes.flatMap { ["--scope", $0] })
        let token = result.out.split(separator: "\n").first { $0.hasPrefix("token:") }.map {
            String($0.dropFirst("token:".count)).trimmingCharacters(in: .whitespaces)
        }
        return (result.status, token, result.out + result.err)
    }

    /// What a refused request must leave as it was: issues, alert settings, debug files, tokens.
    static func snapshot(_ folder: String) throws -> String {
        try PeopleEndToEndTests.sqlite(
            folder,
            """
            SELECT id, status, note, status_changed_by FROM issues ORDER BY id;
            SELECT * FROM alert_settings ORDER BY project_id;
            SELECT count(*) FROM debug_files;
            SELECT id, person_id, name, scopes FROM personal_tokens ORDER BY id;
            """)
    }

    /// The four routes of the matrix, as (name, method, path, body).
    static func routes(issue: Int) -> [(String, HTTPMethod, String, [UInt8])] {
        [
            ("read", .GET, "/api/v1/issues?project=shop", []),
            ("close", .PATCH, "/api/v1/issues/\(issue)?project=shop", Array(#"{"status":"closed"}"#.utf8)),
            ("settings", .PUT, "/api/v1/alert-settings?project=shop", Array(#"{"new_issue_cap": 999}"#.utf8)),
            (
                "missing", .POST, "/api/v1/debug-files/missing?project=shop",
                Array(#"{"files": [{"build_id": "abcd", "kinds": ["debuginfo"]}]}"#.utf8)
            ),
        ]
    }

    @Test func eachScopeReachesItsRoutesWithinItsPersonsRoleAndNothingElseChanges() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        _ = try await ServerProcess.createProject("other", in: folder)
        for (login, role, project) in [
            ("ann@example.org", "admin", "shop"), ("mia@example.org", "member", "shop"),
            ("vic@example.org", "viewer", "shop"), ("out@example.org", "admin", "other"),
        ] {
            _ = try await PeopleEndToEndTests.invite(folder, login, role: role, project: project)
        }
        // A token never carries a scope above its person's best role: refused, nothing stored.
        let tooMuch = try await Self.create(folder, "mia@example.org", ["admin"])
        #expect(tooMuch.status != 0 && tooMuch.token == nil, "\(tooMuch.output)")
        #expect(tooMuch.output.contains("admin role"), "\(tooMuch.output)")
        let viewerWrites = try await Self.create(folder, "vic@example.org", ["write:issues"])
        #expect(viewerWrites.status != 0 && viewerWrites.token == nil)
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM personal_tokens") == "0\n")

        var tokens: [String: String] = [:]
        for (login, scope) in [
            ("ann@example.org", "read"), ("ann@example.org", "write:issues"), ("ann@example.org", "upload:symbols"),
            ("ann@example.org", "admin"), ("mia@example.org", "write:issues"), ("vic@example.org", "read"),
            ("out@example.org", "admin"),
        ] {
            let made = try await Self.create(folder, login, [scope])
            #expect(made.status == 0, "\(made.output)")
            tokens["\(login.prefix(3)) \(scope)"] = try #require(made.token)
        }
        // Only hashes are stored.
        let stored = try PeopleEndToEndTests.sqlite(folder, "SELECT token_hash FROM personal_tokens")
        for token in tokens.values { #expect(!stored.contains(token.dropFirst(4))) }

        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        #expect(
            try await http.postReports(
                server.baseURL, key: shop.ingest,
                InsightsEndToEndTests.crash(1, site: "parseCart", version: "1.0", user: "u1")
            ).status == 202)
        #expect(
            try await eventually {
                (try? await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)) != nil
            }
        )
        let issue = try await DashboardActionsEndToEndTests().issueID(server, token: shop.upload)

        // Allowed routes per token; the rest must be refused with the status given.
        let expected: [(String, [String: Int])] = [
            ("ann read", ["read": 200, "close": 403, "settings": 403, "missing": 403]),
            ("ann write:issues", ["read": 200, "close": 200, "settings": 403, "missing": 403]),
            ("ann upload:symbols", ["read": 403, "close": 403, "settings": 403, "missing": 200]),
            ("ann admin", ["read": 200, "close": 200, "settings": 200, "missing": 200]),
            ("mia write:issues", ["read": 200, "close": 200, "settings": 403, "missing": 403]),
            ("vic read", ["read": 200, "close": 403, "settings": 403, "missing": 403]),
            ("out admin", ["read": 404, "close": 404, "settings": 404, "missing": 404]),
        ]
        for (name, answers) in expected {
            let token = try #require(tokens[name])
            for (route, method, path, body) in Self.routes(issue: issue) {
                let before = try Self.snapshot(folder)
                let answer = try await http.send(
                    method, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")] + Self.json,
                    body: body)
                let want = try #require(answers[route])
                #expect(
                    answer.status == want,
                    "\(name) on \(route): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
                if want != 200 {
                    #expect(try Self.snapshot(folder) == before, "\(name) on \(route) changed nothing")
                    #expect(answer.json["error"] != nil, "a refusal says why")
                }
                if route == "close", answer.status == 200 {
                    // Back to open for the next token; the change names the person.
                    #expect(try Self.snapshot(folder).contains("|closed||person:"))
                    _ = try await http.send(
                        .PATCH, server.baseURL + "/api/v1/issues/\(issue)",
                        headers: [("Authorization", "Bearer \(shop.upload)")] + Self.json,
                        body: Array(#"{"status":"open"}"#.utf8))
                }
            }
        }
        // Each close through a token is audited as its person and names the token by its name, read through the API.
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let trail = try await http.send(
            .GET, server.baseURL + "/api/v1/audit?project=shop&kind=issue.status",
            headers: [("Authorization", "Bearer \(admin)")])
        #expect(trail.status == 200)
        let closes = (trail.json["entries"] as? [[String: Any]] ?? []).filter { $0["after"] as? String == "closed" }
        #expect(
            Set(closes.compactMap { $0["actor"] as? String }) == [
                "ann@example.org (token test write:issues)", "ann@example.org (token test admin)",
                "mia@example.org (token test write:issues)",
            ], "\(closes)")
        #expect(closes.allSatisfy { $0["actor_kind"] as? String == "personal-token" && $0["actor_person_id"] is Int })
        #expect(closes.allSatisfy { $0["address"] as? String == "127.0.0.1" })
        // A person of one project needs not name it; a token never reads another project even when named.
        let mine = try await http.send(
            .GET, server.baseURL + "/api/v1/issues",
            headers: [("Authorization", "Bearer \(tokens["mia write:issues"]!)")])
        #expect(mine.status == 200)
        let theirs = try await http.send(
            .GET, server.baseURL + "/api/v1/issues?project=other",
            headers: [("Authorization", "Bearer \(tokens["mia write:issues"]!)")])
        #expect(theirs.status == 404)
        // The last use is recorded.
        #expect(
            try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM personal_tokens WHERE last_used_at IS NULL")
                == "0\n")

        // A lowered role takes effect on the next request: Ann, now a viewer, reads but closes nothing.
        let lowered = try await ServerProcess.run(
            ["users", "role", "ann@example.org", "--role", "viewer", "--project", "shop", "--data", folder])
        #expect(lowered.status == 0, "\(lowered)")
        let (_, close, closePath, closeBody) = Self.routes(issue: issue)[1]
        let afterLowering = try await http.send(
            close, server.baseURL + closePath,
            headers: [("Authorization", "Bearer \(tokens["ann admin"]!)")] + Self.json,
            body: closeBody)
        #expect(afterLowering.status == 403)
        // A revoked token is refused at once (401), as is every token of a removed person.
        let listed = try await ServerProcess.run(["tokens", "list", "vic@example.org", "--data", folder])
        let vicID = try #require(listed.out.split(separator: "\n").dropFirst().first?.split(separator: "\t").first)
        let revoked = try await ServerProcess.run(["tokens", "revoke", String(vicID), "--data", folder])
        #expect(revoked.status == 0, "\(revoked)")
        let afterRevoke = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(tokens["vic read"]!)")])
        #expect(afterRevoke.status == 401)
        #expect(try await ServerProcess.run(["users", "remove", "ann@example.org", "--data", folder]).status == 0)
        let afterRemoval = try await http.send(
            .GET, server.baseURL + "/api/v1/issues?project=shop",
            headers: [("Authorization", "Bearer \(tokens["ann read"]!)")])
        #expect(afterRemoval.status == 401)
        #expect(
            try PeopleEndToEndTests.sqlite(
                folder,
                "SELECT count(*) FROM personal_tokens p JOIN people x ON x.id = p.person_id WHERE x.login LIKE 'ann%'")
                == "0\n")
    }

    @Test func theAccountPageMakesATokenShownOnceAndRevokesIt() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let secret = try await PeopleEndToEndTests.invite(folder, "mia@example.org", role: "member", project: "shop")
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let cookie = try await PeopleEndToEndTests().accept(server, secret, name: "Mia")
        let page = try await browser.send(
            .GET, server.baseURL + "/account", headers: [("Cookie", cookie), ("Accept", "text/html")])
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("mia@example.org") && html.contains(">member<"), "\(html)")
        let csrf = try #require(DashboardActionsEndToEndTests.csrf(html))

        // Without the session's CSRF token nothing is made.
        let forged = try await browser.send(
            .POST, server.baseURL + "/account/tokens", headers: PeopleEndToEndTests.form + [("Cookie", cookie)],
            body: Array("csrf=0000&name=ci&scope=read".utf8))
        #expect(forged.status == 403)
        // A scope above the role is refused on the page.
        let above = try await browser.send(
            .POST, server.baseURL + "/account/tokens", headers: PeopleEndToEndTests.form + [("Cookie", cookie)],
            body: Array("csrf=\(csrf)&name=ci&scope=admin".utf8))
        #expect(above.status == 400)
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM personal_tokens") == "0\n")

        let made = try await browser.send(
            .POST, server.baseURL + "/account/tokens", headers: PeopleEndToEndTests.form + [("Cookie", cookie)],
            body: Array("csrf=\(csrf)&name=CI+upload&scope=upload%3Asymbols&scope=read&expires_days=30".utf8))
        #expect(made.status == 200)
        let shown = String(decoding: made.body, as: UTF8.self)
        let start = try #require(shown.range(of: "value=\"flp_"))
        let token = "flp_" + shown[start.upperBound...].prefix(64)
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT scopes FROM personal_tokens") == "read,upload:symbols\n")
        // It works, and the page never shows it again.
        let read = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(token)")])
        #expect(read.status == 200)
        let again = String(
            decoding: try await browser.send(
                .GET, server.baseURL + "/account", headers: [("Cookie", cookie), ("Accept", "text/html")]
            ).body, as: UTF8.self)
        #expect(again.contains("CI upload") && !again.contains(String(token.dropFirst(4))))

        let id = try PeopleEndToEndTests.sqlite(folder, "SELECT id FROM personal_tokens").trimmingCharacters(
            in: .whitespacesAndNewlines)
        let revoke = try await browser.send(
            .POST, server.baseURL + "/account/tokens/\(id)/revoke",
            headers: PeopleEndToEndTests.form + [("Cookie", cookie)], body: Array("csrf=\(csrf)".utf8))
        #expect(revoke.status == 303)
        let afterRevoke = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(token)")])
        #expect(afterRevoke.status == 401)
    }

    @Test func sentryCLIAndSymuploadUploadWithAPersonsToken() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        _ = try await ServerProcess.createProject("other", in: folder)
        _ = try await PeopleEndToEndTests.invite(folder, "mia@example.org", role: "member", project: "shop")
        _ = try await PeopleEndToEndTests.invite(folder, "vic@example.org", role: "viewer", project: "shop")
        let upload = try #require(try await Self.create(folder, "mia@example.org", ["upload:symbols"]).token)
        let reader = try #require(try await Self.create(folder, "vic@example.org", ["read"]).token)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try SentryCLIEndToEndTests.Program()

        // A read-only token cannot upload: sentry-cli fails and nothing is stored.
        let refused = try SentryCLIEndToEndTests().sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "shop", "--wait", "bin"], in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": reader])
        #expect(refused.status != 0, "\(refused.output)")
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM debug_files") == "0\n")
        // Nor into a project its person has no role in.
        let elsewhere = try SentryCLIEndToEndTests().sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "other", "--wait", "bin"], in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": upload])
        #expect(elsewhere.status != 0, "\(elsewhere.output)")
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM debug_files") == "0\n")

        let cli = try SentryCLIEndToEndTests().sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "shop", "--wait", "bin/crashy.debug"],
            in: program.folder.path, environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": upload])
        #expect(cli.status == 0, "\(cli.output)\n\(server.log.suffix(2000))")
        let symupload = URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().appendingPathComponent(
            "symupload"
        ).path
        let uploaded = try Command.run(
            symupload, [program.stripped],
            environment: ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": upload])
        #expect(uploaded.status == 0, "\(uploaded.out)\(uploaded.err)")
        // Both landed in the person's project, as its upload token would have put them.
        let files = try await http.send(
            .GET, server.baseURL + "/api/v1/debug-files", headers: [("Authorization", "Bearer \(shop.upload)")])
        let kinds = Set((files.json["files"] as? [[String: Any]] ?? []).compactMap { $0["kind"] as? String })
        #expect(kinds == ["debuginfo", "executable"], "\(files.json)")
    }
}
