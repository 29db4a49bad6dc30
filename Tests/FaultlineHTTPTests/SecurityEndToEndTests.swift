import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #9's dashboard and alert findings, reproduced against the real `faultline` binary on 127.0.0.1:
/// the auth bypass by slug, the session cookie and logout, the login rate limit, protocol-relative redirects,
/// security headers, Slack markup injection through alerts, and webhook SSRF.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SecurityEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A client that shows redirects instead of following them (one for the suite, like `HTTPClient.shared`).
    static let noRedirects: HTTPClient = {
        var config = HTTPClient.Configuration()
        config.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }()
    let browser = HTTP(client: Self.noRedirects)

    static func adminToken(_ folder: String) async throws -> String {
        try await ServerProcess.run(["admin-token", "--data", folder]).out.trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    static let form = [("Content-Type", "application/x-www-form-urlencoded")]

    @Test func projectsSluggedLikeOpenRoutesKeepTheirDashboardPrivate() async throws {
        let folder = ServerProcess.newFolder()
        // Slugs that start like an open route are fine as slugs; the routes' own names are refused.
        let slugs = ["metrics-app", "login-svc", "healthzcheck", "logoutx", "apis", "buildids", "beta"]
        for slug in slugs { _ = try await ServerProcess.createProject(slug, in: folder) }
        for reserved in ["api", "buildid", "metrics", "healthz", "login", "logout"] {
            let refused = try await ServerProcess.run(["projects", "create", reserved, "--data", folder])
            #expect(refused.status != 0, "\(reserved) was accepted")
            #expect(refused.err.contains("reserved"), "\(reserved): \(refused.err)")
        }
        let admin = try await Self.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        #expect(
            try await eventually {
                slugs.allSatisfy { FileManager.default.fileExists(atPath: folder + "/site/\($0)/index.html") }
            })

        let basic = "Basic " + Data("me:\(admin)".utf8).base64EncodedString()
        for slug in slugs {
            // Without credentials: 401 for scripts, a redirect to the login form for browsers, never the page.
            let script = try await browser.send(.GET, server.baseURL + "/\(slug)/index.html")
            #expect(script.status == 401, "\(slug): \(script.status)")
            let page = try await browser.send(.GET, server.baseURL + "/\(slug)/", headers: [("Accept", "text/html")])
            #expect(page.status == 303, "\(slug): \(page.status)")
            #expect(page.headers["Location"].first == "/login?next=/\(slug)/")
            let allowed = try await browser.send(
                .GET, server.baseURL + "/\(slug)/index.html", headers: [("Authorization", basic)])
            #expect(allowed.status == 200, "\(slug) with the admin token: \(allowed.status)")
        }
        // The open routes themselves still answer without the admin token.
        #expect(try await browser.send(.GET, server.baseURL + "/healthz").status == 200)
        #expect(try await browser.send(.GET, server.baseURL + "/metrics").status == 200)
        #expect(try await browser.send(.GET, server.baseURL + "/login").status == 200)

        // `GET //beta` (a folder) must not answer `Location: //beta/`, which a browser reads as the host "beta".
        for path in ["//beta", "//beta/", "///beta", "/%2F%2Fbeta", "/%2F/beta"] {
            let answer = try await browser.send(.GET, server.baseURL + path, headers: [("Authorization", basic)])
            for location in answer.headers["Location"] {
                #expect(
                    location.hasPrefix("/") && !location.hasPrefix("//") && !location.contains("\\"),
                    "\(path) → \(location)")
            }
        }
        let collapsed = try await browser.send(.GET, server.baseURL + "//beta", headers: [("Authorization", basic)])
        #expect(collapsed.status == 301)
        #expect(collapsed.headers["Location"].first == "/beta")

        // Dashboard pages carry the security headers.
        let page = try await browser.send(
            .GET, server.baseURL + "/beta/index.html", headers: [("Authorization", basic)])
        #expect(page.status == 200)
        let csp = page.headers["Content-Security-Policy"].first ?? ""
        #expect(
            csp.contains("default-src 'none'") && csp.contains("style-src 'self'")
                && csp.contains("frame-ancestors 'none'"))
        #expect(page.headers["X-Content-Type-Options"].first == "nosniff")
        #expect(page.headers["Referrer-Policy"].first == "same-origin")
        #expect(page.headers["X-Frame-Options"].first == "DENY")
        #expect(page.headers["Cache-Control"].first == "private, no-cache")
        let loginPage = try await browser.send(.GET, server.baseURL + "/login")
        #expect(loginPage.headers["Content-Security-Policy"].first?.contains("form-action 'self'") == true)
        #expect(loginPage.headers["Cache-Control"].first == "no-store")
        // The login page's stylesheet loads without a session.
        #expect(try await browser.send(.GET, server.baseURL + "/style.css").status == 200)
    }

    @Test func theCookieIsASessionThatLogoutRevokesAndLoginIsRateLimited() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await Self.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site/shop/index.html") })

        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form, body: Array("token=\(admin)&next=%2Fshop%2F".utf8))
        #expect(login.status == 303)
        #expect(login.headers["Location"].first == "/shop/")
        let setCookie = try #require(login.headers["Set-Cookie"].first)
        #expect(!setCookie.contains(admin), "the cookie holds the admin token")
        for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
            #expect(setCookie.contains(attribute), "\(setCookie)")
        }
        #expect(!setCookie.contains("Secure"), "Secure over plain http would drop the cookie")
        let cookie = try #require(setCookie.split(separator: ";").first.map(String.init))
        let page = try await browser.send(.GET, server.baseURL + "/shop/index.html", headers: [("Cookie", cookie)])
        #expect(page.status == 200)
        // Every page links to the account page and has a sign-out button; a page rendered once for everyone has no
        // session's token in it and stays cacheable.
        let html = String(decoding: page.body, as: UTF8.self)
        #expect(html.contains("<a href=\"../account\">Your account</a>"), "\(html.prefix(2000))")
        #expect(html.contains("<form class=\"nav-signout\" method=\"post\" action=\"../logout\"><button"))
        #expect(!page.headers["Cache-Control"].contains("no-store"))

        // Sign-out without the session's CSRF token (that button, or another site's post) ends nothing: it answers a
        // page that asks once more, with the token.
        let unconfirmed = try await browser.send(.POST, server.baseURL + "/logout", headers: [("Cookie", cookie)])
        #expect(unconfirmed.status == 200)
        #expect(unconfirmed.headers["Set-Cookie"].isEmpty)
        let csrf = try #require(DashboardActionsEndToEndTests.csrf(String(decoding: unconfirmed.body, as: UTF8.self)))
        #expect(
            try await browser.send(.GET, server.baseURL + "/shop/index.html", headers: [("Cookie", cookie)]).status
                == 200)
        #expect(
            try await browser.send(
                .POST, server.baseURL + "/logout", headers: Self.form + [("Cookie", cookie)],
                body: Array("csrf=0\(csrf.dropFirst())".utf8)
            ).status == 200)

        // Logout with the token ends the session on the server: the old cookie no longer opens anything.
        let logout = try await browser.send(
            .POST, server.baseURL + "/logout", headers: Self.form + [("Cookie", cookie)],
            body: Array("csrf=\(csrf)".utf8))
        #expect(logout.status == 303)
        #expect(logout.headers["Set-Cookie"].contains { $0.hasPrefix("faultline_session=;") })
        #expect(
            try await browser.send(.GET, server.baseURL + "/shop/index.html", headers: [("Cookie", cookie)]).status
                == 401)
        let asBrowser = try await browser.send(
            .GET, server.baseURL + "/shop/", headers: [("Cookie", cookie), ("Accept", "text/html")])
        #expect(asBrowser.status == 303)
        #expect(asBrowser.headers["Location"].first?.hasPrefix("/login") == true)

        // Ten wrong tokens from one address, then even the right one is refused for a while.
        for attempt in 1...10 {
            let wrong = try await browser.send(
                .POST, server.baseURL + "/login", headers: Self.form, body: Array("token=guess\(attempt)".utf8))
            #expect(wrong.status == 401)
        }
        let limited = try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form, body: Array("token=\(admin)".utf8))
        #expect(limited.status == 429)
        let retryAfter = try #require(limited.headers["Retry-After"].first.flatMap { Int($0) })
        #expect((1...60).contains(retryAfter))
        #expect(limited.headers["Set-Cookie"].isEmpty)
    }

    /// The report's error type and message, as an attacker with the (public) ingest key would send them.
    static func hostileCrash(_ n: Int) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(InsightsEndToEndTests.now)","user_id":"u1",
         "app":{"version":"1.0 <!here>","build":"1"},
         "error":{"type":"<!channel>","message":"<https://evil.example/phish|Reset your password>"},
         "threads":[{"crashed":true,"frames":[{"function":"main","file":"src/main.c","line":3}]}]}
        """
    }

    @Test func slackMarkupFromReportsReachesTheWebhookEscaped() async throws {
        let receiver = try await WebhookReceiver()
        defer { receiver.stop() }
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("chat", in: folder)
        let admin = try await Self.adminToken(folder)
        let server = try await ServerProcess(
            folder: folder, arguments: ["--allow-private-webhooks"], environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        let configured = try await http.send(
            .PUT, server.baseURL + "/api/v1/alert-settings?project=chat",
            headers: [("Authorization", "Bearer \(admin)")],
            body: Array(#"{"webhook_url":"\#(receiver.url)"}"#.utf8))
        #expect(configured.status == 200, "\(String(decoding: configured.body, as: UTF8.self))")
        #expect(try await http.postReports(server.baseURL, key: project.ingest, Self.hostileCrash(1)).status == 202)
        #expect(try await eventually { !receiver.received.isEmpty })

        let raw = try #require(receiver.state.bodies.withLock { $0.first })
        let body = try #require(try JSONSerialization.jsonObject(with: Data(raw)) as? [String: Any])
        let text = try #require(body["text"] as? String)
        #expect(text.contains("&lt;!channel&gt;"), "\(text)")
        #expect(text.contains("&lt;https://evil.example/phish|Reset your password&gt;"), "\(text)")
        #expect(!text.contains("<!channel>") && !text.contains("<https://evil.example"), "\(text)")
        // The only `<…>` left in the text is the server's own link to the issue.
        let openers = text.filter { $0 == "<" }.count
        #expect(openers == ((body["alert"] as? [String: Any])?["url"] == nil ? 0 : 1), "\(text)")
        // The raw bytes hold no markup at all; the facts object keeps the values as reported, JSON-escaped.
        #expect(!raw.contains(UInt8(ascii: "<")) && !raw.contains(UInt8(ascii: ">")))
        let facts = try #require(body["alert"] as? [String: Any])
        #expect((facts["title"] as? String)?.contains("<!channel>") == true)
    }

    @Test func webhookTargetsOnInternalAddressesAreRefused() async throws {
        let receiver = try await WebhookReceiver()
        defer { receiver.stop() }
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("probe", in: folder)
        let admin = try await Self.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let settings = server.baseURL + "/api/v1/alert-settings"

        // CI's upload token may read the settings but not change them.
        #expect(
            try await http.send(.GET, settings, headers: [("Authorization", "Bearer \(project.upload)")]).status == 200)
        let byUpload = try await http.send(
            .PUT, settings, headers: [("Authorization", "Bearer \(project.upload)")],
            body: Array(#"{"webhook_url":"http://127.0.0.1:\#(server.port)/internal-admin"}"#.utf8))
        #expect(byUpload.status == 403)
        #expect(byUpload.json["error"] as? String == "forbidden")

        // The admin token may, but not to internal addresses (without --allow-private-webhooks).
        for url in [
            "http://127.0.0.1:\(server.port)/internal-admin", "http://localhost:9/x", "http://[::1]:9/x",
            "http://10.1.2.3/x",
            "http://169.254.169.254/latest/meta-data/", "http://100.64.0.1/", "http://192.168.0.1/",
            "http://[fd00::1]/",
            "http://[::ffff:127.0.0.1]/", "http://0.0.0.0:9/", "http://2130706433/",
        ] {
            let answer = try await http.send(
                .PUT, settings + "?project=probe", headers: [("Authorization", "Bearer \(admin)")],
                body: Array(#"{"webhook_url":"\#(url)"}"#.utf8))
            #expect(answer.status == 400, "\(url) → \(answer.status)")
            #expect(answer.json["field"] as? String == "webhook_url", "\(url)")
            #expect((answer.json["message"] as? String)?.contains("internal address") == true, "\(url): \(answer.json)")
        }
        for url in ["ftp://example.com/x", "http://user:pw@example.com/", "javascript:alert(1)"] {
            let answer = try await http.send(
                .PUT, settings + "?project=probe", headers: [("Authorization", "Bearer \(admin)")],
                body: Array(#"{"webhook_url":"\#(url)"}"#.utf8))
            #expect(answer.status == 400, "\(url) → \(answer.status)")
        }
        let unchanged = try await http.send(
            .GET, settings + "?project=probe", headers: [("Authorization", "Bearer \(admin)")])
        let kept = try #require(unchanged.json["settings"] as? [String: Any])
        #expect(kept["webhook_url"] is NSNull)

        // The CLI applies the same rule…
        let cli = try await ServerProcess.run([
            "alerts", "configure", "probe", "--webhook", receiver.url, "--data", folder,
        ])
        #expect(cli.status != 0)
        #expect(cli.err.contains("internal address"), "\(cli.err)")
        // …and when the operator's CLI allows it but the server does not, delivery refuses it too: nothing is sent,
        // and the delivery shows a fixed class, not what the target said.
        let allowed = try await ServerProcess.run(
            ["alerts", "configure", "probe", "--webhook", receiver.url, "--allow-private-webhooks", "--data", folder])
        #expect(allowed.status == 0, "\(allowed.err)")
        #expect(try await http.postReports(server.baseURL, key: project.ingest, Self.hostileCrash(2)).status == 202)
        var alert: [String: Any] = [:]
        #expect(
            try await eventually {
                let alerts = try await http.send(
                    .GET, server.baseURL + "/api/v1/alerts", headers: [("Authorization", "Bearer \(project.upload)")])
                alert = (alerts.json["alerts"] as? [[String: Any]])?.first ?? [:]
                return alert["delivery"] as? String == "failed"
            }, "\(alert)")
        #expect(alert["delivery_error"] as? String == "refused_target")
        #expect(alert["delivery_attempts"] as? Int == 1)
        #expect(receiver.received.isEmpty)
    }
}
