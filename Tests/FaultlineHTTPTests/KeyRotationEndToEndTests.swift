import AsyncHTTPClient
import Foundation
import Testing

/// Replacing a project's keys (issue #37) against the real `faultline` binary on 127.0.0.1 and its SQLite file: a
/// viewer's and a member's posts are 403 with the credentials unchanged; an admin replaces the ingest key on the
/// settings page and both keys ingest; replaces the upload token and the old one is refused by the upload API at once;
/// a rotation with no days left cuts every old ingest key; `projects rotate-key` prints a token the running server
/// takes; the trail names who did it and from where, never a secret.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct KeyRotationEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let settings = ProjectSettingsEndToEndTests()
    let people = PeopleEndToEndTests()

    /// The `value` of the read-only input `id` on a page (the secret shown once).
    static func shown(_ html: String, id: String) -> String? {
        guard let start = html.range(of: "id=\"\(id)\""),
            let value = html[start.upperBound...].range(of: "value=\""),
            let end = html[value.upperBound...].firstIndex(of: "\"")
        else { return nil }
        return String(html[value.upperBound..<end])
    }

    /// Asks the upload API what is missing, as `symupload` does first; the status.
    func askMissing(_ server: ServerProcess, token: String) async throws -> Int {
        try await http.send(
            .POST, server.baseURL + "/api/v1/debug-files/missing",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
            body: Array(#"{"files":[]}"#.utf8)
        ).status
    }

    @Test func adminsRotateKeysOthersCannotAndTheOldKeysEnd() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        var invites: [String: String] = [:]
        for (login, role) in [
            ("vic@example.org", "viewer"), ("mia@example.org", "member"), ("ann@example.org", "admin"),
        ] {
            invites[login] = try await PeopleEndToEndTests.invite(folder, login, role: role, project: "shop")
        }
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let vic = try await people.accept(server, try #require(invites["vic@example.org"]), name: "Vic")
        let mia = try await people.accept(server, try #require(invites["mia@example.org"]), name: "Mia")
        let ann = try await people.accept(server, try #require(invites["ann@example.org"]), name: "Ann")
        let credentials = { try PeopleEndToEndTests.sqlite(folder, "SELECT * FROM credentials ORDER BY hash;") }

        // A viewer and a member see no rotation form; their posts with a valid CSRF token are 403, nothing changes.
        let before = try credentials()
        for cookie in [vic, mia] {
            let page = try await settings.get(server, "/shop/settings", cookie)
            #expect(page.status == 200 && !page.html.contains("settings/keys/"))
            let token = try #require(try await people.csrf(server, page: "/account", cookie: cookie).token)
            for (path, body) in [
                ("/shop/settings/keys/ingest", "keep_old_days=7"), ("/shop/settings/keys/upload", "confirm=1"),
            ] {
                #expect(try await settings.post(server, path, cookie, "csrf=\(token)&\(body)").status == 403, "\(path)")
            }
        }
        #expect(try credentials() == before, "a refused post changes no key")

        // The admin replaces the ingest key, the old one kept for 7 days: the new key is shown once with its DSN.
        let token = try #require(try await people.csrf(server, page: "/shop/settings", cookie: ann).token)
        let unconfirmed = try await settings.post(server, "/shop/settings/keys/upload", ann, "csrf=\(token)")
        #expect(unconfirmed.status == 400, "an unticked box changes nothing")
        #expect(try credentials() == before)
        let rotated = try await settings.post(
            server, "/shop/settings/keys/ingest", ann, "csrf=\(token)&keep_old_days=7")
        let rotatedPage = String(decoding: rotated.body, as: UTF8.self)
        #expect(rotated.status == 200)
        let newKey = try #require(Self.shown(rotatedPage, id: "new-ingest-key"), "\(rotatedPage.prefix(2000))")
        #expect(newKey != shop.ingest && newKey.count == 32)
        #expect(Self.shown(rotatedPage, id: "new-dsn")?.hasPrefix("http://\(newKey)@127.0.0.1:") == true)
        #expect(Self.shown(rotatedPage, id: "new-dsn")?.hasSuffix("/\(shop.id)") == true)
        #expect(rotatedPage.contains("The old key is accepted until <time datetime="))

        // Both keys ingest.
        for (n, key) in [(1, shop.ingest), (2, newKey)] {
            let answer = try await http.postReports(server.baseURL, key: key, SecurityEndToEndTests.hostileCrash(n))
            #expect(answer.status == 202, "key \(n)")
        }

        // The admin replaces the upload token: the old one is refused by the upload API at once, the new one taken.
        #expect(try await askMissing(server, token: shop.upload) == 200)
        let uploadAnswer = try await settings.post(
            server, "/shop/settings/keys/upload", ann, "csrf=\(token)&confirm=1")
        let uploadPage = String(decoding: uploadAnswer.body, as: UTF8.self)
        let newUpload = try #require(Self.shown(uploadPage, id: "new-upload-token"), "\(uploadPage.prefix(2000))")
        #expect(newUpload.hasPrefix("flu_") && newUpload != shop.upload)
        #expect(try await askMissing(server, token: shop.upload) == 401)
        #expect(try await askMissing(server, token: newUpload) == 200)

        // A rotation with no days left cuts every earlier ingest key at once.
        let cut = try await settings.post(server, "/shop/settings/keys/ingest", ann, "csrf=\(token)&keep_old_days=0")
        let cutPage = String(decoding: cut.body, as: UTF8.self)
        let newest = try #require(Self.shown(cutPage, id: "new-ingest-key"))
        #expect(cutPage.contains("The old key is refused from now on."))
        for (n, key, status) in [(3, shop.ingest, 401), (4, newKey, 401), (5, newest, 202)] {
            let answer = try await http.postReports(server.baseURL, key: key, SecurityEndToEndTests.hostileCrash(n))
            #expect(answer.status == status, "key \(n)")
        }
        let bad = try await settings.post(server, "/shop/settings/keys/ingest", ann, "csrf=\(token)&keep_old_days=91")
        #expect(bad.status == 400)

        // The CLI on the same data folder: a new upload token the running server takes (never looked up before).
        let cli = try await ServerProcess.run([
            "projects", "rotate-key", "shop", "--upload", "--json", "--data", folder,
        ])
        #expect(cli.status == 0, "\(cli)")
        let json = try JSONSerialization.jsonObject(with: Data(cli.out.utf8)) as? [String: Any]
        let cliToken = try #require(json?["upload_token"] as? String)
        #expect(json?["old_accepted_until"] == nil && json?["ingest_key"] == nil)
        #expect(try await askMissing(server, token: cliToken) == 200)

        // The trail: who and from where, never a secret.
        let trail = try PeopleEndToEndTests.sqlite(
            folder,
            "SELECT kind, actor_kind, coalesce(actor_name, ''), coalesce(address, ''), coalesce(after_value, '') "
                + "FROM audit_log WHERE kind LIKE 'project.%rotated' ORDER BY id;")
        let rows = trail.split(separator: "\n").map(String.init)
        #expect(rows.count == 4, "\(trail)")
        #expect(
            rows.first?.hasPrefix("project.ingest_key_rotated|person|Ann|127.0.0.1|old key accepted until ") == true)
        #expect(rows.dropFirst().first == "project.upload_token_rotated|person|Ann|127.0.0.1|old key refused at once")
        #expect(rows.last == "project.upload_token_rotated|cli|||old key refused at once", "\(trail)")
        let everything = try PeopleEndToEndTests.sqlite(folder, "SELECT * FROM audit_log;")
        for secret in [newKey, newUpload, newest, cliToken] { #expect(!everything.contains(secret)) }
    }
}
