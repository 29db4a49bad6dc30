import FaultlineCore
import Foundation
import GRDB
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Issue #35: hangs and ANRs are a kind of their own on each engine. Filing stores the hang mark an issue's first
/// report decided (`IssueCategory`); top issues and listings select by it, so a hang ranks by its users among the
/// hangs alone; an upgrade marks the issues filed before from their titles (`v39-issue-hangs`, `pg24-issue-hangs`).
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct IssueHangConformanceTests {
    let now = Date(timeIntervalSince1970: StoreRows.day0 + 10 * 86_400)

    /// The grouping of a report at `site` titled `title`, a hang when `hang`.
    static func grouping(_ site: String, kind: ReportKind = .crash, title: String, hang: Bool = false)
        -> GroupingInput
    {
        GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: kind, source: .stack, components: [site]), source: .stack,
                components: [site], title: title, culprit: site),
            tags: ["device": "Pixel 8"], hang: hang)
    }

    /// Stores and files reports today in release 2.4.0: `users` reports (one user each) of each issue, numbered from
    /// `first` by hundreds. Each issue: (site, kind, title, hang, users).
    func file(
        _ stores: Stores, _ p: Project, _ issues: [(String, ReportKind, String, Bool, Int)]
    ) async throws {
        var prepared: [PreparedReport] = []
        var groupings: [(Int, GroupingInput)] = []
        for (index, issue) in issues.enumerated() {
            let (site, kind, title, hang, users) = issue
            for u in 0..<users {
                let n = (index + 1) * 100 + u
                var report = StoreRows.reports([(n, "2.4.0", "\(site)-user-\(u)", 10 * 86_400 - 60, nil)])[0]
                report.report.kind = kind
                prepared.append(report)
                groupings.append((n, Self.grouping(site, kind: kind, title: title, hang: hang)))
            }
        }
        _ = try await stores.ingest.commit([
            .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: prepared))
        ])
        for (n, grouping) in groupings {
            try await stores.symbolication.save(
                SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: grouping,
                reportID: try await stores.reportID(eventID(n)), at: Date())
        }
    }

    /// A copy of the SQLite database of `stores` that forgets `migration` was applied, opened by this version (which
    /// applies it again): how an upgrade from before `migration` finds the data the test left.
    static func reopened(_ stores: Stores, without migration: String) async throws -> SQLiteEngine {
        try await stores.execute("DELETE FROM grdb_migrations WHERE identifier = '\(migration)'")
        let sqlite = try #require(stores.sqlite)
        let path = sqlite.pool.path + "-previous.sqlite"
        try await sqlite.pool.writeWithoutTransaction { db in
            try db.execute(sql: "VACUUM INTO ?", arguments: [path])
        }
        return try SQLiteEngine(path: path, identities: .hmacSHA256)
    }

    @Test(arguments: Engine.allCases) func hangsRankByTheirUsersAmongTheHangsAlone(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            // Given an ANR sent as a crash (6 users), a hang sent as a non-fatal (4 users), a crash (3 users) and a
            // non-fatal (2 users), all of today and of release 2.4.0,
            try await file(
                stores, p,
                [
                    ("anr()", .crash, "ApplicationNotResponding: Application Not Responding for 5000 ms.", true, 6),
                    ("hang()", .nonfatal, "App Hanging: App hanging for at least 2000 ms.", true, 4),
                    ("segv()", .crash, "SIGSEGV: boom", false, 3),
                    ("timeout()", .nonfatal, "TimeoutError: took too long", false, 2),
                ])
            let insights = stores.insights
            for window in [TopIssueWindow.last24Hours, .last7Days, .release("2.4.0")] {
                // when each category is ranked with room for one issue,
                func top(_ category: IssueCategory?) async throws -> [String] {
                    try await insights.topIssues(
                        project: p.id, window: window, category: category, now: now, limit: category == nil ? 9 : 1
                    ).map { $0.issue.culprit ?? "" }
                }
                // then the crashes' top is the crash, though the ANR was sent as a crash and reached more users,
                #expect(try await top(.crash) == ["segv()"], "\(window)")
                // the hangs' top is the ANR, the non-fatals' the timeout (not the hang sent as a non-fatal),
                #expect(try await top(.hang) == ["anr()"], "\(window)")
                #expect(try await top(.nonFatal) == ["timeout()"], "\(window)")
                // and without a category every issue is ranked together.
                #expect(try await top(nil) == ["anr()", "hang()", "segv()", "timeout()"], "\(window)")
            }
            let hangs = try await insights.topIssues(
                project: p.id, window: .last7Days, category: .hang, now: now, limit: 5)
            #expect(hangs.map(\.users) == [6, 4])
            #expect(hangs.map(\.issue.category) == [.hang, .hang])
            #expect(hangs.map(\.issue.kind) == [.crash, .nonfatal], "each keeps the kind it was sent as")

            // A listing of one category holds that category alone, in any order and with a release filter;
            func listed(_ query: IssueQuery) async throws -> [String] {
                try await insights.issues(matching: query, now: now).map { $0.culprit ?? "" }
            }
            for order in IssueOrder.allCases {
                for release in [nil, "2.4.0"] {
                    let q = IssueQuery(project: p.id, release: release, category: .hang, order: order)
                    #expect(Set(try await listed(q)) == ["anr()", "hang()"], "\(order) \(release ?? "")")
                    #expect(try await insights.issueCount(matching: q) == 2)
                }
            }
            #expect(try await listed(IssueQuery(project: p.id, category: .crash)) == ["segv()"])
            #expect(try await listed(IssueQuery(project: p.id, category: .nonFatal)) == ["timeout()"])
            // the kind as sent still finds the fatal ones (the release gate's crashes), the ANR among them.
            #expect(Set(try await listed(IssueQuery(project: p.id, kind: .crash))) == ["anr()", "segv()"])
            // An issue's detail reads its mark too.
            let anr = try #require(
                try await insights.issues(matching: IssueQuery(project: p.id, category: .hang, order: .users), now: now)
                    .first)
            #expect(try await insights.issue(anr.id, project: p.id, now: now)?.summary.category == .hang)
        }
    }

    @Test(arguments: Engine.allCases) func anUpgradeMarksTheHangsFiledBeforeFromTheirTitles(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            // Given issues filed before the mark was stored (filed unmarked, then the column dropped): two hangs
            // whose titles open with a hang type, and two that only mention one,
            try await file(
                stores, p,
                [
                    ("anr()", .crash, "ApplicationNotResponding: Application Not Responding for 5000 ms.", false, 1),
                    ("hang()", .nonfatal, "App Hang Fully Blocked", false, 1),
                    ("mention()", .nonfatal, "Error: App Hanging: in a message", false, 1),
                    ("close()", .crash, "App HangingX: not the type", false, 1),
                ])
            try await stores.execute("DROP INDEX issues_hangs")
            try await stores.execute("ALTER TABLE issues DROP COLUMN hang")
            // when the database is opened by this version,
            switch engine {
            case .sqlite:
                let upgraded = try await Self.reopened(stores, without: "v39-issue-hangs")
                defer { try? upgraded.close() }
                #expect(try upgraded.appliedMigrations().contains("v39-issue-hangs"))
                let marked = try await upgraded.pool.read { db in
                    try String.fetchAll(db, sql: "SELECT culprit FROM issues WHERE hang = 1 ORDER BY culprit")
                }
                // then exactly the two hangs are marked,
                #expect(marked == ["anr()", "hang()"])
                let hangs = try await SQLiteInsightsReader(database: upgraded).issues(
                    matching: IssueQuery(project: p.id, category: .hang), now: now)
                #expect(Set(hangs.map { $0.culprit ?? "" }) == ["anr()", "hang()"])
            case .postgres:
                try await stores.execute("DELETE FROM faultline_migrations WHERE identifier = 'pg24-issue-hangs'")
                let url = try #require(stores.postgres).urlForTests
                let upgraded = try await PostgresEngine.open(url: url, identities: .hmacSHA256)
                await upgraded.close()
                #expect(
                    try await stores.texts("SELECT culprit FROM issues WHERE hang ORDER BY culprit") == [
                        "anr()", "hang()",
                    ])
                let hangs = try await stores.insights.issues(
                    matching: IssueQuery(project: p.id, category: .hang), now: now)
                #expect(Set(hangs.map { $0.culprit ?? "" }) == ["anr()", "hang()"])
            }
        }
    }
}
