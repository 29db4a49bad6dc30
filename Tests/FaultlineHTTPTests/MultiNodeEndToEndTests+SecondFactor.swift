import FaultlineCore
import FaultlineHTTP
import Foundation
import Pipeline
import Testing

extension MultiNodeEndToEndTests {
    /// A login with a second factor across two nodes on one PostgreSQL database: the password on node A, the code on
    /// node B (a load balancer that keeps no browser on one node). The ticket is in the database, hashed: B knows it,
    /// signs the person in once, and neither node takes the spent ticket again.
    @Test func aPasswordOnOneNodeAndItsCodeOnTheOtherSignInOnce() async throws {
        let cluster = try await Cluster(slug: "shop")
        defer { cluster.cleanUp() }
        let invited = try await ServerProcess.run(
            [
                "users", "invite", "mia@example.org", "--role", "member", "--project", "shop", "--data",
                ServerProcess.newFolder(),
            ] + cluster.arguments)
        let line = try #require(invited.out.split(separator: "\n").first { $0.hasPrefix("link:") }, "\(invited)")
        let link = String(line[try #require(line.range(of: "/invite/")).upperBound...])
        let a = try await cluster.node()
        defer { a.cleanUp() }
        let b = try await cluster.node()
        defer { b.cleanUp() }
        let factor = SecondFactorEndToEndTests()

        // Mia turns the second factor on at node A.
        let cookie = try await PeopleEndToEndTests().accept(a, link, name: "Mia")
        let (_, csrf) = try await factor.account(a, cookie)
        let begun = String(
            decoding: try await factor.post(a, "/account/totp/begin", cookie: cookie, "csrf=\(csrf)").body,
            as: UTF8.self)
        let uri = try #require(begun.range(of: "otpauth://totp/Faultline:mia%40example.org?secret="))
        let secret = String(begun[uri.upperBound...].prefix { $0 != "&" })
        let step = TOTP.step(at: Date())
        let confirmed = try await factor.post(
            a, "/account/totp/confirm", cookie: cookie,
            "csrf=\(csrf)&code=\(try SecondFactorEndToEndTests.totp(secret, step: step))")
        #expect(confirmed.status == 200)

        // The password at A; the ticket is stored as its hash only.
        let first = try await factor.password(a)
        #expect(first.answer.status == 200)
        let ticket = try #require(first.ticket)
        let secretPart = String(ticket.split(separator: "=", maxSplits: 1).last ?? "")
        #expect(try cluster.count("SELECT count(*) FROM login_tickets") == 1)
        #expect(try cluster.query("SELECT ticket_hash FROM login_tickets") != secretPart)
        #expect(try cluster.count("SELECT count(*) FROM login_tickets WHERE ticket_hash LIKE '%\(secretPart)%'") == 0)

        // The code at B signs in; the session works on both nodes.
        let signedIn = try await factor.code(
            b, ticket: ticket, try SecondFactorEndToEndTests.totp(secret, step: step + 1))
        #expect(signedIn.status == 303 && signedIn.headers["Location"].first == "/account")
        let session = try #require(
            signedIn.headers["Set-Cookie"].first { $0.hasPrefix("faultline_session=") }?.split(separator: ";").first
                .map(String.init))
        for node in [a, b] { _ = try await factor.account(node, session) }
        // Spent: the ticket is gone, and neither node takes it again, even with another right code.
        #expect(try cluster.count("SELECT count(*) FROM login_tickets") == 0)
        for node in [a, b] {
            let again = try await factor.code(
                node, ticket: ticket, try SecondFactorEndToEndTests.totp(secret, step: step + 2))
            #expect(again.status == 401)
        }

        // A wrong code at B counts against a ticket made at A; the fifth ends it for both.
        let second = try #require(try await factor.password(a).ticket)
        for n in 0..<AccountService.ticketAttempts {
            let wrong = try await factor.code(n.isMultiple(of: 2) ? b : a, ticket: second, "000000")
            #expect(wrong.status == 401)
        }
        #expect(try cluster.count("SELECT count(*) FROM login_tickets") == 0)
    }
}
