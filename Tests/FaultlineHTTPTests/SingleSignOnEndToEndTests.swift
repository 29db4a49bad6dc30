import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Issue #37's single sign-on against a real OpenID provider on 127.0.0.1 (Python/oidc_provider.py, built from
/// authlib, with its own login page) and the real `faultline serve`: a person signs in through the provider's page in
/// headless Chromium and lands on the dashboard signed in, with the account the role rule gives; then each forgery or
/// misuse is tried through the same flow over HTTP and refused, with no session made.
@Suite(.serialized, .tags(.endToEnd, .chromium, .oidcProvider), .provisioned) struct SingleSignOnEndToEndTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let secret = "s3cret-of-the-faultline-client"
    static let passwords = ["ada": "analytical-engine", "bob": "difference-engine", "eve": "eavesdropper-01"]

    /// The provider: `python3 oidc_provider.py`, its issuer URL once it listens.
    final class Provider {
        let process = ChildProcess()
        let output: String
        var issuer = ""

        init() async throws {
            output = NSTemporaryDirectory() + "oidc-provider-\(UUID().uuidString).txt"
            FileManager.default.createFile(atPath: output, contents: nil)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Python/oidc_provider.py").path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, "--client-id", "faultline", "--client-secret", secret]
            process.standardOutput = FileHandle(forWritingAtPath: output)
            process.standardError = FileHandle.nullDevice
            try process.run()
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline, process.isRunning {
                let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                    issuer = "http://127.0.0.1:" + line.dropFirst("listening on ".count)
                    return
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            process.terminate()
            throw TestFailure("the OpenID provider did not start")
        }

        func configure(_ http: HTTP, _ json: String) async throws {
            let answer = try await http.send(
                .POST, issuer + "/test/config", headers: [("Content-Type", "application/json")], body: Array(json.utf8))
            #expect(answer.status == 204)
        }

        func stop() {
            if process.isRunning { process.terminate() }
            try? FileManager.default.removeItem(atPath: output)
        }
    }

    /// A server with single sign-on through `provider`: new accounts of example.com become members of `shop`; Bob is
    /// already a viewer (invited, no password).
    func startServer(_ provider: Provider) async throws -> ServerProcess {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        _ = try await PeopleEndToEndTests.invite(folder, "bob@example.com", role: "viewer", project: "shop")
        let server = try await ServerProcess(
            folder: folder,
            arguments: [
                "--oidc-issuer", provider.issuer, "--oidc-client-id", "faultline", "--oidc-name", "Test IdP",
                "--oidc-allow-signup", "--oidc-role", "shop:member:email_domain=example.com",
            ],
            environment: ["FAULTLINE_OIDC_CLIENT_SECRET": Self.secret])
        try await provider.configure(browser, #"{"redirect_uri": "\#(server.baseURL)/login/sso/callback"}"#)
        return server
    }

    /// One pass through the flow as a browser makes it, up to the provider's redirect back.
    struct Flow {
        /// The callback URL the provider sent the browser to (with `code` and `state`).
        var callback: String
        /// This browser's login cookie (`faultline_sso=…`).
        var cookie: String
    }

    /// Starts a login at Faultline and signs in at the provider's login form as `user`.
    func signIn(_ server: ServerProcess, _ provider: Provider, as user: String) async throws -> Flow {
        let start = try await browser.send(.GET, server.baseURL + "/login/sso?next=%2Fshop%2F")
        #expect(start.status == 303)
        let location = try #require(start.headers["Location"].first)
        #expect(location.hasPrefix(provider.issuer + "/authorize?"))
        let cookie = try #require(
            start.headers["Set-Cookie"].first { $0.hasPrefix("faultline_sso=") }?.split(separator: ";").first
                .map(String.init))
        let page = try await browser.send(.GET, location)
        #expect(String(decoding: page.body, as: UTF8.self).contains("id=\"username\""), "the provider's login page")
        var fields = URLComponents(string: location)?.queryItems ?? []
        fields += [
            URLQueryItem(name: "username", value: user), URLQueryItem(name: "password", value: Self.passwords[user]),
        ]
        var form = URLComponents()
        form.queryItems = fields
        let signedIn = try await browser.send(
            .POST, provider.issuer + "/authorize", headers: PeopleEndToEndTests.form,
            body: Array((form.percentEncodedQuery ?? "").replacingOccurrences(of: "+", with: "%2B").utf8))
        #expect(signedIn.status == 302)
        return Flow(callback: try #require(signedIn.headers["Location"].first), cookie: cookie)
    }

    /// The callback as the browser sends it (with its login cookie).
    func finish(_ flow: Flow, url: String? = nil) async throws -> HTTP.Answer {
        try await browser.send(.GET, url ?? flow.callback, headers: [("Cookie", flow.cookie)])
    }

    static func session(_ answer: HTTP.Answer) -> String? {
        answer.headers["Set-Cookie"].first {
            $0.hasPrefix("faultline_session=") && !$0.hasPrefix("faultline_session=;")
        }?
        .split(separator: ";").first.map(String.init)
    }

    @Test func aPersonSignsInThroughTheProvidersPageInChromium() async throws {
        let provider = try await Provider()
        defer { provider.stop() }
        let server = try await startServer(provider)
        defer { server.cleanUp() }

        // When Ada, who has no account, signs in through "Sign in with Test IdP" and the provider's own page…
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Python/sso_browser.py").path
        let run = try Command.run(
            "python3",
            [
                script, "--start", server.baseURL + "/login?next=%2Fshop%2Fissues.html", "--link",
                "Sign in with Test IdP",
                "--user", "ada", "--password", Self.passwords["ada"] ?? "",
            ])
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let result = try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any] ?? [:]

        // Then she passed the provider's page and landed signed in on the page she asked for…
        let steps = result["steps"] as? [String] ?? []
        #expect(steps.count == 2 && steps[1].hasPrefix(provider.issuer + "/authorize"), "\(steps)")
        #expect(result["url"] as? String == server.baseURL + "/shop/issues.html", "\(result)")
        #expect((result["title"] as? String).map { !$0.hasPrefix("Sign in") } == true, "\(result)")
        #expect((result["cookies"] as? [String])?.contains("faultline_session") == true)
        // …as the member of shop the rule made her, with one session.
        let people = try PeopleEndToEndTests.sqlite(
            server.folder,
            """
            SELECT p.login, p.name, m.role FROM people p JOIN memberships m ON m.person_id = p.id
            WHERE p.login = 'ada@example.com';
            SELECT count(*) FROM admin_sessions s JOIN people p ON p.id = s.person_id WHERE p.login = 'ada@example.com';
            """)
        #expect(people == "ada@example.com|Ada Lovelace|member\n1\n")
    }

    @Test func forgedTokensAndMisusedCallbacksAreRefused() async throws {
        let provider = try await Provider()
        defer { provider.stop() }
        let server = try await startServer(provider)
        defer { server.cleanUp() }

        // An ES256 token signs Bob in: the invited viewer is linked by his verified e-mail, his role unchanged.
        try await provider.configure(browser, #"{"mode": "es256"}"#)
        let bob = try await finish(try await signIn(server, provider, as: "bob"))
        #expect(bob.status == 303)
        #expect(bob.headers["Location"].first == "/shop/")
        let bobSession = try #require(Self.session(bob))
        #expect(
            try await browser.send(.GET, server.baseURL + "/shop/", headers: [("Cookie", bobSession)]).status != 303)

        // Each forgery the provider can be made to send is refused, with the reason on the login page.
        let forgeries = [
            ("tamper", "signature does not verify"), ("wrong_nonce", "nonce"), ("expired", "expired"),
            ("foreign_key", "signature does not verify"), ("wrong_audience", "not for this client"),
        ]
        for (mode, reason) in forgeries {
            try await provider.configure(browser, #"{"mode": "\#(mode)"}"#)
            let answer = try await finish(try await signIn(server, provider, as: "ada"))
            #expect(answer.status == 401, "\(mode)")
            #expect(Self.session(answer) == nil, "\(mode) made a session")
            #expect(String(decoding: answer.body, as: UTF8.self).contains(reason), "\(mode): \(reason)")
        }
        try await provider.configure(browser, #"{"mode": "rs256"}"#)

        // A wrong state is refused (login CSRF: a callback that did not start in this browser).
        let flow = try await signIn(server, provider, as: "ada")
        let wrongState = try await finish(
            flow, url: flow.callback.replacingOccurrences(of: "state=", with: "state=0"))
        #expect(wrongState.status == 401)
        #expect(String(decoding: wrongState.body, as: UTF8.self).contains("did not start in this browser"))
        // The login cookie is sealed: the browser cannot read its state (which the callback URL shows), and a cookie
        // changed by one character, or one this server did not seal (the unsealed form with this callback's state),
        // is refused with its own reason, before the state is spent.
        let flowState = try #require(
            URLComponents(string: flow.callback)?.queryItems?.first { $0.name == "state" }?.value)
        #expect(flow.cookie.hasPrefix("faultline_sso=v2.") && !flow.cookie.contains(flowState), "\(flow.cookie)")
        var flipped = Array(flow.cookie.utf8)
        flipped[flipped.count - 10] =
            flipped[flipped.count - 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let hex = String(repeating: "ab", count: 32)
        for forged in [String(decoding: flipped, as: UTF8.self), "faultline_sso=v1.\(flowState).\(hex).\(hex).Lw"] {
            let refused = try await finish(Flow(callback: flow.callback, cookie: forged))
            #expect(refused.status == 401 && Self.session(refused) == nil, "\(forged)")
            #expect(
                String(decoding: refused.body, as: UTF8.self).contains("not made by this server, or was changed"),
                "\(forged)")
        }
        // The right one signs in once; replaying the callback is refused here…
        let first = try await finish(flow)
        #expect(first.status == 303 && Self.session(first) != nil)
        let replay = try await finish(flow)
        #expect(replay.status == 401 && Self.session(replay) == nil)
        #expect(String(decoding: replay.body, as: UTF8.self).contains("already used"))
        // …and the spent code under a fresh login's state is refused by the provider's token endpoint.
        let fresh = try await signIn(server, provider, as: "ada")
        let freshState = try #require(
            URLComponents(string: fresh.callback)?.queryItems?.first { $0.name == "state" }?.value)
        let oldCode = try #require(URLComponents(string: flow.callback)?.queryItems?.first { $0.name == "code" }?.value)
        let reused = try await finish(
            fresh, url: server.baseURL + "/login/sso/callback?code=\(oldCode)&state=\(freshState)")
        #expect(reused.status == 401 && Self.session(reused) == nil)
        #expect(String(decoding: reused.body, as: UTF8.self).contains("refused the authorization code"))

        // Someone the rules give no role gets no account.
        let eve = try await finish(try await signIn(server, provider, as: "eve"))
        #expect(eve.status == 403 && Self.session(eve) == nil)

        // The database holds Bob (still a viewer) and Ada (made once, a member), and exactly the two sessions made.
        let state = try PeopleEndToEndTests.sqlite(
            server.folder,
            """
            SELECT p.login, m.role FROM people p JOIN memberships m ON m.person_id = p.id ORDER BY p.login;
            SELECT count(*) FROM admin_sessions;
            """)
        #expect(state == "ada@example.com|member\nbob@example.com|viewer\n2\n")

        // Removing Bob ends his single sign-on session at once.
        let removed = try await ServerProcess.run(["users", "remove", "bob@example.com", "--data", server.folder])
        #expect(removed.status == 0, "\(removed.err)")
        let after = try await browser.send(
            .GET, server.baseURL + "/shop/", headers: [("Cookie", bobSession), ("Accept", "text/html")])
        #expect(after.status == 303)
        #expect(after.headers["Location"].first?.hasPrefix("/login") == true)
    }

    /// The config file and the secret's file work as the flags do; without a secret the server refuses to start and
    /// says where the secret goes (never a flag).
    @Test func theConfigFileAndTheSecretFileConfigureIt() async throws {
        let folder = ServerProcess.newFolder()
        let files = try TempFolder("oidc-config")
        let secretFile = files.file("secret")
        try "\(Self.secret)\n".write(toFile: secretFile, atomically: true, encoding: .utf8)
        let config = files.file("oidc.json")
        try
            #"{"issuer": "https://keycloak.example.com/realms/eng", "client_id": "faultline", "name": "Keycloak", "client_secret_file": "\#(secretFile)", "allow_signup": true, "roles": ["shop:viewer:email_domain=example.com"]}"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let server = try await ServerProcess(folder: folder, arguments: ["--oidc-config", config])
        defer { server.cleanUp() }
        let page = try await browser.send(.GET, server.baseURL + "/login?next=%2Fshop%2F")
        #expect(String(decoding: page.body, as: UTF8.self).contains("Sign in with Keycloak"))

        let refused = try await ServerProcess.run(
            [
                "serve", "--data", folder + "-2", "--port", "0", "--oidc-issuer", "https://id.example.com",
                "--oidc-client-id", "faultline",
            ])
        #expect(refused.status != 0)
        #expect(refused.err.contains("FAULTLINE_OIDC_CLIENT_SECRET"), "\(refused.err)")
        let badRule = try await ServerProcess.run(
            ["serve", "--data", folder + "-2", "--port", "0", "--oidc-config", config, "--oidc-role", "shop:owner:*"])
        #expect(badRule.status != 0 && badRule.err.contains("viewer, member or admin"), "\(badRule.err)")
    }
}
