import FaultlineCore
import Foundation
import PostgresStorage
import SQLiteStorage
import Testing

/// The audit trail (`AuditTrail`, migrations `v34-audit` / `pg19-audit`) on each engine: entries come back as they
/// were recorded, newest first, filtered by project and kind or group, paged by id; an entry outlives the person it
/// names; the database refuses a malformed kind or a person's entry without the person.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct AuditConformanceTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    func trail(_ stores: Stores) -> any AuditTrail {
        if let sqlite = stores.sqlite { return SQLiteAuditTrail(database: sqlite) }
        return PostgresAuditTrail(database: stores.postgres!)
    }

    func project(_ stores: Stores, _ slug: String, _ digit: String) async throws -> Project {
        try await stores.projects.createProject(
            slug: ProjectSlug(slug)!, ingestKeyHash: SecretHash(hex: String(repeating: digit, count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: digit == "1" ? "3" : "4", count: 64)),
            createdAt: Self.start, rateLimitPerSecond: 100)
    }

    @Test(arguments: Engine.allCases) func entriesAreReadNewestFirstByProjectKindAndPage(_ engine: Engine) async throws
    {
        try await withStores(engine) { stores in
            let audit = trail(stores)
            let shop = try await project(stores, "shop", "1")
            let other = try await project(stores, "other", "2")
            let ada = try await stores.people.ensurePerson(
                login: PersonLogin("ada@example.org")!, name: "Ada", owner: false, at: Self.start)
            let byAda = AuditOrigin(actor: .person(ada.id, name: "Ada Lovelace"), address: "192.0.2.7")
            // Given: entries of two projects, a server-wide one, and every kind of actor.
            let first = try await audit.record(
                AuditEntry(
                    project: shop.id, at: Self.start, origin: byAda, kind: .issueStatus, subject: "issue 12",
                    before: "open", after: "closed"))
            let second = try await audit.record(
                AuditEntry(
                    project: shop.id, at: Self.start + 1, origin: AuditOrigin(actor: .adminToken, address: "::1"),
                    kind: .projectPrivacy, subject: "shop", before: "scrubbing on", after: "scrubbing off"))
            _ = try await audit.record(
                AuditEntry(
                    project: other.id, at: Self.start + 2,
                    origin: AuditOrigin(actor: .projectToken(other.id), address: nil),
                    kind: .issueNote, subject: "issue 3", after: "a note\nover two lines"))
            let fourth = try await audit.record(
                AuditEntry(project: nil, at: Self.start + 3, origin: .cli, kind: .personRemoved, subject: "bob"))
            let fifth = try await audit.record(
                AuditEntry(
                    project: shop.id, at: Self.start + 4,
                    origin: AuditOrigin(
                        actor: .personalToken(ada.id, name: "Ada", token: "ci-bot"), address: "10.0.0.1"),
                    kind: .issueMerge, subject: "issue 12", after: "merged issue 13"))
            #expect(first < second && second < fourth && fourth < fifth, "ids grow")

            // Then: a project's entries, newest first, as recorded.
            let shopEntries = try await audit.entries(AuditQuery(project: shop.id))
            #expect(shopEntries.map(\.id) == [fifth, second, first])
            let oldest = try #require(shopEntries.last)
            #expect(
                oldest.entry
                    == AuditEntry(
                        project: shop.id, at: Self.start, origin: byAda, kind: .issueStatus, subject: "issue 12",
                        before: "open", after: "closed"))
            #expect(shopEntries.first?.entry.origin.actor == .personalToken(ada.id, name: "Ada", token: "ci-bot"))
            // Every entry (the owner's view) includes the server-wide one and the project token's.
            let all = try await audit.entries(AuditQuery(project: nil))
            #expect(all.count == 5)
            #expect(all[1].entry.project == nil && all[1].entry.origin == .cli)
            #expect(
                all[2].entry.origin.actor == .projectToken(other.id) && all[2].entry.after == "a note\nover two lines")
            // A group, a kind, and a kind that only shares a prefix with a group.
            #expect(try await audit.entries(AuditQuery(project: shop.id, kind: "issue")).map(\.id) == [fifth, first])
            #expect(try await audit.entries(AuditQuery(project: shop.id, kind: "issue.status")).map(\.id) == [first])
            #expect(try await audit.entries(AuditQuery(project: shop.id, kind: "iss")).isEmpty)
            #expect(try await audit.entries(AuditQuery(project: nil, kind: "person")).map(\.id) == [fourth])
            // Pages by id.
            let page1 = try await audit.entries(AuditQuery(project: shop.id, limit: 2))
            #expect(page1.map(\.id) == [fifth, second])
            let page2 = try await audit.entries(AuditQuery(project: shop.id, before: page1.last?.id, limit: 2))
            #expect(page2.map(\.id) == [first])

            // An entry outlives the person it names.
            #expect(try await stores.people.removePerson(ada.id))
            #expect(try await audit.entries(AuditQuery(project: shop.id)).count == 3)
        }
    }

    @Test(arguments: Engine.allCases) func theDatabaseRefusesMalformedEntries(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let shop = try await project(stores, "shop", "1")
            let columns = "project_id, at, actor_kind, actor_person_id, kind"
            // A kind without a group, in capitals, or with a space; a person's entry without the person; a project
            // token's entry without a project; an unknown actor.
            for values in [
                "\(shop.id.rawValue), 1, 'cli', NULL, 'status'",
                "\(shop.id.rawValue), 1, 'cli', NULL, 'Issue.Status'",
                "\(shop.id.rawValue), 1, 'cli', NULL, 'issue. status'",
                "\(shop.id.rawValue), 1, 'cli', NULL, '.issue'",
                "\(shop.id.rawValue), 1, 'person', NULL, 'issue.status'",
                "\(shop.id.rawValue), 1, 'cli', 7, 'issue.status'",
                "NULL, 1, 'project-token', NULL, 'issue.status'",
                "\(shop.id.rawValue), 1, 'robot', NULL, 'issue.status'",
            ] {
                await #expect(throws: (any Error).self, "\(values)") {
                    try await stores.execute("INSERT INTO audit_log (\(columns)) VALUES (\(values))")
                }
            }
            try await stores.execute(
                "INSERT INTO audit_log (\(columns)) VALUES (\(shop.id.rawValue), 1, 'cli', NULL, 'issue.status')")
            #expect(try await stores.texts("SELECT count(*) FROM audit_log") == ["1"])
        }
    }
}
