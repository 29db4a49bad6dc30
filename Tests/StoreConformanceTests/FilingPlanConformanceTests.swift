import FaultlineCore
import Foundation
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Both engines write a filing plan (`FilingPlanner`, pure) identically: the same plans, made from the state each
/// engine read, leave the same issues, rollup rows and alerts. Plans are given directly to each engine's reader and
/// writer (`SQLiteBatchGrouper`, `PostgresBatchGrouper`), without the symbolication store around them.
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
        try await fileResolved(reports, now: now, stores).plan
    }

    /// `file`, with each report's issue id as written.
    static func fileResolved(_ reports: [FilingPlanner.Report], now: Int64, _ stores: Stores) async throws
        -> (plan: FilingPlan, issues: [Int64: Int64])
    {
        if let sqlite = stores.sqlite {
            return try await sqlite.pool.write { db in
                let state = try SQLiteBatchGrouper.readFilingState(for: reports, now: now, reads: BatchReads(), db)
                let plan = try FilingPlanner.plan(reports, state: state, now: now)
                return (plan, try SQLiteBatchGrouper.write(plan, db).mapValues(\.issueID))
            }
        }
        let postgres = try #require(stores.postgres)
        return try await postgres.write { connection in
            let reads = PostgresBatchReads(identities: postgres.identities)
            let state = try await PostgresBatchGrouper.readFilingState(
                for: reports, now: now, reads: reads, connection, postgres.logger)
            let plan = try FilingPlanner.plan(reports, state: state, now: now)
            return (plan, try await PostgresBatchGrouper.write(plan, connection, postgres.logger).mapValues(\.issue))
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

    /// The rows of every table in `tables`, one list a table.
    static func written(_ stores: Stores) async throws -> [[String]] {
        var rows: [[String]] = []
        for sql in tables { rows.append(try await stores.texts(sql)) }
        return rows
    }

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
                written[engine] = try await Self.written(stores)
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

    /// Moves and migrations in one plan: an issue emptied and deleted (its fingerprint created again later in the same
    /// batch), a report moving to a new issue, an issue of an older grouping version rekeyed and then split, the split
    /// keeping its status. Both engines leave the same rows, and the counters equal what the reports add up to.
    @Test func bothEnginesWriteMovesAndMigrationsIdentically() async throws {
        let a = Self.grouping("aaaa", title: "SIGSEGV", rank: Grouping.TitleRank.signal)
        let b = Self.grouping("bbbb", title: "SIGABRT", rank: Grouping.TitleRank.signal)
        let c = Self.grouping("cccc", title: "SIGBUS", rank: Grouping.TitleRank.signal)
        let d = Self.grouping("dddd", title: "SIGILL", rank: Grouping.TitleRank.signal)
        let e = Self.grouping("eeee", title: "SIGFPE", rank: Grouping.TitleRank.signal)
        let oldVersion = Grouping.version - 1
        var old = Self.grouping("oooo", title: "SIGTRAP", rank: Grouping.TitleRank.signal)
        old.fingerprint = Fingerprint(version: oldVersion, hash: "oooo")
        let os = [(key: "os", value: "linux")]
        var written: [Engine: [[String]]] = [:]
        for engine in Engine.allCases {
            try await withStores(engine) { stores in
                let project = try await createProject(stores)
                let first = try await Self.fileResolved(
                    Self.reports(
                        project: project.id, first: 1,
                        [
                            (a, 0, "1.0", "h1:u1", os), (a, 1_000, "1.0", "h1:u2", os), (b, 2_000, "1.0", "h1:u1", os),
                            (old, 3_000, "1.0", "h1:u3", os), (old, 4_000, "2.0", "h1:u3", os),
                        ]),
                    now: Self.t0 + 100, stores)
                try await stores.execute(
                    "UPDATE issues SET status = 'closed' WHERE fingerprint = '\(old.fingerprint.rawValue)'")
                // Report 3 (b's only event) moves to a: b empties and goes; report 10, new, creates b again after it.
                // Report 1 moves from a to a new issue c. Reports 4 and 5 migrate: the first rekeys their issue to d,
                // the second splits off to e, closed like its issue.
                var moved = Self.reports(
                    project: project.id, first: 1,
                    [
                        (c, 0, "1.0", "h1:u1", os), (a, 2_000, "1.0", "h1:u1", os), (d, 3_000, "1.0", "h1:u3", os),
                        (e, 4_000, "2.0", "h1:u3", os),
                    ])
                for (index, id) in [Int64(1), 3, 4, 5].enumerated() {
                    moved[index].id = id
                    moved[index].issueID = first.issues[id]
                    if id >= 4 { moved[index].groupingVersion = oldVersion }
                }
                let again = Self.reports(project: project.id, first: 10, [(b, 9_000, "3.0", "h1:u4", [])])
                let second = try await Self.fileResolved(moved + again, now: Self.t0 + 200, stores)
                #expect(second.plan.deletions.count == 1)
                written[engine] = try await Self.written(stores)
            }
        }
        let sqlite = try #require(written[.sqlite])
        #expect(written[.postgres] == sqlite)
        let f = { (g: GroupingResult) in g.fingerprint.rawValue }
        // Issues: a keeps report 2 and gains report 3; b is new again with report 10; c has report 1; d (rekeyed) has
        // report 4 and e report 5, both closed; the old fingerprint is gone.
        #expect(sqlite[0].count == 5)
        #expect(
            sqlite[0].contains { $0.hasPrefix("\(f(a))|SIGSEGV|aaaa()|\(Grouping.TitleRank.signal)|open|0|2|2|0|") })
        #expect(
            sqlite[0].contains { $0.hasPrefix("\(f(b))|SIGABRT|bbbb()|\(Grouping.TitleRank.signal)|open|0|1|1|0|") })
        #expect(
            sqlite[0].contains { $0.hasPrefix("\(f(d))|SIGILL|dddd()|\(Grouping.TitleRank.signal)|closed|0|1|1|0|") })
        #expect(
            sqlite[0].contains { $0.hasPrefix("\(f(e))|SIGFPE|eeee()|\(Grouping.TitleRank.signal)|closed|0|1|1|0|") })
        #expect(!sqlite[0].contains { $0.hasPrefix(f(old) + "|") })
        // Rollup rows: a's users are u1 (report 3) and u2 (report 2), u1 no longer twice; d lost its 2.0 release.
        #expect(sqlite[3].filter { $0.hasPrefix(f(a) + "|") }.sorted() == ["\(f(a))|h1:u1|1", "\(f(a))|h1:u2|1"])
        #expect(sqlite[1].filter { $0.hasPrefix(f(d) + "|") }.map { $0.split(separator: "|")[1] } == ["1.0"])
        #expect(sqlite[6].filter { $0.hasPrefix(f(a) + "|") } == ["\(f(a))|os|linux|2"])
    }
    /// A move that takes the last event of a closed issue's release row, then a new report of that issue in that
    /// release, in one batch: as filed one report at a time, the issue regresses (it is no longer seen in the release)
    /// and the row's first and last event are the new report's alone.
    @Test func aMoveThatEmptiesAReleaseRowIsSeenByTheBatchsLaterReports() async throws {
        let a = Self.grouping("aaaa", title: "SIGSEGV", rank: Grouping.TitleRank.signal)
        let b = Self.grouping("bbbb", title: "SIGABRT", rank: Grouping.TitleRank.signal)
        var written: [Engine: [[String]]] = [:]
        for engine in Engine.allCases {
            try await withStores(engine) { stores in
                let project = try await createProject(stores)
                let first = try await Self.fileResolved(
                    Self.reports(
                        project: project.id, first: 1, [(a, 0, "1.0", "h1:u1", []), (a, 1_000, "2.0", "h1:u2", [])]),
                    now: Self.t0 + 100, stores)
                try await stores.execute(
                    "UPDATE issues SET status = 'closed' WHERE fingerprint = '\(a.fingerprint.rawValue)'")
                // Report 1, a's only event in 1.0, moves to b; report 10, new, is a's in 1.0.
                var moved = Self.reports(project: project.id, first: 1, [(b, 0, "1.0", "h1:u1", [])])
                moved[0].issueID = first.issues[1]
                let again = Self.reports(project: project.id, first: 10, [(a, 50_000, "1.0", "h1:u3", [])])
                _ = try await Self.fileResolved(moved + again, now: Self.t0 + 200, stores)
                written[engine] = try await Self.written(stores)
            }
        }
        let sqlite = try #require(written[.sqlite])
        #expect(written[.postgres] == sqlite)
        let fa = a.fingerprint.rawValue
        // a: reopened and regressed, 2 events; its 1.0 row holds report 10 alone, bounds and all.
        #expect(sqlite[0].contains { $0.hasPrefix("\(fa)|SIGSEGV|aaaa()|\(Grouping.TitleRank.signal)|open|1|2|") })
        #expect(
            sqlite[1].filter { $0.hasPrefix(fa + "|1.0|") } == ["\(fa)|1.0|1|1|\(Self.t0 + 50_000)|\(Self.t0 + 50_000)"]
        )
        #expect(sqlite[7].filter { $0.hasPrefix("regression|") } == ["regression|\(fa)|1.0|SIGSEGV"])
    }

    /// The new-issue cap after a deletion, with the window already past the cap (the cap was lowered): each engine counts
    /// the window past the cap by the issues the batch may delete, so emptying one of the window's issues leaves the
    /// window at the cap, as a count read again would, and a new fingerprint is still held.
    @Test func aDeletionInAWindowPastTheCapOpensNoPlace() async throws {
        let a = Self.grouping("aaaa", title: "SIGSEGV", rank: Grouping.TitleRank.signal)
        let x = Self.grouping("xxxx", title: "SIGBUS", rank: Grouping.TitleRank.signal)
        let y = Self.grouping("yyyy", title: "SIGILL", rank: Grouping.TitleRank.signal)
        let g = Self.grouping("gggg", title: "SIGFPE", rank: Grouping.TitleRank.signal)
        for engine in Engine.allCases {
            try await withStores(engine) { stores in
                let project = try await createProject(stores)
                let first = try await Self.fileResolved(
                    Self.reports(
                        project: project.id, first: 1,
                        [(a, 0, "1.0", nil, []), (x, 1_000, "1.0", nil, []), (y, 2_000, "1.0", nil, [])]),
                    now: Self.t0 + 100, stores)
                var settings = AlertSettings()
                settings.newIssueCap = 2
                try await stores.alerts.saveSettings(
                    settings, project: project.id, at: Date(timeIntervalSince1970: 1_767_261_600))
                // Report 2 (x's only event) moves to y: x empties and goes. Report 10, new, has a new fingerprint.
                var moved = Self.reports(project: project.id, first: 2, [(y, 1_000, "1.0", nil, [])])
                moved[0].issueID = first.issues[2]
                let new = Self.reports(project: project.id, first: 10, [(g, 9_000, "1.0", nil, [])])
                let second = try await Self.fileResolved(moved + new, now: Self.t0 + 200, stores)
                #expect(second.plan.deletions.map(\.issue) == [first.issues[2]])
                let fingerprints = try await stores.texts("SELECT fingerprint FROM issues")
                #expect(!fingerprints.contains(g.fingerprint.rawValue), "\(engine)")
                #expect(fingerprints.contains(IssueFiling.overflowFingerprint.rawValue), "\(engine)")
            }
        }
    }
}
