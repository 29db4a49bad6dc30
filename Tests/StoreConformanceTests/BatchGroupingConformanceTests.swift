import FaultlineCore
import Foundation
import Testing

/// A batch of results counts exactly what the same results saved one at a time count, on each engine, in the cases
/// where saving a batch at once differs from saving report after report (PostgreSQL writes each table once per batch,
/// from deltas added up in memory): many reports of one issue from several users, releases, days and sessions in one
/// batch; a batch mixing new and existing issues; reports in it moving between issues; a closed issue regressing in it.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct BatchGroupingConformanceTests {
    let day0 = GroupingConformanceTests.day0

    /// One report of the scenario.
    struct Row {
        var n: Int
        var site: String
        var release: String?
        var user: String?
        /// Seconds after day0.
        var offset: Double
        var session: String?
        var device: String
        var titleRank = Grouping.TitleRank.signal
    }

    /// 48 reports of a() and b(): 3 releases and none, 5 users and none, 3 days, sessions known, unknown and none.
    static let first: [Row] = (1...48).map { (n: Int) -> Row in
        let site = n % 6 == 0 ? "b()" : "a()"
        let release: String? = n % 5 == 0 ? nil : "1.\(n % 3)"
        let user: String? = n % 7 == 0 ? nil : "u\(n % 5)"
        let offset = Double(n % 3) * 86_400 + Double(n * 7 % 31)
        let session: String? = n % 4 == 0 ? "s\(n % 12)" : nil
        return Row(
            n: n, site: site, release: release, user: user, offset: offset, session: session, device: "Pixel \(n % 3)")
    }

    /// 52 new reports after a() was closed: more of a() (seen releases first, then 2.0, which it never had), of b(), of a
    /// new c() whose later reports have a more specific title, and of a new e() whose first report has no release.
    static let second: [Row] = (49...100).map { (n: Int) -> Row in
        if n >= 96 {
            // e(): its first report has no release; the next, later in time, gives it its first release.
            let offsets: [Int: Double] = [96: 10, 97: 50, 98: 60, 99: 70, 100: 55]
            return Row(
                n: n, site: "e()", release: n == 96 || n == 99 ? nil : "3.\(n % 2)", user: "u\(n % 2)",
                offset: 2 * 86_400 + offsets[n, default: 0], session: nil, device: "Pixel 1")
        }
        let site = n % 4 == 0 ? "b()" : n % 4 == 1 ? "c()" : "a()"
        let release: String? = n < 70 ? "1.\(n % 3)" : n % 3 == 0 ? nil : "2.0"
        let user: String? = n % 9 == 0 ? nil : "u\(n % 6)"
        let offset = Double(n % 2) * 86_400 + Double(n % 13)
        let session: String? = n % 3 == 0 ? "s\(n % 12)" : nil
        let rank = site == "c()" && n > 80 ? Grouping.TitleRank.cause : Grouping.TitleRank.signal
        return Row(
            n: n, site: site, release: release, user: user, offset: offset, session: session, device: "Pixel \(n % 4)",
            titleRank: rank)
    }

    /// Reports of the first batch moved by late symbols in the second: two from a() to a new d(), one from b() to c().
    static let moved: [(n: Int, site: String)] = [(1, "d()"), (2, "d()"), (6, "c()")]

    static func grouping(_ row: Row, site: String? = nil) -> GroupingInput {
        let site = site ?? row.site
        let specific = row.titleRank > Grouping.TitleRank.signal
        return GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site],
                title: specific ? "index out of range in \(site)" : "crash in \(site)", culprit: specific ? nil : site,
                titleRank: row.titleRank),
            tags: ["device": row.device, "os": "Android 14"])
    }

    func store(_ db: Stores, _ p: Project, _ rows: [Row]) async throws -> [Int: Int64] {
        let prepared = rows.map { row -> PreparedReport in
            var r = Report(
                eventID: eventID(row.n), kind: .crash, timestamp: Date(timeIntervalSince1970: day0 + row.offset))
            r.app = AppInfo(version: row.release)
            r.userID = row.user
            r.sessionID = row.session.flatMap(SessionID.init)
            return PreparedReport(report: r, range: 0..<1)
        }
        _ = try await db.ingest.commit([
            .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: prepared))
        ])
        var ids: [Int: Int64] = [:]
        for row in rows { ids[row.n] = try await db.reportID(eventID(row.n)) }
        return ids
    }

    func outcome(_ id: Int64, _ row: Row, site: String? = nil) -> SymbolicationOutcome {
        var outcome = GroupingConformanceTests.outcome(id, site: site ?? row.site)
        outcome.grouping = Self.grouping(row, site: site)
        return outcome
    }

    /// Runs the scenario on fresh stores, saving each batch whole or one result at a time.
    func run(_ db: Stores, batched: Bool) async throws {
        let p = try await createProject(db, "one")
        // Sessions s0 and s4 start at day0 (a report within their first 10 s is early); s8 is never reported.
        _ = try await db.ingest.commit([
            .sessions(
                SessionBatch(
                    project: p.id, receivedAt: Date(),
                    updates: ["s0", "s4"].map {
                        SessionUpdate(
                            sessionID: SessionID($0)!, distinctID: "u1", release: "1.0",
                            started: Date(timeIntervalSince1970: day0), status: .crashed)
                    }))
        ])
        let firstIDs = try await store(db, p, Self.first)
        let firstOutcomes = Self.first.map { outcome(firstIDs[$0.n]!, $0) }
        let when = Date(timeIntervalSince1970: day0 + 3 * 86_400)
        if batched {
            try await db.symbolication.saveAll(firstOutcomes, at: when)
        } else {
            for o in firstOutcomes { try await db.symbolication.saveAll([o], at: when) }
        }
        let a = try #require(
            try await db.insights.issues(matching: IssueQuery(project: p.id), now: when).first {
                $0.title == "crash in a()"
            })
        _ = try await db.insights.setStatus(.closed, issue: a.id, project: p.id, at: when)

        let secondIDs = try await store(db, p, Self.second)
        let byN = Dictionary(uniqueKeysWithValues: Self.first.map { ($0.n, $0) })
        let secondOutcomes =
            Self.moved.map { outcome(firstIDs[$0.n]!, byN[$0.n]!, site: $0.site) }
            + Self.second.map { outcome(secondIDs[$0.n]!, $0) }
        if batched {
            try await db.symbolication.saveAll(secondOutcomes, at: when)
        } else {
            for o in secondOutcomes { try await db.symbolication.saveAll([o], at: when) }
        }
    }

    /// Every row the scenario's grouping wrote, named by fingerprints (ids differ between two runs).
    static let snapshot = [
        """
        SELECT i.fingerprint || ' ' || i.events || '/' || i.users || '/' || i.repeat_users || '/' || i.first_seen || '/' || i.last_seen
            || '/' || coalesce(i.first_release, '-') || '/' || coalesce(i.last_release, '-') || '/' || i.early_events || '/'
            || i.timed_events || '/' || i.status || '/' || i.title || '/' || coalesce(i.culprit, '-') || '/' || i.title_rank FROM issues i
        """,
        "SELECT i.fingerprint || ' ' || (CASE WHEN i.regressed THEN 'regressed' ELSE '-' END) FROM issues i",
        "SELECT i.fingerprint || r.release || ' ' || r.events || '/' || r.users || '/' || r.first_seen || '/' || r.last_seen FROM issue_releases r JOIN issues i ON i.id = r.issue_id",
        "SELECT i.fingerprint || d.day || ' ' || d.events || '/' || d.users FROM issue_days d JOIN issues i ON i.id = d.issue_id",
        "SELECT i.fingerprint || u.user_key || ' ' || u.events FROM issue_users u JOIN issues i ON i.id = u.issue_id",
        "SELECT i.fingerprint || u.release || u.user_key || ' ' || u.events FROM issue_release_users u JOIN issues i ON i.id = u.issue_id",
        "SELECT i.fingerprint || u.day || u.user_key || ' ' || u.events FROM issue_day_users u JOIN issues i ON i.id = u.issue_id",
        "SELECT i.fingerprint || t.key || t.value || ' ' || t.events FROM issue_tags t JOIN issues i ON i.id = t.issue_id",
        "SELECT a.kind || ' ' || coalesce(a.release, '-') || ' ' || a.title || ' ' || coalesce(i.fingerprint, '-') FROM alerts a LEFT JOIN issues i ON i.id = a.issue_id",
        """
        SELECT r.event_id || ' ' || coalesce(i.fingerprint, '-') || ' '
            || (CASE WHEN r.early IS NULL THEN '-' WHEN r.early THEN 'early' ELSE 'late' END)
        FROM reports r LEFT JOIN issues i ON i.id = r.issue_id
        """,
    ]

    /// The reference is SQLite saving one result at a time (in-process, statement per row: the engine the rules were
    /// written for), so a rule PostgreSQL's set-based path reimplements (first/last release, distinct users) is checked
    /// against it, not against itself.
    @Test(arguments: Engine.allCases) func aBatchOfManyIssuesUsersReleasesAndDaysCountsWhatOneAtATimeCounts(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { batched in
            try await withStores(.sqlite) { single in
                try await run(batched, batched: true)
                try await run(single, batched: false)
                for query in Self.snapshot {
                    #expect(try await batched.unkeyedTexts(query) == single.unkeyedTexts(query), "\(query)")
                }
                try await expectRecounts(batched)
                try await expectRecounts(single)
                try await expectTheScenarioOutcome(batched)
            }
        }
    }

    /// Users, releases and tag values that Swift's `==` calls equal (`é` precomposed, and `e` + a combining accent)
    /// are different rows to the database: a batch counts them apart, as one result at a time does.
    @Test(arguments: Engine.allCases) func canonicallyEqualUsersReleasesAndTagsStayApartInABatch(_ engine: Engine)
        async throws
    {
        let rows = (1...8).map { n in
            Row(
                n: 200 + n, site: "a()", release: n % 2 == 0 ? "caf\u{E9}" : "cafe\u{301}",
                user: n % 4 < 2 ? "r\u{E9}mi" : "re\u{301}mi",
                offset: Double(n), session: nil, device: n % 3 == 0 ? "t\u{E9}l" : "te\u{301}l")
        }
        try await withStores(engine) { batched in
            try await withStores(.sqlite) { single in
                for (db, isBatched) in [(batched, true), (single, false)] {
                    let p = try await createProject(db, "one")
                    let ids = try await store(db, p, rows)
                    let outcomes = rows.map { outcome(ids[$0.n]!, $0) }
                    let when = Date(timeIntervalSince1970: day0 + 86_400)
                    if isBatched {
                        try await db.symbolication.saveAll(outcomes, at: when)
                    } else {
                        for o in outcomes { try await db.symbolication.saveAll([o], at: when) }
                    }
                }
                for query in Self.snapshot {
                    #expect(try await batched.unkeyedTexts(query) == single.unkeyedTexts(query), "\(query)")
                }
                try await GroupingConformanceTests.expectIssueRollupsMatchRecount(batched)
                #expect(try await batched.texts("SELECT users FROM issues") == ["2"])
                #expect(try await batched.texts("SELECT events FROM issue_tags") == ["2", "6", "8"])  // two devices, one os
                #expect(try await batched.texts("SELECT count(*) FROM issue_releases") == ["2"])
            }
        }
    }

    /// Every counter of the issue rollups equals a recount from the reports, and the tags the count of what was sent.
    func expectRecounts(_ db: Stores, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await GroupingConformanceTests.expectIssueRollupsMatchRecount(db, sourceLocation: sourceLocation)
        let recounts = [
            (
                "SELECT i.id || ' ' || i.early_events || '/' || i.timed_events || '/' || i.first_seen || '/' || i.last_seen FROM issues i",
                """
                SELECT issue_id || ' ' || sum(CASE WHEN early THEN 1 ELSE 0 END) || '/' || count(early) || '/' || min(occurred_at) || '/'
                    || max(occurred_at) FROM reports WHERE issue_id IS NOT NULL GROUP BY issue_id
                """
            ),
            (
                "SELECT issue_id || ' ' || user_key || ' ' || events FROM issue_users",
                "SELECT issue_id || ' ' || user_key || ' ' || count(*) FROM reports WHERE issue_id IS NOT NULL AND user_key IS NOT NULL GROUP BY issue_id, user_key"
            ),
            (
                "SELECT issue_id || ' ' || release || ' ' || user_key || ' ' || events FROM issue_release_users",
                """
                SELECT issue_id || ' ' || coalesce(release, '') || ' ' || user_key || ' ' || count(*) FROM reports
                WHERE issue_id IS NOT NULL AND user_key IS NOT NULL GROUP BY issue_id, coalesce(release, ''), user_key
                """
            ),
            (
                "SELECT issue_id || ' ' || day || ' ' || user_key || ' ' || events FROM issue_day_users",
                """
                SELECT issue_id || ' ' || (occurred_at / 86400000) || ' ' || user_key || ' ' || count(*) FROM reports
                WHERE issue_id IS NOT NULL AND user_key IS NOT NULL GROUP BY issue_id, occurred_at / 86400000, user_key
                """
            ),
            (
                "SELECT issue_id || ' ' || release || ' ' || first_seen || '/' || last_seen FROM issue_releases",
                """
                SELECT issue_id || ' ' || coalesce(release, '') || ' ' || min(occurred_at) || '/' || max(occurred_at) FROM reports
                WHERE issue_id IS NOT NULL GROUP BY issue_id, coalesce(release, '')
                """
            ),
        ]
        for (stored, recount) in recounts {
            #expect(try await db.unkeyedTexts(stored) == db.texts(recount), "\(stored)", sourceLocation: sourceLocation)
        }
        // Tags are not in the reports table: counted from the scenario's own rows, by the site each report ends in.
        let movedTo = Dictionary(uniqueKeysWithValues: Self.moved.map { ($0.n, $0.site) })
        var expected: [String: Int] = [:]
        for row in Self.first + Self.second {
            let site = movedTo[row.n] ?? row.site
            let fingerprint = Grouping.fingerprint(kind: .crash, source: .stack, components: [site]).rawValue
            expected["\(fingerprint) device \(row.device)", default: 0] += 1
            expected["\(fingerprint) os Android 14", default: 0] += 1
        }
        #expect(
            try await db.texts(
                "SELECT i.fingerprint || ' ' || t.key || ' ' || t.value || ' ' || t.events FROM issue_tags t JOIN issues i ON i.id = t.issue_id"
            )
                == expected.map { "\($0.key) \($0.value)" }.sorted(),
            sourceLocation: sourceLocation)
    }

    /// What the scenario must end in, from its rows: every report filed, five issues, a() reopened as regressed once.
    func expectTheScenarioOutcome(_ db: Stores) async throws {
        let all = Self.first + Self.second
        #expect(try await db.texts("SELECT count(*) FROM reports WHERE issue_id IS NULL") == ["0"])
        #expect(try await db.texts("SELECT sum(events) FROM issues") == [String(all.count)])
        let movedTo = Dictionary(uniqueKeysWithValues: Self.moved.map { ($0.n, $0.site) })
        var events: [String: Int] = [:]
        for row in all { events[movedTo[row.n] ?? row.site, default: 0] += 1 }
        let bySite = events.map { site, count in
            "\(Grouping.fingerprint(kind: .crash, source: .stack, components: [site]).rawValue) \(count)"
        }
        #expect(try await db.texts("SELECT fingerprint || ' ' || events FROM issues") == bySite.sorted())
        // a() was closed and got 2.0: open again, regressed, one regression alert for 2.0. c() took the most specific title.
        let a = Grouping.fingerprint(kind: .crash, source: .stack, components: ["a()"]).rawValue
        #expect(try await db.texts("SELECT status FROM issues WHERE fingerprint = '\(a)'") == ["open"])
        #expect(
            try await db.texts("SELECT count(*) FROM issues WHERE regressed = \(db.engine == .sqlite ? "1" : "true")")
                == ["1"])
        let c = Grouping.fingerprint(kind: .crash, source: .stack, components: ["c()"]).rawValue
        #expect(
            try await db.texts("SELECT title FROM issues WHERE fingerprint = '\(c)'") == ["index out of range in c()"])
        // New reports alerted for a(), b() and e(); c() and d() were made by reports moving (already alerted on); a() regressed.
        #expect(
            try await db.texts("SELECT kind || ' ' || coalesce(release, '-') || ' ' || title FROM alerts")
                == [
                    "new_issue - crash in e()", "new_issue 1.0 crash in b()", "new_issue 1.1 crash in a()",
                    "regression 2.0 crash in a()",
                ])
    }

    /// A row the database refuses in a rollup table fails its report alone: the rest of the batch is grouped once.
    @Test(arguments: Engine.allCases) func aRefusedRollupRowFailsItsReportAloneInABatch(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let p = try await createProject(db, "one")
            let rows = (1...12).map { n in
                Row(
                    n: n, site: n % 2 == 0 ? "a()" : "b()", release: "1.\(n % 3)", user: "u\(n % 4)", offset: Double(n),
                    session: nil,
                    device: n == 7 ? "refused" : "Pixel \(n % 3)")
            }
            let ids = try await store(db, p, rows)
            switch engine {
            case .sqlite:
                try await db.execute(
                    """
                    CREATE TRIGGER refuse_tag BEFORE INSERT ON issue_tags WHEN NEW.value = 'refused'
                    BEGIN SELECT RAISE(ABORT, 'refused'); END
                    """)
            case .postgres:
                try await db.execute("ALTER TABLE issue_tags ADD CONSTRAINT refuse_tag CHECK (value <> 'refused')")
            }
            try await db.symbolication.saveAll(rows.map { outcome(ids[$0.n]!, $0) }, at: Date())
            #expect(
                try await db.texts(
                    "SELECT symbolication || ' ' || coalesce(issue_id, 0) FROM reports WHERE id = \(ids[7]!)") == [
                        "missing 0"
                    ])
            #expect(try await db.texts("SELECT count(*) FROM reports WHERE issue_id IS NOT NULL") == ["11"])
            #expect(try await db.texts("SELECT sum(events) FROM issues") == ["11"])
            #expect(try await db.texts("SELECT count(*) FROM issue_tags WHERE value = 'refused'") == ["0"])
            try await GroupingConformanceTests.expectIssueRollupsMatchRecount(db)
        }
    }
}
