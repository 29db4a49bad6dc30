import FaultlineCore
import Foundation
import Testing

/// Personal tokens and the TOTP second factor (PersonalTokenStore, AccountStore; migrations
/// `v33-personal-tokens-totp` / `pg18-personal-tokens-totp`) on each engine: the same answers, and the rules that
/// keep them honest (an expired or revoked token is not found, a person's tokens and factor go with them, a time step
/// and a recovery code are used once).
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct PersonalTokenConformanceTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static func hash(_ digit: Character) -> SecretHash { SecretHash(hex: String(repeating: digit, count: 64)) }

    func person(_ stores: Stores, _ login: String) async throws -> Person {
        try await stores.people.ensurePerson(login: PersonLogin(login)!, name: "", owner: false, at: Self.start)
    }

    @Test(arguments: Engine.allCases) func aTokenIsFoundByItsHashUntilItExpiresOrIsRevoked(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let ada = try await person(stores, "ada")
            let bob = try await person(stores, "bob")
            let forever = try #require(
                try await stores.people.createToken(
                    person: ada.id, name: "CI", scopes: [.read, .uploadSymbols], tokenHash: Self.hash("a"),
                    createdAt: Self.start, expiresAt: nil))
            #expect(forever.scopes == [.read, .uploadSymbols] && forever.lastUsedAt == nil && forever.name == "CI")
            let brief = try #require(
                try await stores.people.createToken(
                    person: ada.id, name: "brief", scopes: [.admin], tokenHash: Self.hash("b"), createdAt: Self.start,
                    expiresAt: Self.start + 3600))
            #expect(
                try await stores.people.createToken(
                    person: PersonID(9999), name: "x", scopes: [.read], tokenHash: Self.hash("c"),
                    createdAt: Self.start, expiresAt: nil) == nil, "no person, no token")

            // Found with its person; the use is recorded, at most once a minute.
            let (used, owner) = try #require(
                try await stores.people.useToken(tokenHash: Self.hash("a"), now: Self.start + 10))
            #expect(used.id == forever.id && owner.id == ada.id)
            _ = try await stores.people.useToken(tokenHash: Self.hash("a"), now: Self.start + 30)
            #expect(
                try await stores.people.tokens(of: ada.id).first { $0.id == forever.id }?.lastUsedAt == Self.start + 10)
            _ = try await stores.people.useToken(tokenHash: Self.hash("a"), now: Self.start + 70)
            #expect(
                try await stores.people.tokens(of: ada.id).first { $0.id == forever.id }?.lastUsedAt == Self.start + 70)
            // Expired: not found.
            #expect(try await stores.people.useToken(tokenHash: Self.hash("b"), now: Self.start + 3599) != nil)
            #expect(try await stores.people.useToken(tokenHash: Self.hash("b"), now: Self.start + 3600) == nil)
            #expect(try await stores.people.useToken(tokenHash: Self.hash("d"), now: Self.start) == nil)

            #expect(try await stores.people.tokens(of: ada.id).map(\.id) == [brief.id, forever.id], "newest first")
            #expect(try await stores.people.tokens(of: bob.id).isEmpty)
            #expect(try await stores.people.tokens(of: nil).count == 2)
            // Only its person (or the owner's nil) revokes a token.
            #expect(try await stores.people.revokeToken(forever.id, of: bob.id) == false)
            #expect(try await stores.people.revokeToken(forever.id, of: ada.id))
            #expect(try await stores.people.revokeToken(forever.id, of: nil) == false)
            #expect(try await stores.people.useToken(tokenHash: Self.hash("a"), now: Self.start + 80) == nil)
            // Removing the person removes their tokens.
            #expect(try await stores.people.removePerson(ada.id))
            #expect(try await stores.people.tokens(of: nil).isEmpty)
        }
    }

    @Test(arguments: Engine.allCases) func aLoginTicketNamesItsPersonUntilItIsSpentEndedOrExpired(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let ada = try await person(stores, "ada")
            let bob = try await person(stores, "bob")
            let store = stores.people
            let end = Self.start + 300
            try await store.createLoginTicket(Self.hash("1"), person: ada.id, expiresAt: end, now: Self.start)
            try await store.createLoginTicket(Self.hash("2"), person: ada.id, expiresAt: end, now: Self.start)
            try await store.createLoginTicket(Self.hash("3"), person: bob.id, expiresAt: end, now: Self.start)
            #expect(try await store.loginTicket(Self.hash("1"), now: Self.start + 1) == ada.id)
            #expect(try await store.loginTicket(Self.hash("9"), now: Self.start + 1) == nil, "no such ticket")
            // Spent once, by its own person only.
            #expect(try await store.spendLoginTicket(Self.hash("1"), person: bob.id, now: Self.start + 2) == false)
            #expect(try await store.spendLoginTicket(Self.hash("1"), person: ada.id, now: Self.start + 2))
            #expect(try await store.spendLoginTicket(Self.hash("1"), person: ada.id, now: Self.start + 2) == false)
            #expect(try await store.loginTicket(Self.hash("1"), now: Self.start + 2) == nil)
            // Wrong codes end a ticket at the limit, and only that ticket.
            for _ in 0..<2 { try await store.failLoginTicket(Self.hash("2"), limit: 3) }
            #expect(try await store.loginTicket(Self.hash("2"), now: Self.start + 3) == ada.id)
            try await store.failLoginTicket(Self.hash("2"), limit: 3)
            #expect(try await store.loginTicket(Self.hash("2"), now: Self.start + 3) == nil)
            #expect(try await store.loginTicket(Self.hash("3"), now: Self.start + 3) == bob.id)
            // Expired: not found, not spent, and gone with the next ticket made.
            #expect(try await store.loginTicket(Self.hash("3"), now: end) == nil)
            #expect(try await store.spendLoginTicket(Self.hash("3"), person: bob.id, now: end) == false)
            try await store.createLoginTicket(Self.hash("4"), person: bob.id, expiresAt: end + 300, now: end)
            #expect(try await store.loginTicket(Self.hash("3"), now: Self.start) == nil, "deleted, not only hidden")
            // A person's tickets go with them.
            #expect(try await store.removePerson(bob.id))
            #expect(try await store.loginTicket(Self.hash("4"), now: end + 1) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func aSecondFactorIsConfirmedOnceAndEachStepAndCodeIsUsedOnce(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            let ada = try await person(stores, "ada")
            let secret = String(repeating: "A", count: 32)
            #expect(try await stores.people.secondFactor(of: ada.id) == nil)
            #expect(try await stores.people.beginSecondFactor(person: ada.id, secret: secret))
            #expect(
                try await stores.people.secondFactor(of: ada.id)
                    == SecondFactor(secret: secret, confirmed: false, lastStep: 0, recoveryCodesLeft: 0))
            // An unconfirmed factor takes no step.
            #expect(try await stores.people.useSecondFactorStep(person: ada.id, step: 5) == false)
            let newer = String(repeating: "B", count: 32)
            #expect(try await stores.people.beginSecondFactor(person: ada.id, secret: newer), "enrolment restarts")
            #expect(
                try await stores.people.confirmSecondFactor(
                    person: ada.id, step: 100, recoveryCodeHashes: [Self.hash("1"), Self.hash("2")], at: Self.start))
            #expect(
                try await stores.people.confirmSecondFactor(
                    person: ada.id, step: 101, recoveryCodeHashes: [], at: Self.start) == false, "confirmed once")
            #expect(
                try await stores.people.secondFactor(of: ada.id)
                    == SecondFactor(secret: newer, confirmed: true, lastStep: 100, recoveryCodesLeft: 2))
            #expect(try await stores.people.beginSecondFactor(person: ada.id, secret: secret) == false)
            // Steps: only later ones, each once.
            #expect(try await stores.people.useSecondFactorStep(person: ada.id, step: 100) == false)
            #expect(try await stores.people.useSecondFactorStep(person: ada.id, step: 101))
            #expect(try await stores.people.useSecondFactorStep(person: ada.id, step: 101) == false)
            // Recovery codes: each once.
            #expect(try await stores.people.useRecoveryCode(person: ada.id, hash: Self.hash("1")))
            #expect(try await stores.people.useRecoveryCode(person: ada.id, hash: Self.hash("1")) == false)
            #expect(try await stores.people.secondFactor(of: ada.id)?.recoveryCodesLeft == 1)
            #expect(try await stores.people.removeSecondFactor(person: ada.id))
            #expect(try await stores.people.secondFactor(of: ada.id) == nil)
            #expect(try await stores.people.useRecoveryCode(person: ada.id, hash: Self.hash("2")) == false)
            #expect(try await stores.people.beginSecondFactor(person: PersonID(9999), secret: secret) == false)
        }
    }

    @Test(arguments: Engine.allCases) func aPasswordChangeEndsThePersonsOtherSessions(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let ada = try await person(stores, "ada")
            let kept = try #require(
                try await stores.people.createPersonSession(
                    person: ada.id, tokenHash: Self.hash("1"), secret: String(repeating: "5", count: 64),
                    createdAt: Self.start,
                    expiresAt: Self.start + 3600))
            _ = try await stores.people.createPersonSession(
                person: ada.id, tokenHash: Self.hash("2"), secret: String(repeating: "6", count: 64),
                createdAt: Self.start,
                expiresAt: Self.start + 3600)
            let hash =
                "scrypt$ln=15,r=8,p=1$" + String(repeating: "0", count: 32) + "$" + String(repeating: "2", count: 64)
            #expect(try await stores.people.setPassword(person: ada.id, passwordHash: hash, keeping: kept.id))
            #expect(try await stores.people.person(id: ada.id)?.passwordHash == hash)
            #expect(try await stores.adminSessions.session(tokenHash: Self.hash("1"), now: Self.start) != nil)
            #expect(try await stores.adminSessions.session(tokenHash: Self.hash("2"), now: Self.start) == nil)
            #expect(
                try await stores.people.setPassword(person: PersonID(9999), passwordHash: hash, keeping: nil) == false)
        }
    }
}
