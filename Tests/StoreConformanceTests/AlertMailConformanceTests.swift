import FaultlineCore
import Foundation
import Testing

/// Mail preferences, recipients and the digest outbox (`AlertMailStore`), on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct AlertMailConformanceTests {
    static let at = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(arguments: Engine.allCases) func onlyMembersWhoOptedInGetMailAndADigestIsMadeOnce(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let app = try await createProject(stores, "app").id
            let other = try await createProject(stores, "other").id
            func person(_ login: String, owner: Bool = false) async throws -> PersonID {
                try await stores.people.ensurePerson(login: PersonLogin(login)!, name: "", owner: owner, at: Self.at).id
            }
            let ada = try await person("ada@example.com")
            let bob = try await person("bob@example.com")
            let carl = try await person("carl")  // not an address
            let olga = try await person("olga@example.com", owner: true)
            let eve = try await person("eve@example.com")  // chose mail, then left the project
            for member in [ada, bob, carl, eve] {
                #expect(try await stores.people.setRole(.member, person: member, project: app))
            }
            let store = stores.alerts
            for (who, kinds, digest) in [
                (ada, Set<AlertKind>([.velocity, .newIssue]), DigestCadence.weekly), (carl, [.velocity], .weekly),
                (olga, [.velocity], .daily), (eve, [.velocity], .weekly),
            ] {
                #expect(
                    try await store.setMailPreference(
                        AlertMailPreference(person: who, project: app, kinds: kinds, digest: digest)))
            }
            #expect(try await stores.people.removeMembership(person: eve, project: app))
            #expect(
                try await store.setMailPreference(
                    AlertMailPreference(person: ada, project: ProjectID(999), kinds: [.velocity], digest: .none))
                    == false)

            // bob chose nothing, carl has no address, eve left: ada and the owner olga get velocity mail.
            #expect(try await store.mailRecipients(project: app, kind: .velocity).map(\.person) == [ada, olga])
            #expect(
                try await store.mailRecipients(project: app, kind: .newIssue).map(\.address.rawValue) == [
                    "ada@example.com"
                ])
            #expect(try await store.mailRecipients(project: app, kind: .regression).isEmpty)
            #expect(try await store.mailRecipients(project: other, kind: .velocity).isEmpty)
            #expect(try await store.mailPreferences(person: ada).first?.kinds == [.velocity, .newIssue])
            #expect(
                try await store.digestSubscribers(cadence: .weekly)
                    == [
                        DigestSubscriber(
                            project: app,
                            recipient: MailRecipient(person: ada, address: MailAddress("ada@example.com")!))
                    ])
            #expect(try await store.digestSubscribers(cadence: .daily).map(\.recipient.person) == [olga])

            // A digest is made once per period; it is sent, retried and delivered from its own outbox.
            let period = try #require(DigestPeriod.due(.weekly, now: Self.at, hour: 0))
            let address = MailAddress("ada@example.com")!
            #expect(
                try await store.queueDigest(
                    project: app, person: ada, period: period, recipient: address, body: [1, 2], at: Self.at))
            #expect(
                try await store.queueDigest(
                    project: app, person: ada, period: period, recipient: address, body: [3], at: Self.at) == false)
            #expect(try await store.digestMade(project: app, person: ada, period: period))
            let due = try await store.dueDigests(now: Self.at, limit: 10)
            #expect(due.map(\.body) == [[1, 2]])
            let id = try #require(due.first?.id)
            try await store.recordDigestAttempt(
                id, outcome: .retry(next: Self.at.addingTimeInterval(60), status: nil, error: "timeout"), at: Self.at)
            #expect(try await store.dueDigests(now: Self.at.addingTimeInterval(30), limit: 10).isEmpty)
            #expect(try await store.dueDigests(now: Self.at.addingTimeInterval(61), limit: 10).map(\.attempts) == [1])
            try await store.recordDigestAttempt(id, outcome: .delivered(status: 250), at: Self.at)
            #expect(try await store.dueDigests(now: Self.at.addingTimeInterval(3600), limit: 10).isEmpty)

            // The mail secret is made once; unsubscribing (no kinds, no digest) deletes the choice.
            let secret = try await store.mailSecret(fresh: Array(repeating: 7, count: 32))
            #expect(try await store.mailSecret(fresh: Array(repeating: 9, count: 32)) == secret)
            #expect(secret == Array(repeating: 7, count: 32))
            #expect(
                try await store.setMailPreference(
                    AlertMailPreference(person: ada, project: app, kinds: [], digest: .none)))
            #expect(try await store.mailPreferences(person: ada).isEmpty)
            #expect(try await store.mailRecipients(project: app, kind: .velocity).map(\.person) == [olga])
        }
    }
}
