import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Pipeline
import Synchronization
import Testing

/// A clock the test moves by hand.
final class SteppingClock: WallClock {
    let date: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { date = Mutex(start) }
    func now() -> Date { date.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// The dashboard's login sessions, login rate limit, redirects and headers, through the real router and a real
/// SQLite file (the end-to-end versions against the binary are in `SecurityEndToEndTests`).
@Suite struct DashboardSecurityRouteTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]

    static func cookie(_ response: TestResponse) -> String? {
        response.headers[values: .setCookie].first?.split(separator: ";").first.map(String.init)
    }

    @Test func sessionCookieIsRandomSecureOverHTTPSAndLogoutRevokesIt() async throws {
        let app = try await TestApp(publicURL: "https://faultline.example")
        try await app.test { client in
            let login = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: ByteBuffer(string: "token=\(app.adminToken)&next=%2Fnowhere"))
            #expect(login.status == .seeOther)
            #expect(login.headers[.location] == "/nowhere")
            let setCookie = try #require(login.headers[values: .setCookie].first)
            #expect(setCookie.hasPrefix("faultline_session="))
            for attribute in ["HttpOnly", "SameSite=Lax", "Path=/", "Secure"] {
                #expect(setCookie.contains(attribute), "\(setCookie) lacks \(attribute)")
            }
            #expect(!setCookie.contains(app.adminToken))
            // The earlier cookie, which held the token itself, is cleared.
            #expect(
                login.headers[values: .setCookie].contains {
                    $0.hasPrefix("faultline_admin=;") && $0.contains("Max-Age=0")
                })
            let cookie = try #require(Self.cookie(login))

            // The session opens the dashboard (404: authenticated, nothing there), until logout revokes it server-side.
            let inside = try await client.execute(uri: "/nowhere", method: .get, headers: [.cookie: cookie])
            #expect(inside.status == .notFound)
            // Without the session's CSRF token, the page that asks once more (with it); the session stays.
            let asked = try await client.execute(uri: "/logout", method: .post, headers: [.cookie: cookie])
            #expect(asked.status == .ok)
            let csrf = try #require(DashboardActionsEndToEndTests.csrf(String(buffer: asked.body)))
            #expect(
                try await client.execute(uri: "/nowhere", method: .get, headers: [.cookie: cookie]).status == .notFound)
            var headers = Self.form
            headers[.cookie] = cookie
            let logout = try await client.execute(
                uri: "/logout", method: .post, headers: headers, body: ByteBuffer(string: "csrf=\(csrf)"))
            #expect(logout.status == .seeOther)
            let replayed = try await client.execute(uri: "/nowhere", method: .get, headers: [.cookie: cookie])
            #expect(replayed.status == .unauthorized)
            // The admin token itself is not a cookie value.
            let tokenCookie = try await client.execute(
                uri: "/nowhere", method: .get, headers: [.cookie: "faultline_session=\(app.adminToken)"])
            #expect(tokenCookie.status == .unauthorized)
        }
    }

    @Test func replacingTheAdminTokenEndsSessions() async throws {
        let app = try await TestApp()
        try await app.test { client in
            let login = try await client.execute(
                uri: "/login", method: .post, headers: Self.form, body: ByteBuffer(string: "token=\(app.adminToken)"))
            let cookie = try #require(Self.cookie(login))
            #expect(
                try await client.execute(uri: "/nowhere", method: .get, headers: [.cookie: cookie]).status == .notFound)
            _ = try await app.root.projects.rotateAdminToken()
            #expect(
                try await client.execute(uri: "/nowhere", method: .get, headers: [.cookie: cookie]).status
                    == .unauthorized)
        }
    }

    @Test func failedLoginsAreLimitedPerAddressByTheInjectedClock() async throws {
        let clock = SteppingClock()
        let app = try await TestApp(clock: clock)
        try await app.test { client in
            for attempt in 1...10 {
                let wrong = try await client.execute(
                    uri: "/login", method: .post, headers: Self.form, body: ByteBuffer(string: "token=guess\(attempt)"))
                #expect(wrong.status == .unauthorized)
                clock.advance(1)
            }
            // The 11th attempt within the minute is refused, even with the right token, and says when to come back:
            // the first failure (at +0 s) ages out at +60 s, and it is +10 s now.
            let limited = try await client.execute(
                uri: "/login", method: .post, headers: Self.form, body: ByteBuffer(string: "token=\(app.adminToken)"))
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "50")
            #expect(Self.cookie(limited) == nil)
            // Basic auth on the dashboard shares the limit.
            let basic = "Basic " + Data("x:\(app.adminToken)".utf8).base64EncodedString()
            #expect(
                try await client.execute(uri: "/nowhere", method: .get, headers: [.authorization: "Basic eDp5"]).status
                    == .tooManyRequests)
            clock.advance(51)
            // Once the failures age out, the right token logs in again.
            let later = try await client.execute(
                uri: "/login", method: .post, headers: Self.form, body: ByteBuffer(string: "token=\(app.adminToken)"))
            #expect(later.status == .seeOther)
            #expect(
                try await client.execute(uri: "/nowhere", method: .get, headers: [.authorization: basic]).status
                    == .notFound)
        }
    }

    @Test func wrongBasicAuthOnTheDashboardCountsTowardTheLimit() async throws {
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_800_000_000)))
        try await app.test { client in
            let wrong = "Basic " + Data("x:nope".utf8).base64EncodedString()
            for _ in 1...10 {
                #expect(
                    try await client.execute(uri: "/app/index.html", method: .get, headers: [.authorization: wrong])
                        .status == .unauthorized)
            }
            let limited = try await client.execute(
                uri: "/app/index.html", method: .get, headers: [.authorization: wrong])
            #expect(limited.status == .tooManyRequests)
            #expect(limited.headers[.retryAfter] == "60")
            #expect(limited.json["error"] as? String == "too_many_attempts")
        }
    }

    @Test func pathsWithEmptySegmentsNeverRedirectOffSite() async throws {
        let app = try await TestApp()
        let site = app.folder + "/site"
        try FileManager.default.createDirectory(atPath: site + "/beta", withIntermediateDirectories: true)
        try "<!doctype html><h1>beta</h1>".write(toFile: site + "/beta/index.html", atomically: true, encoding: .utf8)
        try await app.test { client in
            for uri in ["//beta", "///beta", "//beta/", "/%2F%2Fbeta", "/%2fbeta", "/%5Cbeta", "//%2Fbeta"] {
                let answer = try await client.execute(uri: uri, method: .get, headers: app.adminHeaders)
                if let location = answer.headers[.location] {
                    #expect(
                        location.hasPrefix("/") && !location.hasPrefix("//") && !location.contains("\\"),
                        "\(uri) → \(location)")
                }
            }
            let collapsed = try await client.execute(uri: "//beta", method: .get, headers: app.adminHeaders)
            #expect(collapsed.status == .movedPermanently)
            #expect(collapsed.headers[.location] == "/beta")
            let folder = try await client.execute(uri: "/beta", method: .get, headers: app.adminHeaders)
            #expect(folder.headers[.location] == "/beta/")
            let page = try await client.execute(uri: "/beta/", method: .get, headers: app.adminHeaders)
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains("<h1>beta</h1>"))
            // The login form's `next` keeps local paths only.
            for next in [
                "%2F%2Fevil.example", "%2F%5Cevil.example", "https%3A%2F%2Fevil.example", "%2F%09%2Fevil.example",
            ] {
                let login = try await client.execute(
                    uri: "/login", method: .post, headers: Self.form,
                    body: ByteBuffer(string: "token=\(app.adminToken)&next=\(next)"))
                #expect(login.headers[.location] == "/", "next=\(next)")
            }
        }
    }

    @Test func siteFoldersUnderOpenRoutesAreNeverServed() async throws {
        let app = try await TestApp()
        let site = app.folder + "/site"
        for name in ["api", "buildid", "metrics-app"] {
            try FileManager.default.createDirectory(atPath: site + "/" + name, withIntermediateDirectories: true)
            try "secret page".write(toFile: site + "/\(name)/index.html", atomically: true, encoding: .utf8)
        }
        try await app.test { client in
            for uri in ["/api/index.html", "/buildid/index.html", "/api/", "/metrics-app/index.html", "/metrics-app/"] {
                let answer = try await client.execute(uri: uri, method: .get)
                #expect(answer.status != .ok, "\(uri) answered \(answer.status)")
                #expect(!String(buffer: answer.body).contains("secret page"), "\(uri) served the page")
            }
            // With the admin token, a project folder is served; a folder under an open route still is not.
            #expect(
                try await client.execute(uri: "/metrics-app/index.html", method: .get, headers: app.adminHeaders).status
                    == .ok)
            #expect(
                try await client.execute(uri: "/api/index.html", method: .get, headers: app.adminHeaders).status
                    == .notFound)
        }
        await #expect(throws: ProjectError.self) { try await app.root.projects.create(slug: ProjectSlug("api")!) }
    }

    @Test func dashboardAnswersCarrySecurityHeaders() async throws {
        let app = try await TestApp()
        try await app.test { client in
            for (uri, headers) in [
                ("/login", HTTPFields()), ("/nowhere", app.adminHeaders), ("/nowhere", HTTPFields()),
                ("/", app.adminHeaders),
            ] {
                let answer = try await client.execute(uri: uri, method: .get, headers: headers)
                let csp = answer.headers[.contentSecurityPolicy] ?? ""
                #expect(
                    csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'")
                        && csp.contains("style-src 'self'"), "\(uri): \(csp)")
                #expect(answer.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
                #expect(answer.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin", "\(uri)")
                #expect(answer.headers[HTTPField.Name("X-Frame-Options")!] == "DENY", "\(uri)")
                let cache = answer.headers[.cacheControl] ?? ""
                #expect(cache.contains("no-store") || cache.contains("no-cache"), "\(uri): \(cache)")
            }
        }
    }
}
