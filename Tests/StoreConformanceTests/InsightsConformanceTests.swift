import FaultlineCore
import Foundation
import TestSupport
import Testing

/// The insights (InsightsReader, IssueStateStore) on each engine, over data made by the real stores: issues and
/// their details after grouping and moves, regressions, signals, release health, top issues, retention.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct InsightsConformanceTests {
    let day0 = StoreRows.day0

    func setUp(_ stores: Stores) async throws -> (Stores, Project) {
        (stores, try await createProject(stores))
    }

    /// Stores reports: (n, release, user, seconds after day0, session).
    func store(
        _ db: Stores, _ p: Project, _ rows: [(Int, String?, String?, Double, String?)], receivedAt: Date = Date()
    ) async throws {
        let prepared = StoreRows.reports(rows)
        _ = try await db.ingest.commit([
            .reports(ReportBatch(project: p.id, receivedAt: receivedAt, payload: payload, reports: prepared))
        ])
    }

    func grouping(_ site: String, device: String = "Pixel 7") -> GroupingInput {
        StoreRows.grouping(site, device: device)
    }

    func rowID(_ db: Stores, _ n: Int) async throws -> Int64 {
        try await db.reportID(eventID(n))
    }

    @discardableResult
    func group(_ db: Stores, _ n: Int, _ site: String, at: Date = Date()) async throws -> IssueID? {
        try await db.symbolication.save(
            SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: grouping(site),
            reportID: try await rowID(db, n), at: at)
    }

    func expectIssueRollupsMatchRecount(_ db: Stores, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await GroupingConformanceTests.expectIssueRollupsMatchRecount(db, sourceLocation: sourceLocation)
    }

    @Test(arguments: Engine.allCases) func issueRollupsEqualARecountThroughGroupingAndMoves(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            // Given 40 reports over 3 releases, 7 users, 3 days, grouped into two crash sites…
            var rows: [(Int, String?, String?, Double, String?)] = []
            for n in 1...40 {
                rows.append(
                    (
                        n, n % 4 == 0 ? nil : "1.\(n % 3)", n % 5 == 0 ? nil : "user-\(n % 7)",
                        Double(n % 3) * 86_400 + Double(n), nil
                    ))
            }
            try await store(db, p, rows)
            for n in 1...40 { try await group(db, n, n % 2 == 0 ? "parse()" : "render()") }
            try await expectIssueRollupsMatchRecount(db)
            let insights = db.insights
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
            // New-issue alerts for the two issues new reports made (render() is 1, parse() 2); render()'s outlives
            // its issue; decode(), made by moving reports already alerted on, alerts no one.
            #expect(
                try await db.texts("SELECT kind || ':' || coalesce(issue_id, 0) FROM alerts") == [
                    "new_issue:0", "new_issue:2",
                ])
        }
    }

    /// Issue #13: the versions a full render compares its pages with: those of the project's own issues among the
    /// ids asked for (another project's issue and unknown ids are left out), equal to each issue's own version, over
    /// more ids than one SQLite statement takes.
    @Test(arguments: Engine.allCases) func issueVersionsOfIDsAreThoseOfTheProjectsOwnIssues(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            let other = try await createProject(db, "other")
            try await store(db, p, (1...3).map { ($0, "1.0", "user-\($0)", Double($0), nil) })
            try await store(db, other, [(4, "1.0", "user-4", 4, nil)])
            let a = try #require(try await group(db, 1, "parse()"))
            try await group(db, 2, "parse()")
            let b = try #require(try await group(db, 3, "render()"))
            let theirs = try #require(try await group(db, 4, "parse()"))
            var ids = (1...1_200).map { IssueID(Int64(1_000_000 + $0)) }
            ids.insert(a, at: 0)
            ids.insert(theirs, at: 600)
            ids.append(b)
            let insights = db.insights
            let versions = try await insights.issueVersions(of: ids, project: p.id)
            #expect(Set(versions.keys) == [a, b])
            let versionA = try await insights.issueVersion(a, project: p.id)
            let versionB = try await insights.issueVersion(b, project: p.id)
            #expect(versions[a] == versionA && versions[b] == versionB)
            #expect(versions[a]?.events == 2 && versions[b]?.events == 1)
            #expect(try await insights.issueVersions(of: [], project: p.id).isEmpty)
            let own = try await insights.issueVersions(of: [theirs, a], project: other.id)
            let versionTheirs = try await insights.issueVersion(theirs, project: other.id)
            #expect(own.count == 1 && own[theirs] == versionTheirs)
        }
    }

    @Test(arguments: Engine.allCases) func regressionReopensAClosedIssueOnceForANewRelease(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            try await store(
                db, p,
                [
                    (1, "1.0", "u1", 0, nil), (2, "1.0", "u2", 10, nil), (3, "2.0", "u3", 20, nil),
                    (4, "2.0", "u4", 30, nil),
                ])
            let issue = try #require(try await group(db, 1, "parse()"))
            let insights = db.insights
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
    }

    @Test(arguments: Engine.allCases) func earlyAndRepetitiveSignalsComeFromSessionsAndUsers(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            let start = Date(timeIntervalSince1970: day0)
            _ = try await db.ingest.commit([
                .sessions(
                    SessionBatch(
                        project: p.id, receivedAt: Date(),
                        updates: [
                            SessionUpdate(
                                sessionID: SessionID("s1")!, distinctID: "u1", release: "1.0", started: start,
                                status: .crashed),
                            SessionUpdate(
                                sessionID: SessionID("s2")!, distinctID: "u1", release: "1.0", started: start,
                                status: .crashed),
                        ]))
            ])
            try await store(db, p, [(1, "1.0", "u1", 2, "s1"), (2, "1.0", "u1", 5, "s2")])
            let issue = try #require(try await group(db, 1, "boot()"))
            try await group(db, 2, "boot()")
            let summary = try #require(try await db.insights.issue(issue, project: nil, now: start)?.summary)
            #expect(summary.signals.early)
            #expect(summary.signals.repetitive)
            #expect(summary.signals.fresh)
            #expect(summary.users == 1)
        }
    }

    @Test(arguments: Engine.allCases) func releaseHealthIsReadFromTheSessionRollups(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            try await IngestConformanceTests.storeSessions(db, p, day0: day0)
            // That the rollups equal a recount is checked in IngestConformanceTests; here, that the insights read them.
            let reader = db.insights
            let days = try await reader.health(
                project: p.id, release: nil, from: DayNumber(rawValue: 20_400), through: DayNumber(rawValue: 20_402))
            #expect(days.map(\.health.sessions).reduce(0, +) == 60)
            let releases = try await reader.releases(
                project: p.id, now: Date(timeIntervalSince1970: day0 + 3 * 86_400), limit: 10)
            #expect(releases.map(\.health.sessions).reduce(0, +) == 60)
            #expect(releases.compactMap(\.adoption).reduce(0, +) > 0.999)
        }
    }

    @Test(arguments: Engine.allCases) func retentionPrunesRawReportsAndKeepsCountsExact(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            let old = Date(timeIntervalSince1970: day0 - 100 * 86_400)
            try await store(
                db, p, [(1, "1.0", "u1", -100 * 86_400, nil), (2, "1.0", "u2", -100 * 86_400, nil)], receivedAt: old)
            try await store(db, p, [(3, "1.0", "u3", 0, nil)], receivedAt: Date(timeIntervalSince1970: day0))
            for n in 1...3 { try await group(db, n, "parse()") }
            let insights = db.insights
            let before = try #require(try await insights.issues(matching: IssueQuery(project: p.id), now: Date()).first)
            let pruned = try await db.retention.prune(
                before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100,
                now: Date(timeIntervalSince1970: 1_800_000_000))
            #expect(pruned.reports == 2)
            #expect(try await db.texts("SELECT count(*) FROM reports") == ["1"])
            let after = try #require(try await insights.issues(matching: IssueQuery(project: p.id), now: Date()).first)
            #expect(after.events == before.events)
            #expect(after.users == 3)
            #expect(try await insights.issue(after.id, project: nil, now: Date())?.samples.count == 1)
            // The issue lost reports: it is marked changed at the prune's time, so its page is rendered again without
            // the pruned samples (issue #39).
            let version = try await insights.issueVersions(of: [after.id], project: p.id)[after.id]
            #expect(version?.changedAt == 1_800_000_000_000)
            #expect(
                try await db.retention.prune(
                    before: Date(timeIntervalSince1970: day0 - 90 * 86_400), limit: 100,
                    now: Date(timeIntervalSince1970: 1_800_000_000)) == PruneResult())
        }
    }

    @Test(arguments: Engine.allCases) func topIssuesRankByUsersInTheWindow(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
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
            let insights = db.insights
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

    @Test(arguments: Engine.allCases) func topIssuesOfAKindRankOnlyThatKind(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            let now = Date(timeIntervalSince1970: day0 + 10 * 86_400)
            // Given a non-fatal ("timeout()") of 6 users, a crash ("segv()") of 3 and a crash ("abort()") of 1,
            // all of release 2.4.0 and of today,
            var rows: [(Int, String?, String?, Double, String?)] = []
            for n in 0..<6 { rows.append((100 + n, "2.4.0", "t\(n)", 10 * 86_400 - 60, nil)) }
            for n in 0..<3 { rows.append((200 + n, "2.4.0", "s\(n)", 10 * 86_400 - 60, nil)) }
            rows.append((300, "2.4.0", "a0", 10 * 86_400 - 60, nil))
            // (the first six rows are the non-fatal's)
            let prepared = StoreRows.reports(rows).enumerated().map { index, prepared in
                var prepared = prepared
                if index < 6 { prepared.report.kind = .nonfatal }
                return prepared
            }
            _ = try await db.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: prepared))
            ])
            for (n, _, _, _, _) in rows {
                try await group(db, n, n < 200 ? "timeout()" : n < 300 ? "segv()" : "abort()")
            }
            let insights = db.insights
            for window in [TopIssueWindow.last24Hours, .last7Days, .release("2.4.0")] {
                // when ranked by kind, with room for one issue only,
                let crash = try await insights.topIssues(
                    project: p.id, window: window, category: .crash, now: now, limit: 1)
                let nonFatal = try await insights.topIssues(
                    project: p.id, window: window, category: .nonFatal, now: now, limit: 5)
                let all = try await insights.topIssues(project: p.id, window: window, now: now, limit: 1)
                // then the crash with the most users tops the crashes, whatever the non-fatal reached,
                #expect(crash.map(\.issue.title) == ["crash in segv()"], "\(window)")
                #expect(crash.map(\.users) == [3], "\(window)")
                #expect(nonFatal.map(\.issue.kind) == [.nonfatal], "\(window)")
                #expect(nonFatal.map(\.users) == [6], "\(window)")
                // and without a kind every issue is ranked together, as before.
                #expect(all.map(\.issue.kind) == [.nonfatal], "\(window)")
            }
            let week = try await insights.topIssues(
                project: p.id, window: .last7Days, category: .crash, now: now, limit: 5)
            #expect(week.map(\.users) == [3, 1])
            #expect(week.map { $0.previous?.users } == [0, 0])
        }
    }
}
