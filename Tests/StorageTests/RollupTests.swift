import FaultlineCore
import Foundation
import GRDB
@testable import Storage
import Testing

/// The incremental rollups against a recount from the raw rows: after any sequence of grouping, moving,
/// session updates and pruning, every counter equals what a full recount says (or, after pruning, what it
/// said before).
@Suite struct RollupTests {
    let day0: Double = 86_400 * 20_400  // a UTC midnight

    func setUp() async throws -> (TempDatabase, Project) {
        let db = try TempDatabase()
        let p = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)), createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        return (db, p)
    }

    /// Stores reports: (n, release, user, seconds after day0, session).
    func store(_ db: TempDatabase, _ p: Project, _ rows: [(Int, String?, String?, Double, String?)], receivedAt: Date = Date()) async throws {
        let prepared = rows.map { n, release, user, offset, session -> PreparedReport in
            var r = Report(eventID: eventID(n), kind: .crash, timestamp: Date(timeIntervalSince1970: day0 + offset))
            r.app = AppInfo(version: release)
            r.userID = user
            r.sessionID = session.flatMap(SessionID.init)
            return PreparedReport(report: r, range: 0..<1)
        }
        _ = try await SQLiteIngestStore(database: db.database).commit([
            .reports(ReportBatch(project: p.id, receivedAt: receivedAt, payload: payload, reports: prepared))
        ])
    }

    func grouping(_ site: String, device: String = "Pixel 7") -> GroupingInput {
        GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site], title: "crash in \(site)", culprit: site),
            tags: ["device": device, "os": "Android 14"])
    }

    func rowID(_ db: TempDatabase, _ n: Int) async throws -> Int64 {
        try await db.database.pool.read { try Int64.fetchOne($0, sql: "SELECT id FROM reports WHERE event_id = ?", arguments: [eventID(n).rawValue])! }
    }

    @discardableResult
    func group(_ db: TempDatabase, _ n: Int, _ site: String, at: Date = Date()) async throws -> IssueID? {
        try await SQLiteSymbolicationStore(database: db.database).save(
            SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: grouping(site), reportID: try await rowID(db, n), at: at)
    }

    /// Compares every issue counter with a recount from `reports`.
    func expectIssueRollupsMatchRecount(_ db: TempDatabase, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await db.database.pool.read { db in
            let mismatches = try Row.fetchAll(db, sql: """
                SELECT i.id, i.events, i.users, i.repeat_users, r.events AS re, r.users AS ru, coalesce(rep.n, 0) AS rrep
                FROM issues i
                LEFT JOIN (SELECT issue_id, count(*) AS events, count(DISTINCT user_key) AS users FROM reports GROUP BY issue_id) r
                    ON r.issue_id = i.id
                LEFT JOIN (SELECT issue_id, count(*) AS n FROM (SELECT issue_id, user_key FROM reports WHERE user_key IS NOT NULL
                    GROUP BY issue_id, user_key HAVING count(*) > 1) GROUP BY issue_id) rep ON rep.issue_id = i.id
                WHERE i.events != coalesce(r.events, 0) OR i.users != coalesce(r.users, 0) OR i.repeat_users != coalesce(rep.n, 0)
                """)
            #expect(mismatches.isEmpty, "issues differ from a recount: \(mismatches)", sourceLocation: sourceLocation)
            let releaseMismatches = try Row.fetchAll(db, sql: """
                WITH recount AS (SELECT issue_id, coalesce(release, '') AS release, count(*) AS events, count(DISTINCT user_key) AS users
                                 FROM reports WHERE issue_id IS NOT NULL GROUP BY 1, 2)
                SELECT * FROM recount r FULL OUTER JOIN issue_releases ir ON ir.issue_id = r.issue_id AND ir.release = r.release
                WHERE r.events IS NOT ir.events OR r.users IS NOT ir.users
                """)
            #expect(releaseMismatches.isEmpty, "issue_releases differ: \(releaseMismatches)", sourceLocation: sourceLocation)
            let dayMismatches = try Row.fetchAll(db, sql: """
                WITH recount AS (SELECT issue_id, occurred_at / 86400000 AS day, count(*) AS events, count(DISTINCT user_key) AS users
                                 FROM reports WHERE issue_id IS NOT NULL GROUP BY 1, 2)
                SELECT * FROM recount r FULL OUTER JOIN issue_days d ON d.issue_id = r.issue_id AND d.day = r.day
                WHERE r.events IS NOT d.events OR r.users IS NOT d.users
                """)
            #expect(dayMismatches.isEmpty, "issue_days differ: \(dayMismatches)", sourceLocation: sourceLocation)
        }
    }

    @Test func issueRollupsEqualARecountThroughGroupingAndMoves() async throws {
        let (db, p) = try await setUp()
        // Given 40 reports over 3 releases, 7 users, 3 days, grouped into two crash sites…
        var rows: [(Int, String?, String?, Double, String?)] = []
        for n in 1...40 {
            rows.append((n, n % 4 == 0 ? nil : "1.\(n % 3)", n % 5 == 0 ? nil : "user-\(n % 7)", Double(n % 3) * 86_400 + Double(n), nil))
        }
        try await store(db, p, rows)
        for n in 1...40 { try await group(db, n, n % 2 == 0 ? "parse()" : "render()") }
        try await expectIssueRollupsMatchRecount(db)
        let insights = SQLiteInsightsReader(database: db.database)
        let issues = try await insights.issues(matching: IssueQuery(project: p.id), now: Date())
        #expect(issues.count == 2)
        #expect(issues.map(\.events).reduce(0, +) == 40)

        // When late symbols move some reports to a third site, and the rest of "render()" to "parse()"…
        for n in stride(from: 1, through: 40, by: 4) { try await group(db, n, "decode()") }
        try await expectIssueRollupsMatchRecount(db)
        for n in stride(from: 3, through: 40, by: 4) { try await group(db, n, "parse()") }
        try await expectIssueRollupsMatchRecount(db)

        // Then the emptied issue is gone, and every count still equals a recount.
        let after = try await insights.issues(matching: IssueQuery(project: p.id), now: Date())
        #expect(Set(after.map(\.title)) == ["crash in parse()", "crash in decode()"])
        #expect(after.map(\.events).reduce(0, +) == 40)
        let detail = try #require(try await insights.issue(after[0].id, project: p.id, now: Date()))
        #expect(detail.breakdowns["device"]?.first?.value == "Pixel 7")
        #expect(detail.breakdowns["device"]?.first?.events == detail.summary.events)
        #expect(detail.samples.count == min(10, detail.summary.events))
        #expect(detail.grouping.components.count == 1)
    }

    @Test func regressionReopensAClosedIssueOnceForANewRelease() async throws {
        let (db, p) = try await setUp()
        try await store(db, p, [(1, "1.0", "u1", 0, nil), (2, "1.0", "u2", 10, nil), (3, "2.0", "u3", 20, nil), (4, "2.0", "u4", 30, nil)])
        let issue = try #require(try await group(db, 1, "parse()"))
        let insights = SQLiteInsightsReader(database: db.database)
        _ = try await insights.setStatus(.closed, issue: issue, project: p.id, at: Date())
        // An event from a release the issue was seen in keeps it closed.
        try await group(db, 2, "parse()")
        #expect(try await insights.issue(issue, project: nil, now: Date())?.summary.status == .closed)
        // One from a new release reopens it as regressed, and records a regression alert.
        try await group(db, 3, "parse()")
        let reopened = try #require(try await insights.issue(issue, project: nil, now: Date())?.summary)
        #expect(reopened.status == .open)
        #expect(reopened.signals.regressed)
        try await group(db, 4, "parse()")
        let alerts = try await insights.alerts(project: p.id, limit: 10)
        #expect(alerts.map(\.kind).sorted { $0.rawValue < $1.rawValue } == [.newIssue, .regression])
        #expect(alerts.first { $0.kind == .regression }?.release == "2.0")
        // Muted issues never regress or alert.
        _ = try await insights.setStatus(.muted, issue: issue, project: nil, at: Date())
        try await store(db, p, [(5, "3.0", "u5", 40, nil)])
        try await group(db, 5, "parse()")
        #expect(try await insights.issue(issue, project: nil, now: Date())?.summary.status == .muted)
        #expect(try await insights.alerts(project: p.id, limit: 10).count == 2)
    }

    @Test func earlyAndRepetitiveSignalsComeFromSessionsAndUsers() async throws {
        let (db, p) = try await setUp()
        let start = Date(timeIntervalSince1970: day0)
        _ = try await SQLiteIngestStore(database: db.database).commit([
            .sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: [
                SessionUpdate(sessionID: SessionID("s1")!, distinctID: "u1", release: "1.0", started: start, status: .crashed),
                SessionUpdate(sessionID: SessionID("s2")!, distinctID: "u1", release: "1.0", started: start, status: .crashed),
            ]))
        ])
        try await store(db, p, [(1, "1.0", "u1", 2, "s1"), (2, "1.0", "u1", 5, "s2")])
        let issue = try #require(try await group(db, 1, "boot()"))
        try await group(db, 2, "boot()")
        let summary = try #require(try await SQLiteInsightsReader(database: db.database).issue(issue, project: nil, now: start)?.summary)
        #expect(summary.signals.early)
        #expect(summary.signals.repetitive)
        #expect(summary.signals.fresh)
        #expect(summary.users == 1)
    }

    @Test func releaseHealthIsReadFromTheSessionRollups() async throws {
        let (db, p) = try await setUp()
        let store = SQLiteIngestStore(database: db.database)
        // Given 60 sessions of 12 users over 2 releases and 3 days, some crashing later, some errored, some
        // retried, some updated after their end…
        var updates: [SessionUpdate] = []
        for n in 0..<60 {
            let started = Date(timeIntervalSince1970: day0 + Double(n % 3) * 86_400 + Double(n))
            let user = n % 9 == 0 ? nil : "user-\(n % 12)"
            updates.append(SessionUpdate(sessionID: SessionID("s\(n)")!, distinctID: user, release: n % 2 == 0 ? "1.0" : "2.0", started: started, status: .ok))
        }
        _ = try await store.commit([.sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: updates))])
        var ends: [SessionUpdate] = []
        for n in 0..<60 {
            var end = updates[n]
            end.status = n % 7 == 0 ? .crashed : n % 11 == 0 ? .abnormal : .exited
            end.errors = n % 5 == 0 ? 2 : 0
            ends.append(end)
            if n % 4 == 0 { ends.append(end) }  // a retry
            if n % 6 == 0 {
                var late = end
                late.status = .exited
                ends.append(late)  // after the end: ignored
            }
        }
        _ = try await store.commit([.sessions(SessionBatch(project: p.id, receivedAt: Date(), updates: ends))])

        // That the rollups equal a recount is checked on both engines (StoreConformanceTests); here, that the
        // insights read them.
        let reader = SQLiteInsightsReader(database: db.database)
        let days = try await reader.health(project: p.id, release: nil, from: DayNumber(rawValue: 20_400), through: DayNumber(rawValue: 20_402))
        #expect(days.map(\.health.sessions).reduce(0, +) == 60)
        let releases = try await reader.releases(project: p.id, now: Date(timeIntervalSince1970: day0 + 3 * 86_400), limit: 10)
        #expect(releases.map(\.health.sessions).reduce(0, +) == 60)
        #expect(releases.compactMap(\.adoption).reduce(0, +) > 0.999)
    }

    @Test func retentionPrunesRawReportsAndKeepsCountsExact() async throws {
        let (db, p) = try await setUp()
        let old = Date(timeIntervalSince1970: day0 - 100 * 86_400)
        try await store(db, p, [(1, "1.0", "u1", -100 * 86_400, nil), (2, "1.0", "u2", -100 * 86_400, nil)], receivedAt: old)
        try await store(db, p, [(3, "1.0", "u3", 0, nil)], receivedAt: Date(timeIntervalSince1970: day0))
        for n in 1...3 { try await group(db, n, "parse()") }
        let insights = SQLiteInsightsReader(database: db.database)
        let before = try #require(try await insights.issues(matching: IssueQuery(project: p.id), now: Date()).first)
        let pruned = try await SQLiteRetentionStore(database: db.database).prune(before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100)
        #expect(pruned.reports == 2)
        #expect(try await SQLiteReportReader(database: db.database).counts().reports == 1)
        let after = try #require(try await insights.issues(matching: IssueQuery(project: p.id), now: Date()).first)
        #expect(after.events == before.events)
        #expect(after.users == 3)
        #expect(try await insights.issue(after.id, project: nil, now: Date())?.samples.count == 1)
        #expect(try await SQLiteRetentionStore(database: db.database).prune(before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100) == PruneResult())
    }

    /// Attachments (a Sentry event's files: logs, minidumps) go when their retention period ends, as reports do;
    /// they were kept forever before.
    @Test func retentionPrunesAttachmentsPastTheirPeriod() async throws {
        let (db, p) = try await setUp()
        func envelope(_ n: Int, at date: Date) -> IngestWrite {
            .envelope(EnvelopeWrite(
                project: p.id, receivedAt: date,
                event: ReportBatch(project: p.id, receivedAt: date, payload: payload, reports: [report(n)]), sessions: [], discarded: [],
                attachments: [Attachment(filename: "log-\(n).txt", contentType: "text/plain", attachmentType: nil, bytes: Array("user@example.com".utf8))],
                eventID: eventID(n)))
        }
        let old = Date(timeIntervalSince1970: day0 - 100 * 86_400)
        _ = try await SQLiteIngestStore(database: db.database).commit([envelope(1, at: old), envelope(2, at: old), envelope(3, at: Date(timeIntervalSince1970: day0))])
        let retention = SQLiteRetentionStore(database: db.database)
        let pruned = try await retention.prune(before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100)
        #expect(pruned.attachments == 2)
        let left = try await db.database.pool.read { db in try String.fetchAll(db, sql: "SELECT filename FROM attachments") }
        #expect(left == ["log-3.txt"])
        #expect(try await retention.prune(before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100).isEmpty)
    }

    @Test func topIssuesRankByUsersInTheWindow() async throws {
        let (db, p) = try await setUp()
        let now = Date(timeIntervalSince1970: day0 + 10 * 86_400)
        var rows: [(Int, String?, String?, Double, String?)] = []
        // "a": 5 users today; "b": 3 users today but 20 users 3 days ago; "c": one user, many events.
        for n in 0..<5 { rows.append((100 + n, "1.0", "a\(n)", 10 * 86_400 - 60, nil)) }
        for n in 0..<3 { rows.append((200 + n, "1.0", "b\(n)", 10 * 86_400 - 60, nil)) }
        for n in 0..<20 { rows.append((300 + n, "1.0", "old\(n)", 7 * 86_400, nil)) }
        for n in 0..<9 { rows.append((400 + n, "2.0", "c", 10 * 86_400 - 60, nil)) }
        // The windows before: "a" had 2 users 36 hours ago (the 24 hours before), "c" 2 events 10 days ago (the
        // 7 days before).
        for n in 0..<2 { rows.append((500 + n, "1.0", "a-before\(n)", 10 * 86_400 - 36 * 3_600, nil)) }
        for n in 0..<2 { rows.append((600 + n, "2.0", "c", 0, nil)) }
        try await store(db, p, rows)
        for (n, _, _, _, _) in rows {
            try await group(db, n, n < 200 || (n >= 500 && n < 600) ? "a()" : n < 400 ? "b()" : "c()")
        }
        let insights = SQLiteInsightsReader(database: db.database)
        let day = try await insights.topIssues(project: p.id, window: .last24Hours, now: now, limit: 10)
        #expect(day.map(\.issue.title) == ["crash in a()", "crash in b()", "crash in c()"])
        #expect(day.map(\.users) == [5, 3, 1])
        #expect(day.map { $0.previous?.users } == [2, 0, 0])
        #expect(day.map { $0.previous?.events } == [2, 0, 0])
        let week = try await insights.topIssues(project: p.id, window: .last7Days, now: now, limit: 10)
        #expect(week.map(\.issue.title) == ["crash in b()", "crash in a()", "crash in c()"])
        #expect(week.map(\.users) == [23, 7, 1])
        #expect(week.map { $0.previous?.users } == [0, 0, 1])
        #expect(week.map { $0.previous?.events } == [0, 0, 2])
        let release = try await insights.topIssues(project: p.id, window: .release("2.0"), now: now, limit: 10)
        #expect(release.map(\.events) == [11])
        #expect(release.first?.previous == nil)
    }
}
