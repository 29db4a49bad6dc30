import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage
@testable import Storage

/// Both engines write a filing plan (`FilingPlanner`, pure) identically: the same plans, made from the state each
/// engine read, leave the same issues, rollup rows and alerts. Plans are given directly to each engine's reader and
/// writer (`BatchGrouper`, `PostgresBatchGrouper`), without the symbolication store around them.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct FilingPlanConformanceTests {
    static let t0: Int64 = 1_767_261_600_000

    static func grouping(_ name: String, title: String, rank: Int) -> GroupingResult {
        GroupingResult(
            fingerprint: Fingerprint(version: Grouping.version, hash: name), source: .stack, components: [name],
            title: title, culprit: "\(name)()",
            titleRank: rank)
    }

    static func reports(
        project: ProjectID, first: Int64,
        _ rows: [(GroupingResult, Int64, String?, String?, [(key: String, value: String)])]
    )
        -> [FilingPlanner.Report]
    {
        rows.enumerated().map { index, row in
            let (g, offset, release, user, tags) = row
            return FilingPlanner.Report(
                id: first + Int64(index), project: project, kind: "crash", occurredAt: t0 + offset, release: release,
                user: user,
                sessionID: nil, issueID: nil, early: nil, groupingVersion: Grouping.version, grouping: g,
                groupingJSON: StoredJSON.encode(g), tags: tags)
        }
    }

    /// Reads the state for `reports` on `stores`' engine, plans them, writes the plan; the plan.
    static func file(_ reports: [FilingPlanner.Report], now: Int64, _ stores: Stores) async throws -> FilingPlan {
        if let sqlite = stores.sqlite {
            return try await sqlite.pool.write { db in
                let state = try BatchGrouper.readFilingState(for: reports, now: now, reads: BatchReads(), db)
                let plan = try FilingPlanner.plan(reports, state: state, now: now)
                _ = try BatchGrouper.write(plan, db)
                return plan
            }
        }
        let postgres = try #require(stores.postgres)
        return try await postgres.write { connection in
            let reads = PostgresBatchReads(identities: postgres.identities)
            let state = try await PostgresBatchGrouper.readFilingState(
                for: reports, now: now, reads: reads, connection, postgres.logger)
            let plan = try FilingPlanner.plan(reports, state: state, now: now)
            _ = try await PostgresBatchGrouper.write(plan, connection, postgres.logger)
            return plan
        }
    }

    /// Every row a filing writes, by fingerprint rather than id, one text a row.
    static let tables = [
        """
        SELECT i.fingerprint || '|' || i.title || '|' || coalesce(i.culprit, '∅') || '|' || i.title_rank || '|' || i.status || '|'
            || CASE WHEN i.regressed THEN 1 ELSE 0 END || '|' || i.events || '|' || i.users || '|' || i.repeat_users || '|'
            || i.early_events || '|' || i.timed_events || '|' || i.first_seen || '|' || i.last_seen || '|'
            || coalesce(i.first_release, '∅') || '|' || coalesce(i.last_release, '∅') || '|' || i.kind FROM issues i
        """,
        """
        SELECT i.fingerprint || '|' || r.release || '|' || r.events || '|' || r.users || '|' || r.first_seen || '|' || r.last_seen
        FROM issue_releases r JOIN issues i ON i.id = r.issue_id
        """,
        "SELECT i.fingerprint || '|' || d.day || '|' || d.events || '|' || d.users FROM issue_days d JOIN issues i ON i.id = d.issue_id",
        "SELECT i.fingerprint || '|' || u.user_key || '|' || u.events FROM issue_users u JOIN issues i ON i.id = u.issue_id",
        """
        SELECT i.fingerprint || '|' || u.release || '|' || u.user_key || '|' || u.events
        FROM issue_release_users u JOIN issues i ON i.id = u.issue_id
        """,
        "SELECT i.fingerprint || '|' || u.day || '|' || u.user_key || '|' || u.events FROM issue_day_users u JOIN issues i ON i.id = u.issue_id",
        "SELECT i.fingerprint || '|' || t.key || '|' || t.value || '|' || t.events FROM issue_tags t JOIN issues i ON i.id = t.issue_id",
        """
        SELECT a.kind || '|' || coalesce(i.fingerprint, '∅') || '|' || coalesce(a.release, '∅') || '|' || a.title
        FROM alerts a LEFT JOIN issues i ON i.id = a.issue_id
        """,
    ]

    @Test func bothEnginesWriteTheSamePlansIdentically() async throws {
        let a = Self.grouping("aaaa", title: "SIGSEGV", rank: Grouping.TitleRank.signal)
        let aBetter = Self.grouping("aaaa", title: "Fatal error: out of range", rank: Grouping.TitleRank.cause)
        let b = Self.grouping("bbbb", title: "SIGABRT", rank: Grouping.TitleRank.signal)
        let c = Self.grouping("cccc", title: "SIGBUS", rank: Grouping.TitleRank.signal)
        let os = [(key: "os", value: "linux")]
        var written: [Engine: [[String]]] = [:]
        var plans: [Engine: [FilingPlan]] = [:]
        for engine in Engine.allCases {
            try await withStores(engine) { stores in
                let project = try await createProject(stores)
                var settings = AlertSettings()
                settings.newIssueCap = 2
                try await stores.alerts.saveSettings(
                    settings, project: project.id, at: Date(timeIntervalSince1970: 1_767_261_600))
                // New issues: two take the cap, the third fingerprint is held in a new overflow issue.
                let first = try await Self.file(
                    Self.reports(
                        project: project.id, first: 1,
                        [
                            (a, 0, "1.0", "h1:u1", os), (a, 1_000, "1.0", "h1:u1", os), (b, 2_000, nil, "h1:u2", []),
                            (a, 90_000_000, "1.1", "h1:u2", os), (c, 3_000, "1.0", nil, []),
                        ]),
                    now: Self.t0 + 100, stores)
                // The first issue is closed; a batch regresses it in a new release with a better title, adds to the rest.
                try await stores.execute(
                    "UPDATE issues SET status = 'closed' WHERE fingerprint = '\(a.fingerprint.rawValue)'")
                let second = try await Self.file(
                    Self.reports(
                        project: project.id, first: 10,
                        [
                            (aBetter, 5_000, "2.0", "h1:u1", os), (a, -5_000, "2.0", "h1:u3", os),
                            (b, 6_000, "1.0", "h1:u2", []),
                            (c, 7_000, "1.0", nil, []),
                        ]),
                    now: Self.t0 + 200, stores)
                plans[engine] = [first, second]
                var rows: [[String]] = []
                for sql in Self.tables { rows.append(try await stores.texts(sql)) }
                written[engine] = rows
            }
        }
        let sqlite = try #require(written[.sqlite])
        #expect(written[.postgres] == sqlite)
        // The same decisions, from the state each engine read.
        #expect(plans[.sqlite]?.map(\.newIssues) == plans[.postgres]?.map(\.newIssues))
        #expect(plans[.sqlite]?.map(\.alerts) == plans[.postgres]?.map(\.alerts))
        // And what they are: a reopened, retitled issue of 5 events from 3 users (u1 repeating), first seen earlier now.
        let fa = a.fingerprint.rawValue
        #expect(
            sqlite[0].contains(
                "\(fa)|Fatal error: out of range|aaaa()|3|open|1|5|3|1|0|0|\(Self.t0 - 5_000)|\(Self.t0 + 90_000_000)|2.0|1.1|crash"
            ))
        #expect(sqlite[0].count == 3)
        #expect(
            sqlite[0].contains {
                $0.hasPrefix(IssueFiling.overflowFingerprint.rawValue + "|") && $0.contains("|2|0|0|0|0|")
            })
        #expect(sqlite[3].contains("\(fa)|h1:u1|3"))
        #expect(sqlite[7].filter { $0.hasPrefix("regression|") } == ["regression|\(fa)|2.0|Fatal error: out of range"])
        // Two new issues announced, and the window's one folded alert for those held (the second batch's is the same).
        #expect(sqlite[7].filter { $0.hasPrefix("new_issue|") }.count == 3)
    }
}
