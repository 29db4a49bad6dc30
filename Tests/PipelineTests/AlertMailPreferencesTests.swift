import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// The rules of ``AlertMailPreferences``, the one path of the account page and `faultline alerts mail`: a choice only
/// for a project of one's own, mail only to an e-mail login, and one audit entry per real change.
@Suite struct AlertMailPreferencesTests {
    static let shop = ProjectID(1)
    static let other = ProjectID(2)

    /// Preferences in memory, as the store keeps them (no row for "nothing chosen").
    final class Store: AlertMailStore {
        let rows = Mutex<[AlertMailPreference]>([])

        func mailPreferences(person: PersonID) async throws -> [AlertMailPreference] {
            rows.withLock { $0.filter { $0.person == person } }
        }
        func setMailPreference(_ preference: AlertMailPreference) async throws -> Bool {
            rows.withLock { rows in
                rows.removeAll { $0.person == preference.person && $0.project == preference.project }
                if !preference.kinds.isEmpty || preference.digest != .none { rows.append(preference) }
            }
            return true
        }
        func mailRecipients(project: ProjectID, kind: AlertKind) async throws -> [MailRecipient] { [] }
        func digestSubscribers(cadence: DigestCadence) async throws -> [DigestSubscriber] { [] }
        func digestMade(project: ProjectID, person: PersonID, period: DigestPeriod) async throws -> Bool { false }
        func queueDigest(
            project: ProjectID, person: PersonID, period: DigestPeriod, recipient: MailAddress, body: [UInt8],
            at date: Date
        ) async throws -> Bool { false }
        func dueDigests(now: Date, limit: Int) async throws -> [DigestDelivery] { [] }
        func recordDigestAttempt(_ id: Int64, outcome: DeliveryOutcome, at date: Date) async throws {}
        func mailSecret(fresh: [UInt8]) async throws -> [UInt8] { fresh }
    }

    /// The entries recorded, in order.
    final class Trail: AuditTrail {
        let recorded = Mutex<[AuditEntry]>([])
        func record(_ entry: AuditEntry) async throws -> Int64 {
            recorded.withLock {
                $0.append(entry)
                return Int64($0.count)
            }
        }
        func entries(_ query: AuditQuery) async throws -> [AuditRecord] { [] }
    }

    static func person(_ id: Int64, _ login: String, owner: Bool = false, member: Bool = true) -> Person {
        Person(
            id: PersonID(id), login: PersonLogin(login)!, name: "", owner: owner, passwordHash: nil,
            createdAt: FixedClock().now(), memberships: member ? [Membership(project: shop, role: .viewer)] : [])
    }

    static func choice(_ who: Person, _ project: ProjectID, _ kinds: Set<AlertKind>, _ digest: DigestCadence)
        -> AlertMailPreference
    {
        AlertMailPreference(person: who.id, project: project, kinds: kinds, digest: digest)
    }

    @Test func aMemberChoosesForTheirProjectAndEachRealChangeIsRecordedOnce() async throws {
        let (store, trail) = (Store(), Trail())
        let mail = AlertMailPreferences(store: store, audit: trail, clock: FixedClock())
        let ada = Self.person(1, "ada@example.com")
        let origin = AuditOrigin(actor: .person(ada.id, name: ada.displayName), address: "127.0.0.1")

        // Given nothing chosen, when a viewer of shop chooses velocity and the weekly digest, then it is stored and
        // recorded as her, before and after.
        let before = try await mail.set(Self.choice(ada, Self.shop, [.velocity], .weekly), for: ada, by: origin)
        #expect(before == Self.choice(ada, Self.shop, [], .none))
        #expect(
            try await mail.preference(of: ada.id, in: Self.shop) == Self.choice(ada, Self.shop, [.velocity], .weekly))
        let first = try #require(trail.recorded.withLock { $0.first })
        #expect(first.kind == .memberMail && first.origin == origin && first.project == Self.shop)
        #expect(first.subject == "ada@example.com")
        #expect(first.before == "kinds none; digest none" && first.after == "kinds velocity; digest weekly")

        // The same choice again records nothing; turning everything off is recorded and leaves no row.
        try await mail.set(Self.choice(ada, Self.shop, [.velocity], .weekly), for: ada, by: origin)
        #expect(trail.recorded.withLock { $0.count } == 1)
        try await mail.set(Self.choice(ada, Self.shop, [], .none), for: ada, by: origin)
        #expect(trail.recorded.withLock { $0.count } == 2)
        #expect(try await store.mailPreferences(person: ada.id).isEmpty)
    }

    @Test func anotherProjectAnotherPersonOrALoginNoMailReachesIsRefusedAndNothingChanges() async throws {
        let (store, trail) = (Store(), Trail())
        let mail = AlertMailPreferences(store: store, audit: trail, clock: FixedClock())
        let ada = Self.person(1, "ada@example.com")
        let bob = Self.person(2, "bob@example.com")
        let carl = Self.person(3, "carl")

        await #expect(throws: PeopleError(.unknownProject, "ada@example.com is not a member of that project")) {
            try await mail.set(Self.choice(ada, Self.other, [.velocity], .none), for: ada, by: .cli)
        }
        // A choice naming another person than the one it is set for is refused the same way.
        await #expect(throws: PeopleError.self) {
            try await mail.set(Self.choice(bob, Self.shop, [.velocity], .none), for: ada, by: .cli)
        }
        await #expect(throws: PeopleError.self) {
            try await mail.set(Self.choice(carl, Self.shop, [.newIssue], .none), for: carl, by: .cli)
        }
        #expect(store.rows.withLock { $0.isEmpty })
        #expect(trail.recorded.withLock { $0.isEmpty })
        // Turning mail off needs no address; an owner chooses for any project.
        try await mail.set(Self.choice(carl, Self.shop, [], .none), for: carl, by: .cli)
        let owner = Self.person(4, "olga@example.com", owner: true, member: false)
        try await mail.set(Self.choice(owner, Self.other, [.storageFull], .daily), for: owner, by: .cli)
        #expect(try await mail.preferences(of: owner.id).map(\.project) == [Self.other])
    }
}
