import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// A grouping-version bump on a database filled with issues of the previous version: reports are queued again
/// in bounded batches, and when grouped with the new rules their issues are carried over — ids, statuses and
/// alert history kept, two old issues of one crash site merged, counts equal to a recount, and no new-issue or
/// regression alert raised by the bookkeeping.
@Suite struct GroupingMigrationTests {
    let fixture = SQLiteFixture()

    /// A grouping as the previous version made them (fingerprints `v1:…`).
    func v1Grouping(_ site: String) -> GroupingInput {
        GroupingInput(
            grouping: GroupingResult(
                fingerprint: Fingerprint(version: 1, hash: FNV1a.hex64("v1 " + site)), source: .stack,
                components: [site],
                title: "Illegal instruction: Illegal instruction", culprit: site, titleRank: Grouping.TitleRank.none),
            tags: ["device": "Pixel 7"])
    }

    func v2Grouping(_ site: String) -> GroupingInput {
        GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site], title: "Fatal error: Index out of range", culprit: site,
                titleRank: Grouping.TitleRank.cause),
            tags: ["device": "Pixel 7"])
    }

    @Test func aGroupingVersionBumpCarriesIssuesOverWithTheirHistory() async throws {
        let (db, p) = try await fixture.setUp()
        let symbols = SQLiteSymbolicationStore(database: db.database)
        let insights = SQLiteInsightsReader(database: db.database)
        // Given the previous version's issues: the -O and -Onone builds of one site were two issues (A closed,
        // B open with its new-issue alert), and a second site C.
        try await fixture.store(
            db, p, (1...12).map { n in (n, n <= 8 ? "1.0" : "2.0", "user-\(n % 4)", Double(n), nil) })
        for n in 1...12 {
            let site = n <= 4 ? "item(at:) -O" : n <= 8 ? "item(at:) -Onone" : "share(_:among:)"
            try await symbols.save(
                SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: v1Grouping(site),
                reportID: try await fixture.rowID(db, n), at: Date())
        }
        try await db.database.pool.write { try $0.execute(sql: "UPDATE reports SET grouping_version = 1") }
        let old = try await insights.issues(matching: IssueQuery(project: p.id), now: Date())
        #expect(old.count == 3)
        let issueA = try #require(old.first { $0.culprit == "item(at:) -O" }?.id)
        let issueB = try #require(old.first { $0.culprit == "item(at:) -Onone" }?.id)
        _ = try await insights.setStatus(.closed, issue: issueA, project: p.id, at: Date())
        let issueC = try #require(old.first { $0.culprit == "share(_:among:)" }?.id)
        _ = try await insights.setStatus(
            .muted, issue: issueC, project: p.id, by: "the CLI", at: Date(timeIntervalSince1970: 1_000))
        let alertsBefore = try await insights.alerts(project: p.id, limit: 50)
        #expect(alertsBefore.count == 3)

        // When the worker finds nothing pending, it queues the outdated reports, a bounded batch at a time…
        #expect(try await symbols.requeueOutdatedGrouping(limit: 5) == 5)
        #expect(try await symbols.requeueOutdatedGrouping(limit: 100) == 7)
        #expect(try await symbols.requeueOutdatedGrouping(limit: 100) == 0)  // all pending already
        // …and groups them with the new rules (the worker's work, done here report by report in id order).
        // C splits in two under the new rules (9, 10 and 11, 12).
        for n in 1...12 {
            let site = n <= 8 ? "Inventory.item(at:)" : n <= 10 ? "Splitter.share(_:among:)" : "Splitter.divide(_:)"
            try await symbols.save(
                SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: v2Grouping(site),
                reportID: try await fixture.rowID(db, n), at: Date())
        }

        // Then: one issue per site; A kept its id and its status; B merged into it and its alert followed.
        let after = try await insights.issues(matching: IssueQuery(project: p.id), now: Date())
        #expect(after.count == 3)
        let merged = try #require(after.first { $0.culprit == "Inventory.item(at:)" })
        #expect(merged.id == issueA)
        #expect(merged.status == .closed)
        #expect(merged.events == 8)
        #expect(merged.fingerprint.version == Grouping.version)
        #expect(merged.title == "Fatal error: Index out of range")
        // Both parts of C keep its status, and who set it and when.
        let parts = after.filter { $0.culprit?.hasPrefix("Splitter.") == true }
        #expect(parts.map(\.events).sorted() == [2, 2])
        #expect(parts.allSatisfy { $0.status == .muted })
        for part in parts {
            let change = try await insights.issue(part.id, project: p.id, now: Date())?.statusChange
            #expect(change?.by == "the CLI")
            #expect(change?.at == Date(timeIntervalSince1970: 1_000))
        }
        #expect(try await insights.issue(issueB, project: p.id, now: Date()) == nil)
        let alertsAfter = try await insights.alerts(project: p.id, limit: 50)
        #expect(alertsAfter.count == alertsBefore.count)  // no new-issue or regression alert from the migration
        #expect(alertsAfter.allSatisfy { $0.issue != issueB })
        #expect(alertsAfter.filter { $0.issue == issueA }.count == 2)
        try await fixture.expectIssueRollupsMatchRecount(db)
        let outdated = try await db.database.pool.read {
            try Int.fetchOne(
                $0, sql: "SELECT count(*) FROM reports WHERE grouping_version < ?", arguments: [Grouping.version])
        }
        #expect(outdated == 0)
        #expect(try await symbols.requeueOutdatedGrouping(limit: 100) == 0)
    }
}
