import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Users per device model and OS (issue #35, `issue_tag_users` and `issue_tags.users`) on each engine, through the real
/// stores: exact with repeated users and reports without a user, unchanged by a retried report and a report filed
/// again, moved with a report that changes issue, merged without counting a shared user twice, and read by the issue
/// detail's breakdowns.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct TagUsersConformanceTests {
    static let now = IssueMergeConformanceTests.now

    /// Stores reports `(n, site, user, device)` of `project` (release 1.0) and files them under their site's grouping
    /// with their device (OS `Android 14`, as `StoreRows.grouping` gives); their ids by n.
    @discardableResult
    static func file(_ stores: Stores, _ project: Project, _ rows: [(Int, String, String?, String)]) async throws
        -> [Int: Int64]
    {
        let ids = try await GroupingConformanceTests.store(
            stores, project, rows.map { ($0.0, "1.0", $0.2, Double($0.0) * 60) })
        let byNumber = Dictionary(uniqueKeysWithValues: zip(rows.map(\.0), ids))
        try await refile(stores, rows.map { (byNumber[$0.0] ?? 0, $0.1, $0.3) })
        return byNumber
    }

    /// Files the reports `(id, site, device)` again, as the symbolication worker does.
    static func refile(_ stores: Stores, _ reports: [(Int64, String, String)]) async throws {
        let outcomes = reports.map { id, site, device in
            SymbolicationOutcome(
                reportID: id, result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                grouping: StoreRows.grouping(site, device: device), filesSeen: nil, modules: [:])
        }
        try await stores.symbolication.saveAll(outcomes, at: now)
    }

    static func fingerprint(_ site: String) -> String { StoreRows.grouping(site).grouping.fingerprint.rawValue }

    /// The breakdown `key` of `issue` as its detail reads it: `value events users` per row.
    static func breakdown(_ stores: Stores, _ issue: Int64, _ key: String, project: Project) async throws -> [String] {
        let detail = try #require(try await stores.insights.issue(IssueID(issue), project: project.id, now: now))
        return (detail.breakdowns[key] ?? []).map { "\($0.value) \($0.events) \($0.users.map(String.init) ?? "-")" }
    }

    /// Every tag row's users equal its per-user rows, and no per-user row lacks its tag row.
    static func expectTagUsersMatchTheirRows(
        _ stores: Stores, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let stored = try await stores.texts(
            "SELECT issue_id || '/' || key || '/' || value || ' ' || users FROM issue_tags")
        let recount = try await stores.texts(
            """
            SELECT t.issue_id || '/' || t.key || '/' || t.value || ' ' || (SELECT count(*) FROM issue_tag_users u
                WHERE u.issue_id = t.issue_id AND u.key = t.key AND u.value = t.value) FROM issue_tags t
            """)
        #expect(stored == recount, "issue_tags.users differ from their rows", sourceLocation: sourceLocation)
        let orphans = try await stores.texts(
            """
            SELECT count(*) FROM issue_tag_users u WHERE NOT EXISTS (SELECT 1 FROM issue_tags t
                WHERE t.issue_id = u.issue_id AND t.key = u.key AND t.value = u.value)
            """)
        #expect(orphans == ["0"], sourceLocation: sourceLocation)
        #expect(
            try await stores.texts("SELECT count(*) FROM issue_tag_users WHERE user_key NOT LIKE 'h1:%'") == ["0"],
            "a per-user row holds a keyed hash, never the user id", sourceLocation: sourceLocation)
    }

    @Test(arguments: Engine.allCases) func usersPerDeviceAndOSAreExact(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            // Given: issue a with u1 twice and u2 on an iPhone, u1 and a report without a user on a Pixel; issue b
            // with u2 and u3 on an iPhone.
            let ids = try await Self.file(
                stores, p,
                [
                    (1, "a", "u1", "iPhone16,1"), (2, "a", "u1", "iPhone16,1"), (3, "a", "u2", "iPhone16,1"),
                    (4, "a", "u1", "Pixel 8"), (5, "a", nil, "Pixel 8"), (6, "b", "u2", "iPhone16,1"),
                    (7, "b", "u3", "iPhone16,1"),
                ])
            let a = try #require(try await IssueMergeConformanceTests.issue(stores, Self.fingerprint("a")))
            let b = try #require(try await IssueMergeConformanceTests.issue(stores, Self.fingerprint("b")))
            // Then each value counts its events and its distinct users; the OS all of a's users.
            #expect(try await Self.breakdown(stores, a, "device", project: p) == ["iPhone16,1 3 2", "Pixel 8 2 1"])
            #expect(try await Self.breakdown(stores, a, "os", project: p) == ["Android 14 5 2"])
            #expect(try await Self.breakdown(stores, b, "device", project: p) == ["iPhone16,1 2 2"])
            // The user breakdown names users, without a users count of its own.
            #expect(try await Self.breakdown(stores, a, "user", project: p).allSatisfy { $0.hasSuffix(" -") })
            try await Self.expectTagUsersMatchTheirRows(stores)

            // When a report is sent again (a retry: a duplicate) and filed again on the same issue (late symbols).
            let again = try await stores.ingest.commit([
                .reports(
                    ReportBatch(
                        project: p.id, receivedAt: Self.now, payload: payload,
                        reports: [
                            PreparedReport(
                                report: {
                                    var r = Report(
                                        eventID: eventID(1), kind: .crash,
                                        timestamp: Date(timeIntervalSince1970: GroupingConformanceTests.day0 + 60))
                                    r.app = AppInfo(version: "1.0")
                                    r.userID = "u1"
                                    return r
                                }(), range: 0..<1)
                        ]))
            ])
            #expect(again == [.reports(stored: [], duplicates: [eventID(1)])])
            try await Self.refile(stores, [(try #require(ids[1]), "a", "iPhone16,1")])
            // Then nothing is counted twice.
            #expect(try await Self.breakdown(stores, a, "device", project: p) == ["iPhone16,1 3 2", "Pixel 8 2 1"])

            // When u1's Pixel report moves to b (its grouping changed).
            try await Self.refile(stores, [(try #require(ids[4]), "b", "Pixel 8")])
            // Then a's Pixel keeps an event and no user; b's Pixel has u1.
            #expect(try await Self.breakdown(stores, a, "device", project: p) == ["iPhone16,1 3 2", "Pixel 8 1 0"])
            #expect(try await Self.breakdown(stores, b, "device", project: p) == ["iPhone16,1 2 2", "Pixel 8 1 1"])
            #expect(try await Self.breakdown(stores, b, "os", project: p) == ["Android 14 3 3"])
            try await Self.expectTagUsersMatchTheirRows(stores)

            // When b merges into a: u2, on an iPhone in both, is one user of the survivor's iPhone.
            _ = try await stores.insights.merge([IssueID(b)], into: IssueID(a), project: p.id, by: "t", at: Self.now)
            #expect(try await Self.breakdown(stores, a, "device", project: p) == ["iPhone16,1 5 3", "Pixel 8 2 1"])
            #expect(try await Self.breakdown(stores, a, "os", project: p) == ["Android 14 7 3"])
            try await Self.expectTagUsersMatchTheirRows(stores)
            try await IssueMergeConformanceTests.expectRecount(stores)
            #expect(
                try await stores.texts("SELECT count(*) FROM issue_tag_users WHERE issue_id = \(b)") == ["0"],
                "the merged issue's rows went with it")
        }
    }
}
