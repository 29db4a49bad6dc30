import FaultlineCore
import FaultlineHTTP
import Foundation
import GRDB
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Issue #35: one release, however it is written (`ReleaseName`). An upgrade brings the names stored before under
/// one release on each engine (`v27-one-release`, `pg12-one-release`), and releases with events but no sessions are
/// listed with no session data.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct ReleaseMergeConformanceTests {
    let insights = InsightsConformanceTests()

    /// Every release-keyed row, as text (the distinct-user counters included).
    static let rows = [
        "SELECT release FROM reports",
        "SELECT release FROM sessions",
        "SELECT coalesce(first_release, '∅') || ' ' || coalesce(last_release, '∅') FROM issues",
        "SELECT release || ' ' || events || ' ' || users FROM issue_releases",
        "SELECT release || ' ' || user_key || ' ' || events FROM issue_release_users",
        "SELECT release || ' ' || sessions || ' ' || crashed || ' ' || users || ' ' || crashed_users FROM health_releases",
        "SELECT release || ' ' || sessions || ' ' || crashed || ' ' || users || ' ' || crashed_users FROM health_days",
        "SELECT release || ' ' || user_key || ' ' || sessions || ' ' || crashed FROM health_release_users",
    ]

    static func snapshot(_ texts: (String) async throws -> [String]) async throws -> [[String]] {
        var all: [[String]] = []
        for sql in rows { all.append(try await texts(sql).sorted()) }
        return all
    }

    /// Eight reports of one issue, four in `2.4.0` (user-0, user-1) and four in `old` (user-1, user-2), and three
    /// sessions of user-0 (crashed, in `2.4.0`), user-1 (`com.x@2.4.0+240`) and user-2 (`2.4.0 (240)`).
    func fill(_ stores: Stores, _ p: Project) async throws {
        var rows: [(Int, String?, String?, Double, String?)] = []
        for n in 1...8 {
            rows.append((n, n <= 4 ? "2.4.0" : "old", "user-\(n <= 4 ? n % 2 : 1 + n % 2)", Double(n), nil))
        }
        try await insights.store(stores, p, rows)
        for n in 1...8 { try await insights.group(stores, n, "parse()") }
        let started = Date(timeIntervalSince1970: StoreRows.day0 + 60)
        let sessions: [(String, String, String, SessionStatus)] = [
            ("s1", "user-0", "2.4.0", .crashed), ("s2", "user-1", "com.x@2.4.0+240", .exited),
            ("s3", "user-2", "2.4.0 (240)", .exited),
        ]
        _ = try await stores.ingest.commit([
            .sessions(
                SessionBatch(
                    project: p.id, receivedAt: Date(),
                    updates: sessions.map {
                        SessionUpdate(
                            sessionID: SessionID($0.0)!, distinctID: $0.1, release: $0.2, started: started, status: $0.3
                        )
                    }))
        ])
    }

    @Test(arguments: Engine.allCases) func anUpgradeMergesEverySpellingOfAReleaseIntoOne(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            // Given a database of the names stored before: the `old` reports' rows renamed to `2.4.0 (240)` (as a
            // native report with a build was filed), sessions under three spellings of 2.4.0…
            let p = try await createProject(stores)
            try await fill(stores, p)
            for (table, column) in [
                ("reports", "release"), ("issue_releases", "release"), ("issue_release_users", "release"),
                ("issues", "first_release"), ("issues", "last_release"),
            ] {
                try await stores.execute("UPDATE \(table) SET \(column) = '2.4.0 (240)' WHERE \(column) = 'old'")
            }
            #expect(try await stores.texts("SELECT count(*) FROM health_releases") == ["3"])
            #expect(try await stores.texts("SELECT count(*) FROM issue_releases") == ["2"])

            // When the database is opened by this version…
            switch engine {
            case .sqlite:
                let upgraded = try await IssueHangConformanceTests.reopened(stores, without: "v27-one-release")
                defer { try? upgraded.close() }
                #expect(try upgraded.appliedMigrations().contains("v27-one-release"), "the merge ran again")
                let all = try await Self.snapshot { sql in
                    try await upgraded.pool.read { db in try String.fetchAll(db, sql: sql) }
                }
                try Self.expectMerged(all, users: Self.userKeys(p))
            case .postgres:
                try await stores.execute("DELETE FROM faultline_migrations WHERE identifier = 'pg12-one-release'")
                let url = try #require(stores.postgres).urlForTests
                let upgraded = try await PostgresEngine.open(url: url, identities: .hmacSHA256)
                await upgraded.close()
                try Self.expectMerged(try await Self.snapshot(stores.texts), users: Self.userKeys(p))
                try await GroupingConformanceTests.expectIssueRollupsMatchRecount(stores)
            }
        }
    }

    static func userKeys(_ p: Project) -> [String] {
        (0...2).map { RollupUser.key(of: "user-\($0)", hasher: IdentityHashers.hmacSHA256.hasher(key: p.identityKey)) }
    }

    /// Then there is one release, 2.4.0: every row renamed, the rollups merged with their counts summed and their
    /// distinct users recounted (user-1 is in both spellings: counted once).
    static func expectMerged(_ all: [[String]], users u: [String]) throws {
        #expect(all[0] == Array(repeating: "2.4.0", count: 8))
        #expect(all[1] == ["2.4.0", "2.4.0", "2.4.0"])
        #expect(all[2] == ["2.4.0 2.4.0"])
        #expect(all[3] == ["2.4.0 8 3"])
        #expect(all[4] == ["2.4.0 \(u[0]) 2", "2.4.0 \(u[1]) 4", "2.4.0 \(u[2]) 2"].sorted())
        #expect(all[5] == ["2.4.0 3 1 3 1"])
        #expect(all[6] == [" 3 1 3 1", "2.4.0 3 1 3 1"])
        #expect(all[7] == ["2.4.0 \(u[0]) 1 1", "2.4.0 \(u[1]) 1 0", "2.4.0 \(u[2]) 1 0"].sorted())
    }

    @Test(arguments: Engine.allCases) func releasesWithEventsButNoSessionsAreListedWithNoSessionData(
        _ engine: Engine
    ) async throws {
        try await withStores(engine) { stores in
            // Given sessions of 1.0 only, and events of 1.0 and of 2.0 (an SDK that tracks no sessions)…
            let p = try await createProject(stores)
            try await insights.store(stores, p, [(1, "1.0", "u1", 10, nil), (2, "2.0", "u2", 86_400, nil)])
            for n in 1...2 { try await insights.group(stores, n, "parse()") }
            _ = try await stores.ingest.commit([
                .sessions(
                    SessionBatch(
                        project: p.id, receivedAt: Date(),
                        updates: [
                            SessionUpdate(
                                sessionID: SessionID("s1")!, distinctID: "u1", release: "1.0",
                                started: Date(timeIntervalSince1970: StoreRows.day0), status: .crashed)
                        ]))
            ])

            // Then both are listed, newest first; 2.0 has no sessions, so its rates are "no data", never 100 %.
            let releases = try await stores.insights.releases(project: p.id, now: Date(), limit: 10)
            #expect(releases.map(\.release) == ["2.0", "1.0"])
            #expect(releases[0].health.sessions == 0)
            #expect(releases[0].health.crashFreeSessions == nil)
            #expect(releases[0].health.crashFreeUsers == nil)
            #expect(releases[0].newIssues == 0)
            #expect(releases[0].firstSeen == Date(timeIntervalSince1970: StoreRows.day0 + 86_400))
            #expect(releases[1].health.sessions == 1)
            #expect(releases[1].health.crashedSessions == 1)
        }
    }
}
