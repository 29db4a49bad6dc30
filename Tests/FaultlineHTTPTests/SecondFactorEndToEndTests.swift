import AsyncHTTPClient
import FaultlineCore
import FaultlineHTTP
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Issue #37's TOTP second factor against the real `faultline` binary on 127.0.0.1: enrolled from the account page
/// (confirmed by a first code made here with the real HMAC-SHA-1), then a password login asks for a code; a code is
/// not accepted twice, a recovery code works once, wrong codes count toward the login limits, and
/// `faultline users reset-totp` turns it off.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SecondFactorEndToEndTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let form = PeopleEndToEndTests.form

    /// The account page's HTML and its CSRF token.
    func account(_ server: ServerProcess, _ cookie: String) async throws -> (html: String, csrf: String) {
        let page = try await browser.send(
            .GET, server.baseURL + "/account", headers: [("Cookie", cookie), ("Accept", "text/html")])
        #expect(page.status == 200)
        let html = String(decoding: page.body, as: UTF8.self)
        return (html, try #require(DashboardActionsEndToEndTests.csrf(html)))
    }

    func post(_ server: ServerProcess, _ path: String, cookie: String, _ body: String) async throws -> HTTP.Answer {
        try await browser.send(
            .POST, server.baseURL + path, headers: Self.form + [("Cookie", cookie)], body: Array(body.utf8))
    }

    /// The first step of a password login: its answer, and the ticket cookie when it asked for a code.
    func password(_ server: ServerProcess) async throws -> (answer: HTTP.Answer, ticket: String?) {
        let answer = try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form,
            body: Array("login=mia@example.org&password=\(PeopleEndToEndTests.password)&next=%2Faccount".utf8))
        let ticket = answer.headers["Set-Cookie"].first { $0.hasPrefix("faultline_login_ticket=") }?.split(
            separator: ";"
        ).first.map(String.init)
        return (answer, ticket)
    }

    func code(_ server: ServerProcess, ticket: String, _ code: String) async throws -> HTTP.Answer {
        try await browser.send(
            .POST, server.baseURL + "/login", headers: Self.form + [("Cookie", ticket)],
            body: Array("code=\(code)&next=%2Faccount".utf8))
    }

    static func totp(_ secret: String, step: Int64) throws -> String {
        TOTP.code(key: try #require(Base32.decode(secret)), step: step, hmac: CryptoHMACSHA1())
    }

    @Test func enrolThenEachLoginAsksForACodeThatWorksOnce() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let link = try await PeopleEndToEndTests.invite(folder, "mia@example.org", role: "member", project: "shop")
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let cookie = try await PeopleEndToEndTests().accept(server, link, name: "Mia")
        var (html, csrf) = try await account(server, cookie)
        #expect(html.contains("Set up two-step sign-in"))

        // Enrolment shows the secret as an otpauth URI and as text; nothing is asked at login until it is confirmed.
        let begun = try await post(server, "/account/totp/begin", cookie: cookie, "csrf=\(csrf)")
        #expect(begun.status == 200)
        html = String(decoding: begun.body, as: UTF8.self)
        let uri = try #require(html.range(of: "otpauth://totp/Faultline:mia%40example.org?secret="))
        let secret = String(html[uri.upperBound...].prefix { $0 != "&" })
        #expect(secret.count == 32 && Base32.decode(secret)?.count == 20)
        let unconfirmed = try await password(server)
        #expect(unconfirmed.answer.status == 303 && unconfirmed.ticket == nil, "not on before a first code")
        let wrong = try await post(server, "/account/totp/confirm", cookie: cookie, "csrf=\(csrf)&code=000000")
        #expect(wrong.status == 403)
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT confirmed_at IS NULL FROM second_factors") == "1\n")
        let step = TOTP.step(at: Date())
        let confirmed = try await post(
            server, "/account/totp/confirm", cookie: cookie, "csrf=\(csrf)&code=\(try Self.totp(secret, step: step))")
        #expect(confirmed.status == 200)
        html = String(decoding: confirmed.body, as: UTF8.self)
        let recovery = html.components(separatedBy: "<li><code>").dropFirst().map { String($0.prefix(11)) }
        #expect(recovery.count == 10 && recovery.allSatisfy { $0.count == 11 && $0.contains("-") }, "\(recovery)")
        // Stored hashed, never as shown.
        let stored = try PeopleEndToEndTests.sqlite(folder, "SELECT code_hash FROM recovery_codes")
        #expect(stored.split(separator: "\n").count == 10)
        for code in recovery { #expect(!stored.contains(code.replacingOccurrences(of: "-", with: ""))) }
        (html, csrf) = try await account(server, cookie)
        #expect(html.contains("10 recovery codes left") && !html.contains(recovery[0]))

        // A password login now asks for a code: no session until then.
        let first = try await password(server)
        #expect(first.answer.status == 200)
        #expect(!first.answer.headers["Set-Cookie"].contains { $0.hasPrefix("faultline_session=") })
        #expect(String(decoding: first.answer.body, as: UTF8.self).contains("Two-step sign-in"))
        let ticket = try #require(first.ticket)
        // The code that confirmed enrolment was used: refused. The next step's code signs in.
        #expect(try await code(server, ticket: ticket, try Self.totp(secret, step: step)).status == 401)
        let signedIn = try await code(server, ticket: ticket, try Self.totp(secret, step: step + 1))
        #expect(signedIn.status == 303 && signedIn.headers["Location"].first == "/account")
        #expect(signedIn.headers["Set-Cookie"].contains { $0.hasPrefix("faultline_session=") })
        // Not twice, even on a new login.
        let second = try #require(try await password(server).ticket)
        #expect(try await code(server, ticket: second, try Self.totp(secret, step: step + 1)).status == 401)
        // A recovery code works once.
        let byRecovery = try await code(server, ticket: second, recovery[3].uppercased())
        #expect(byRecovery.status == 303)
        let third = try #require(try await password(server).ticket)
        #expect(try await code(server, ticket: third, recovery[3]).status == 401)
        #expect(try PeopleEndToEndTests.sqlite(folder, "SELECT count(*) FROM recovery_codes") == "9\n")
        // A ticket is no session: it opens no page.
        let page = try await browser.send(
            .GET, server.baseURL + "/account", headers: [("Cookie", third), ("Accept", "text/html")])
        #expect(page.status == 303)

        // The owner's reset: the password alone signs in again.
        let reset = try await ServerProcess.run(["users", "reset-totp", "mia@example.org", "--data", folder])
        #expect(reset.status == 0, "\(reset)")
        let plain = try await password(server)
        #expect(plain.answer.status == 303 && plain.ticket == nil)
    }

    @Test func wrongCodesCountTowardTheLoginLimits() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let link = try await PeopleEndToEndTests.invite(folder, "mia@example.org", role: "member", project: "shop")
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let cookie = try await PeopleEndToEndTests().accept(server, link, name: "Mia")
        let csrf = try await account(server, cookie).csrf
        let begun = String(
            decoding: try await post(server, "/account/totp/begin", cookie: cookie, "csrf=\(csrf)").body, as: UTF8.self)
        let uri = try #require(begun.range(of: "?secret="))
        let secret = String(begun[uri.upperBound...].prefix { $0 != "&" })
        let step = TOTP.step(at: Date())
        #expect(
            try await post(
                server, "/account/totp/confirm", cookie: cookie,
                "csrf=\(csrf)&code=\(try Self.totp(secret, step: step))"
            ).status == 200)
        // A wrong code for every code the window could accept: none of these is right.
        let valid = try Set((step - 2...step + 2).map { try Self.totp(secret, step: $0) })
        let wrongCodes = (0..<1000).map { String(format: "%06d", $0 * 7919 % 1_000_000) }.filter { !valid.contains($0) }
        // Five wrong codes end a ticket; the password must be given again, and the wrong codes still count.
        var refused = 0
        var throttled = false
        for attempt in 0..<4 {
            let login = try await password(server)
            if login.answer.status == 429 {
                throttled = true
                break
            }
            let ticket = try #require(login.ticket, "attempt \(attempt): \(login.answer.status)")
            for code in wrongCodes.dropFirst(attempt * 5).prefix(5) {
                let answer = try await self.code(server, ticket: ticket, code)
                if answer.status == 429 {
                    throttled = true
                    break
                }
                #expect(answer.status == 401)
                refused += 1
            }
            if throttled { break }
        }
        #expect(throttled, "ten wrong codes reach the limit of failed logins")
        #expect(refused == 10, "the limit is the login limit: 10 failures")
        // Past the limit even the right code is not heard.
        let blocked = try await password(server)
        #expect(blocked.answer.status == 429 && blocked.answer.headers["Retry-After"].first != nil)
    }
}
