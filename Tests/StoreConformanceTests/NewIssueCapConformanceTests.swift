import FaultlineCore
import Foundation
import GRDB
import PostgresNIO
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// The new-issue cap (issue #39, finding 11) on each engine: a project that has made `new_issue_cap` issues in the
/// window files the reports of further new fingerprints into its one overflow issue, raises one folded alert for the
/// window instead of one per issue, keeps every event, and leaves the other project alone. A batch saved at once and
/// the same reports saved one at a time count the same.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct NewIssueCapConformanceTests {
    static let day0 = GroupingConformanceTests.day0
    static let hour: Double = 3_600
    static let overflow = IssueFiling.overflowFingerprint.rawValue

    /// Files reports `ns` of `project`, each at its own crash site (a new fingerprint), or at `site` when given.
    static func file(
        _ stores: Stores, _ project: Project, _ ns: [Int], site: String? = nil, at seconds: Double, oneAtATime: Bool
    )
        async throws
    {
        let ids = try await GroupingConformanceTests.store(
            stores, project, ns.map { ($0, "1.0", "u\($0 % 3)", Double($0)) })
        let outcomes = zip(ns, ids).map { n, id in GroupingConformanceTests.outcome(id, site: site ?? "site\(n)") }
        let date = Date(timeIntervalSince1970: seconds)
        if oneAtATime {
            for outcome in outcomes { try await stores.symbolication.saveAll([outcome], at: date) }
        } else {
            try await stores.symbolication.saveAll(outcomes, at: date)
        }
    }

    /// Per project slug: issues, the overflow issue's events, all events, new-issue alerts (of them folded).
    static func tally(_ stores: Stores, _ slug: String) async throws -> [String] {
        let project = "(SELECT id FROM projects WHERE slug = '\(slug)')"
        return [
            try await stores.texts("SELECT count(*) FROM issues WHERE project_id = \(project)"),
            try await stores.texts(
                "SELECT coalesce(sum(events), 0) FROM issues WHERE project_id = \(project) AND fingerprint = '\(overflow)'"
            ),
            try await stores.texts("SELECT coalesce(sum(events), 0) FROM issues WHERE project_id = \(project)"),
            try await stores.texts("SELECT count(*) FROM alerts WHERE project_id = \(project) AND kind = 'new_issue'"),
            try await stores.texts(
                "SELECT count(*) FROM alerts WHERE project_id = \(project) AND dedupe_key LIKE 'new-held:%'"),
        ].map { $0.joined() }
    }

    @Test(arguments: Engine.allCases) func aProjectPastItsCapHoldsNewIssuesInOneOverflowIssue(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { batched in
            try await withStores(engine) { single in
                for (stores, oneAtATime) in [(batched, false), (single, true)] {
                    let a = try await createProject(stores, "app")
                    let b = try await createProject(stores, "other")
                    var settings = AlertSettings()
                    settings.newIssueCap = 3
                    try await stores.alerts.saveSettings(
                        settings, project: a.id, at: Date(timeIntervalSince1970: Self.day0))

                    // Given project A's cap of 3 an hour: 8 new fingerprints in one save, and B's first crash with them.
                    try await Self.file(stores, a, Array(1...8), at: Self.day0 + 60, oneAtATime: oneAtATime)
                    try await Self.file(stores, b, [100], at: Self.day0 + 60, oneAtATime: oneAtATime)
                    // Then A has 3 issues and the overflow issue, holding the other 5 events; 3 alerts and 1 folded one.
                    #expect(
                        try await Self.tally(stores, "app") == ["4", "5", "8", "4", "1"],
                        "\(engine) one at a time: \(oneAtATime)")
                    // And B, under its own (default) cap, files and announces its first issue as always.
                    #expect(try await Self.tally(stores, "other") == ["1", "0", "1", "1", "0"])
                    let held = try await stores.texts(
                        """
                        SELECT a.issue_id || ' ' || a.title FROM alerts a JOIN issues i ON i.id = a.issue_id
                        WHERE a.dedupe_key LIKE 'new-held:%' AND i.fingerprint = '\(Self.overflow)'
                        """)
                    #expect(
                        held.count == 1
                            && held[0].hasSuffix(
                                "More than 3 new issues in 60 min: further new issues are held in one issue, not announced"
                            ))
                    #expect(
                        try await stores.texts("SELECT title FROM issues WHERE fingerprint = '\(Self.overflow)'")
                            == [IssueFiling.overflowGrouping.title])

                    // When, later in the hour, two more new fingerprints come and a report of an issue A has:
                    let kept = try #require(
                        try await stores.texts(
                            """
                            SELECT title FROM issues WHERE project_id = \(a.id.rawValue) AND fingerprint <> '\(Self.overflow)'
                            """
                        ).first)
                    let keptSite = String(kept.dropFirst("crash in ".count))
                    try await Self.file(stores, a, [9, 10], at: Self.day0 + 1_800, oneAtATime: oneAtATime)
                    try await Self.file(stores, a, [11], site: keptSite, at: Self.day0 + 1_800, oneAtATime: oneAtATime)
                    // Then the new ones are held without another alert, and the known one joins its issue.
                    #expect(try await Self.tally(stores, "app") == ["4", "7", "11", "4", "1"])

                    // When the next hour starts: A's budget is back, and a new fingerprint gets its issue and alert.
                    try await Self.file(stores, a, [12], at: Self.day0 + Self.hour + 5, oneAtATime: oneAtATime)
                    #expect(try await Self.tally(stores, "app") == ["5", "7", "12", "5", "1"])
                    try await GroupingConformanceTests.expectIssueRollupsMatchRecount(stores)
                    // And no report was left without an issue.
                    #expect(try await stores.texts("SELECT count(*) FROM reports WHERE issue_id IS NULL") == ["0"])
                }
            }
        }
    }

    @Test(arguments: Engine.allCases) func theWindowCountComesFromTheCreatedAtIndex(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let a = try await createProject(stores, "app")
            let b = try await createProject(stores, "other")
            try await Self.file(stores, a, [1, 2], at: Self.day0 + 60, oneAtATime: false)
            // A stored cap no validation would accept (settings written before the bounds) holds; it never fails a filing.
            var broken = AlertSettings()
            broken.newIssueCap = -5
            try await stores.alerts.saveSettings(broken, project: b.id, at: Date(timeIntervalSince1970: Self.day0))
            try await Self.file(stores, b, [3], at: Self.day0 + 60, oneAtATime: false)
            try await Self.file(stores, b, [4], at: Self.day0 + 60, oneAtATime: true)
            #expect(try await Self.tally(stores, "other") == ["1", "2", "2", "1", "1"])
            // Every issue made by filing records when it was made (the server's clock, not the report's).
            #expect(
                try await stores.texts("SELECT DISTINCT created_at FROM issues WHERE project_id = \(a.id.rawValue)")
                    == [String(Int64(Self.day0 + 60) * 1000)])
            // The count reads the index, never the project's issues: the query plan says so on both engines.
            let count =
                "SELECT count(*) FROM (SELECT 1 FROM issues WHERE project_id = 1 AND created_at >= 0 AND created_at < 1 LIMIT 100) AS w"
            var plan: [String] = []
            if let sqlite = stores.sqlite {
                plan = try await sqlite.pool.read { db in
                    try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + count).map { $0["detail"] }
                }
            } else if let postgres = stores.postgres {
                plan = try await postgres.write { connection in
                    // A table this small is read whole whatever its indexes: the planner is told to prefer them.
                    try await connection.query("SET LOCAL enable_seqscan = off", logger: postgres.logger)
                    var lines: [String] = []
                    for try await line in try await connection.query(
                        PostgresQuery(unsafeSQL: "EXPLAIN " + count), logger: postgres.logger
                    )
                    .decode(String.self) {
                        lines.append(line)
                    }
                    return lines
                }
            }
            #expect(plan.contains { $0.contains("issues_by_created") }, "\(plan)")
            #expect(!plan.contains { $0.contains("SCAN issues") || $0.contains("Seq Scan") }, "\(plan)")
        }
    }
}
