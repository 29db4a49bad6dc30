import FaultlineCore
import FaultlineHTTP
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Pipeline
import Testing

/// People's passwords, invite links and password logins (issue #37), through the real router, a real SQLite file and
/// real scrypt (swift-crypto's `KDF.Scrypt`). The roles matrix against the binary is `PeopleEndToEndTests`.
@Suite struct PeopleRouteTests {
    static let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
    static let password = "correct horse battery"

    /// scrypt of RFC 7914 §12's fourth test vector: the deriver is the algorithm the docs name, not a look-alike.
    @Test func theDeriverIsScryptAsRFC7914DefinesIt() throws {
        let key = try ScryptPasswordDeriver().derive(
            password: "pleaseletmein", salt: Array("SodiumChloride".utf8),
            parameters: ScryptParameters(log2N: 14, r: 8, p: 1), length: 64)
        #expect(
            Hex.encode(key)
                == "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
                + "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")
        // Parameters outside the accepted bounds are refused, not derived (a hand-edited row cannot stall a login).
        #expect(throws: PeopleError.self) {
            try ScryptPasswordDeriver().derive(
                password: "x", salt: [], parameters: ScryptParameters(log2N: 24, r: 8, p: 1), length: 32)
        }
    }

    /// The value of the page's hidden CSRF input.
    static func csrf(_ page: String) -> String? {
        guard let start = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[start.upperBound...].prefix { $0 != "\"" })
    }

    static func cookie(_ response: TestResponse, _ name: String) -> String? {
        response.headers[values: .setCookie].first { $0.hasPrefix(name + "=") }?.split(separator: ";").first
            .map(String.init)
    }

    /// Opens the invite link and sets `password` on it; the answer of the POST.
    static func accept(
        _ client: any TestClientProtocol, secret: String, password: String = Self.password, confirm: String? = nil,
        name: String = "Ada+Lovelace"
    ) async throws -> TestResponse {
        let page = try await client.execute(uri: "/invite/\(secret)", method: .get)
        let csrf = csrf(String(buffer: page.body)) ?? ""
        var headers = form
        if let cookie = cookie(page, "faultline_form") { headers[.cookie] = cookie }
        return try await client.execute(
            uri: "/invite/\(secret)", method: .post, headers: headers,
            body: ByteBuffer(string: "csrf=\(csrf)&name=\(name)&password=\(password)&confirm=\(confirm ?? password)"))
    }

    @Test func anInviteLinkSetsAHashedPasswordOnceAndSignsThePersonIn() async throws {
        let app = try await TestApp()
        let invitation = try await app.root.people.invite(
            login: PersonLogin("ada@example.org")!, role: .member, project: app.credentials.project.id, owner: false,
            by: .cli)
        try await app.test { client in
            // The form: the login it is for, a CSRF value in a cookie and in the form.
            let page = try await client.execute(uri: "/invite/\(invitation.secret)", method: .get)
            #expect(page.status == .ok)
            #expect(String(buffer: page.body).contains("ada@example.org"))
            // Without the CSRF cookie (a post from another site): 403, nothing set.
            let forged = try await client.execute(
                uri: "/invite/\(invitation.secret)", method: .post, headers: Self.form,
                body: ByteBuffer(
                    string:
                        "csrf=\(Self.csrf(String(buffer: page.body)) ?? "")&password=aaaaaaaaaaaa&confirm=aaaaaaaaaaaa")
            )
            #expect(forged.status == .forbidden)
            // Too short, or two passwords that differ: 400, the link still works.
            #expect(try await Self.accept(client, secret: invitation.secret, password: "short").status == .badRequest)
            #expect(
                try await Self.accept(client, secret: invitation.secret, confirm: "something else").status
                    == .badRequest)
            #expect(try await app.root.people.person(login: PersonLogin("ada@example.org")!)?.passwordHash == nil)

            let accepted = try await Self.accept(client, secret: invitation.secret)
            #expect(accepted.status == .seeOther)
            #expect(Self.cookie(accepted, "faultline_session") != nil, "signed in at once")
            // Used: the link is gone.
            #expect(try await client.execute(uri: "/invite/\(invitation.secret)", method: .get).status == .notFound)
            // A used link's page sets no form cookie: the POST is refused (403), and nothing changes.
            #expect([.forbidden, .notFound].contains(try await Self.accept(client, secret: invitation.secret).status))
        }
        let ada = try #require(try await app.root.people.person(login: PersonLogin("ada@example.org")!))
        #expect(ada.name == "Ada Lovelace")
        // Stored: scrypt with its parameters, a salt, and nothing of the password.
        let stored = try #require(ada.passwordHash)
        let hash = try #require(PasswordHash(encoded: stored))
        #expect(hash.parameters == .standard && hash.salt.count == 16 && hash.key.count == 32)
        #expect(stored.hasPrefix("scrypt$ln=15,r=8,p=1$"))
        #expect(!stored.contains(Self.password) && !stored.contains(Hex.encode(Array(Self.password.utf8))))
        #expect(try hash.verify(Self.password, deriver: ScryptPasswordDeriver()))
        #expect(try !hash.verify(Self.password + "!", deriver: ScryptPasswordDeriver()))
        // The same password for another person hashes apart (its own salt).
        let bob = try await app.root.people.invite(
            login: PersonLogin("bob")!, role: .viewer, project: app.credentials.project.id, owner: false, by: .cli)
        _ = try await app.root.people.acceptInvite(
            secret: bob.secret, password: Self.password, name: "")
        let bobHash = try #require(try await app.root.people.person(login: PersonLogin("bob")!)?.passwordHash)
        #expect(bobHash != stored)
    }

    @Test func anInviteLinkExpires() async throws {
        let clock = SteppingClock()
        let app = try await TestApp(clock: clock)
        let invitation = try await app.root.people.invite(
            login: PersonLogin("late")!, role: .viewer, project: app.credentials.project.id, owner: false,
            lifetime: 3600, by: .cli)
        clock.advance(3601)
        try await app.test { client async throws in
            #expect(try await client.execute(uri: "/invite/\(invitation.secret)", method: .get).status == .notFound)
            #expect([.forbidden, .notFound].contains(try await Self.accept(client, secret: invitation.secret).status))
        }
        #expect(try await app.root.people.person(login: PersonLogin("late")!)?.passwordHash == nil)
    }

    @Test func aPersonSignsInWithTheirPasswordAndAWrongOneIsRefused() async throws {
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_800_000_000)))
        let invitation = try await app.root.people.invite(
            login: PersonLogin("ada")!, role: .viewer, project: app.credentials.project.id, owner: false, by: .cli)
        _ = try await app.root.people.acceptInvite(
            secret: invitation.secret, password: Self.password, name: "")
        try await app.test { client in
            let wrong = try await client.execute(
                uri: "/login", method: .post, headers: Self.form, body: ByteBuffer(string: "login=ada&password=nope"))
            #expect(wrong.status == .unauthorized)
            #expect(String(buffer: wrong.body).contains("That login and password do not match."))
            let unknown = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: ByteBuffer(string: "login=nobody&password=\(Self.password)"))
            #expect(unknown.status == .unauthorized)
            let right = try await client.execute(
                uri: "/login", method: .post, headers: Self.form,
                body: ByteBuffer(string: "login=ADA&password=correct+horse+battery&next=%2Fapp%2F"))
            #expect(right.status == .seeOther)
            #expect(right.headers[.location] == "/app/")
            let cookie = try #require(Self.cookie(right, "faultline_session"))
            // The session passes the dashboard guard (this app has no rendered site, so the page itself is 404).
            let page = try await client.execute(uri: "/app/list", method: .get, headers: [.cookie: cookie])
            #expect(page.status != .unauthorized && page.status != .seeOther)
            let without = try await client.execute(uri: "/app/list", method: .get)
            #expect(without.status == .unauthorized)
        }
    }

    /// Failed logins are limited per account (from any address) and per address (on any account), before any
    /// scrypt work is done.
    @Test func loginsAreLimitedPerAccountAndPerAddress() async throws {
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_800_000_000)))
        let people = app.root.people
        for login in ["ada", "bob"] {
            let invitation = try await people.invite(
                login: PersonLogin(login)!, role: .viewer, project: app.credentials.project.id, owner: false, by: .cli)
            _ = try await people.acceptInvite(secret: invitation.secret, password: Self.password, name: "")
        }
        // Ten wrong passwords for ada, from ten addresses: none of the addresses is limited, the account is.
        for attempt in 0..<10 {
            #expect(try await people.login(login: "ada", password: "wrong", client: "10.0.0.\(attempt)") == .refused)
        }
        guard case .throttled = try await people.login(login: "ada", password: Self.password, client: "10.0.1.1")
        else {
            Issue.record("the account is limited, even with the right password from a new address")
            return
        }
        guard case .loggedIn = try await people.login(login: "bob", password: Self.password, client: "10.0.0.1")
        else {
            Issue.record("another account from the same addresses is not limited")
            return
        }
        // Ten wrong passwords from one address, over ten accounts: the address is limited on every account.
        for attempt in 0..<10 {
            #expect(try await people.login(login: "guess\(attempt)", password: "x", client: "10.9.9.9") == .refused)
        }
        guard case .throttled = try await people.login(login: "bob", password: Self.password, client: "10.9.9.9")
        else {
            Issue.record("the address is limited, even for an account it did not guess")
            return
        }
    }
}
