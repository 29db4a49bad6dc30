import FaultlineCore
import Foundation
import Testing

/// People, roles, invites and people's sessions (PeopleStore, migrations `v30-people` / `pg15-people`), on each
/// engine: the same answers, and the rules that keep access honest (a removed person's sessions end in the same
/// transaction, an invite works once and only until it expires).
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct PeopleConformanceTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let secret = String(repeating: "5", count: 64)
    static let invite = SecretHash(hex: String(repeating: "e", count: 64))
    static let cookie = SecretHash(hex: String(repeating: "f", count: 64))
    static let hash =
        "scrypt$ln=15,r=8,p=1$" + String(repeating: "0", count: 32) + "$" + String(repeating: "1", count: 64)

    func project(_ stores: Stores, _ slug: String) async throws -> Project {
        try await stores.projects.createProject(
            slug: ProjectSlug(slug)!,
            ingestKeyHash: SecretHash(hex: String(repeating: slug == "shop" ? "1" : "2", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: slug == "shop" ? "3" : "4", count: 64)),
            createdAt: Self.start, rateLimitPerSecond: 100)
    }

    @Test(arguments: Engine.allCases) func peopleAndTheirRolesPerProject(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let shop = try await project(stores, "shop")
            let other = try await project(stores, "other")
            let ada = try await stores.people.ensurePerson(
                login: PersonLogin("Ada@Example.org")!, name: "", owner: false, at: Self.start)
            #expect(ada.login.rawValue == "ada@example.org")
            #expect(ada.passwordHash == nil && ada.memberships.isEmpty && !ada.owner)
            // The same login again is the same person.
            let again = try await stores.people.ensurePerson(
                login: PersonLogin("ada@example.org")!, name: "x", owner: true, at: Self.start + 1)
            #expect(again.id == ada.id && !again.owner)

            #expect(try await stores.people.setRole(.viewer, person: ada.id, project: shop.id))
            #expect(try await stores.people.setRole(.admin, person: ada.id, project: other.id))
            #expect(try await stores.people.setRole(.member, person: ada.id, project: shop.id), "a role is replaced")
            let read = try #require(try await stores.people.person(id: ada.id))
            #expect(read.role(in: shop.id) == .member && read.role(in: other.id) == .admin)
            #expect(try await stores.people.removeMembership(person: ada.id, project: other.id))
            #expect(try await stores.people.removeMembership(person: ada.id, project: other.id) == false)
            #expect(try await stores.people.person(login: PersonLogin("ADA@example.org")!)?.memberships.count == 1)
            // Unknown person or project: nothing stored.
            #expect(try await stores.people.setRole(.viewer, person: PersonID(9999), project: shop.id) == false)
            #expect(
                try await stores.people.setRole(.viewer, person: ada.id, project: ProjectID(rawValue: 9999)) == false)
            #expect(try await stores.people.setOwner(true, person: ada.id))
            #expect(try await stores.people.person(id: ada.id)?.owner == true)
            #expect(try await stores.people.allPeople().map(\.login.rawValue) == ["ada@example.org"])
        }
    }

    @Test(arguments: Engine.allCases) func anInviteWorksOnceAndOnlyUntilItExpires(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let bob = try await stores.people.ensurePerson(
                login: PersonLogin("bob")!, name: "", owner: false, at: Self.start)
            try await stores.people.createInvite(
                tokenHash: Self.invite, person: bob.id, createdAt: Self.start, expiresAt: Self.start + 3600)
            #expect(try await stores.people.invite(tokenHash: Self.invite, now: Self.start + 10)?.person == bob.id)
            // Expired: neither found nor accepted, and the password stays unset.
            #expect(try await stores.people.invite(tokenHash: Self.invite, now: Self.start + 3600) == nil)
            let late = try await stores.people.acceptInvite(
                tokenHash: Self.invite, passwordHash: Self.hash, name: "Bob", now: Self.start + 3601)
            #expect(late == nil)
            #expect(try await stores.people.person(id: bob.id)?.passwordHash == nil)
            // In time: accepted once, with the name; the second use finds nothing.
            let accepted = try #require(
                try await stores.people.acceptInvite(
                    tokenHash: Self.invite, passwordHash: Self.hash, name: "Bob B", now: Self.start + 20))
            #expect(accepted.passwordHash == Self.hash && accepted.name == "Bob B")
            let twice = try await stores.people.acceptInvite(
                tokenHash: Self.invite, passwordHash: "scrypt$other", name: nil, now: Self.start + 21)
            #expect(twice == nil)
            #expect(try await stores.people.person(id: bob.id)?.passwordHash == Self.hash)
            #expect(try await stores.texts("SELECT token_hash FROM invites").isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func removingAPersonEndsTheirSessionsAtOnce(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let shop = try await project(stores, "shop")
            let cy = try await stores.people.ensurePerson(
                login: PersonLogin("cy")!, name: "", owner: false, at: Self.start)
            #expect(try await stores.people.setRole(.member, person: cy.id, project: shop.id))
            let session = try #require(
                try await stores.people.createPersonSession(
                    person: cy.id, tokenHash: Self.cookie, secret: Self.secret, createdAt: Self.start,
                    expiresAt: Self.start + 3600))
            #expect(session.person == cy.id)
            let found = try #require(
                try await stores.adminSessions.session(tokenHash: Self.cookie, now: Self.start + 1))
            #expect(found.person == cy.id && found.id == session.id)
            // A new admin token ends the admin token's sessions, not people's.
            try await stores.projects.setAdminTokenHash(
                SecretHash(hex: String(repeating: "c", count: 64)), at: Self.start)
            #expect(try await stores.adminSessions.session(tokenHash: Self.cookie, now: Self.start + 1) != nil)

            #expect(try await stores.people.removePerson(cy.id))
            #expect(try await stores.adminSessions.session(tokenHash: Self.cookie, now: Self.start + 2) == nil)
            #expect(try await stores.texts("SELECT CAST(person_id AS TEXT) FROM memberships").isEmpty)
            #expect(try await stores.people.removePerson(cy.id) == false)
            // A removed person gets no new session either.
            let late = try await stores.people.createPersonSession(
                person: cy.id, tokenHash: Self.cookie, secret: Self.secret, createdAt: Self.start + 3,
                expiresAt: Self.start + 3600)
            #expect(late == nil)
        }
    }

    @Test(arguments: Engine.allCases) func theTablesRefuseMalformedRows(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let dee = try await stores.people.ensurePerson(
                login: PersonLogin("dee")!, name: "", owner: false, at: Self.start)
            // Only scrypt hashes are stored as passwords (never a plain text by mistake): the same statement with a
            // scrypt value is taken, with a plain text refused.
            try await stores.execute("UPDATE people SET password_hash = 'scrypt$x' WHERE id = \(dee.id.rawValue)")
            #expect(try await stores.people.person(id: dee.id)?.passwordHash == "scrypt$x")
            await #expect(throws: (any Error).self) {
                try await stores.execute("UPDATE people SET password_hash = 'hunter2' WHERE id = \(dee.id.rawValue)")
            }
            #expect(try await stores.people.person(id: dee.id)?.passwordHash == "scrypt$x")
            await #expect(throws: (any Error).self) {
                try await stores.execute(
                    "INSERT INTO people (login, name, owner, created_at) VALUES ('Upper', '', 0, 1)")
            }
            await #expect(throws: (any Error).self) {
                try await stores.people.createInvite(
                    tokenHash: SecretHash(hex: "short"), person: dee.id, createdAt: Self.start, expiresAt: Self.start)
            }
        }
    }
}
