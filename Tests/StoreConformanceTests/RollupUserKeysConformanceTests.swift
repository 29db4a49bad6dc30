import FaultlineCore
import FaultlineHTTP
import Foundation
import GRDB
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Issue #39, finding 6: the per-user rollups hold a keyed hash of the user (`RollupUser.key`, HMAC-SHA-256 under the
/// project's identity key), never the id, on each engine — counts stay exact, two projects never share a key, an
/// upgrade rewrites the ids stored before, and the issue page's "Events by user" names only users of retained reports.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct RollupUserKeysConformanceTests {
    let insights = InsightsConformanceTests()

    /// Every table that holds a user per row, and what its rows are made of.
    static let tables = [
        ("issue_users", "issue_id || ' ' || user_key || ' ' || events"),
        ("issue_release_users", "issue_id || ' ' || release || ' ' || user_key || ' ' || events"),
        ("issue_day_users", "issue_id || ' ' || day || ' ' || user_key || ' ' || events"),
        (
            "health_day_users",
            "project_id || ' ' || release || ' ' || day || ' ' || user_key || ' ' || sessions || ' ' || crashed"
        ),
        (
            "health_release_users",
            "project_id || ' ' || release || ' ' || user_key || ' ' || sessions || ' ' || crashed"
        ),
    ]

    /// The distinct-user counters the per-user rows maintain.
    static let counters = [
        "SELECT id || ' ' || events || ' ' || users || ' ' || repeat_users FROM issues",
        "SELECT issue_id || ' ' || release || ' ' || users FROM issue_releases",
        "SELECT issue_id || ' ' || day || ' ' || users FROM issue_days",
        "SELECT project_id || ' ' || release || ' ' || day || ' ' || users || ' ' || crashed_users FROM health_days",
        "SELECT project_id || ' ' || release || ' ' || users || ' ' || crashed_users FROM health_releases",
    ]

    /// The ids the scenario's reports and sessions carry.
    static let users = ["user-0", "user-1", "user-2", "user-3", "jane@example.com"]

    /// Twelve reports of `p` (users `user-0`…`user-3` by n % 4, none when n % 5 == 0) over two releases and three
    /// days, grouped into one issue, and four sessions of release 1.0: user-0, user-1 twice (one crashed), user-2.
    /// Returns the issue.
    func fill(_ stores: Stores, _ p: Project, receivedAt: Date = Date()) async throws -> IssueID {
        let first = Int(p.id.rawValue) * 100
        var rows: [(Int, String?, String?, Double, String?)] = []
        for n in 1...12 {
            let user: String? = n % 5 == 0 ? nil : "user-\(n % 4)"
            let offset = Double(n % 3) * 86_400 + Double(n)
            rows.append((first + n, "1.\(n % 2)", user, offset, nil))
        }
        try await insights.store(stores, p, rows, receivedAt: receivedAt)
        var issue: IssueID?
        for row in rows { issue = try await insights.group(stores, row.0, "parse()") }
        let started = Date(timeIntervalSince1970: StoreRows.day0 + 60)
        let sessions: [(String, String, SessionStatus)] = [
            ("s1", "user-0", .exited), ("s2", "user-1", .crashed), ("s3", "user-1", .exited), ("s4", "user-2", .exited),
        ]
        _ = try await stores.ingest.commit([
            .sessions(
                SessionBatch(
                    project: p.id, receivedAt: receivedAt,
                    updates: sessions.map {
                        SessionUpdate(
                            sessionID: SessionID($0.0)!, distinctID: $0.1, release: "1.0", started: started,
                            status: $0.2)
                    }))
        ])
        return try #require(issue)
    }

    /// `user`'s rollup key in `p`, computed here from the project's key: what every rollup row of that user must hold.
    static func key(_ user: String, _ p: Project) -> String {
        RollupUser.key(of: user, hasher: IdentityHashers.hmacSHA256.hasher(key: p.identityKey))
    }

    /// Every per-user row and every distinct-user counter, as text.
    func snapshot(_ texts: (String) async throws -> [String]) async throws -> [String] {
        var all: [String] = []
        for (table, row) in Self.tables {
            all += try await texts("SELECT \(row) FROM \(table)").map { "\(table): \($0)" }
        }
        for query in Self.counters { all += try await texts(query) }
        return all
    }

    /// Every user key the per-user tables hold.
    func storedKeys(_ texts: (String) async throws -> [String]) async throws -> [String] {
        var keys: [String] = []
        for (table, _) in Self.tables { keys += try await texts("SELECT user_key FROM \(table)") }
        return keys
    }

    @Test(arguments: Engine.allCases) func rollupsHoldKeyedHashesAndCountUsersExactly(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            // Given two projects whose reports and sessions carry the same user ids…
            let p = try await createProject(stores)
            let q = try await createProject(stores, "other")
            #expect(p.identityKey.count == 32 && q.identityKey.count == 32 && p.identityKey != q.identityKey)
            let issueP = try await fill(stores, p)
            let issueQ = try await fill(stores, q)

            // Then no per-user row holds an id: each holds the HMAC of one, under its own project's key…
            let keys = try await storedKeys(stores.texts)
            #expect(keys.count > 20)
            for key in keys {
                #expect(key.hasPrefix(RollupUser.prefix) && key.count == 35, "\(key)")
                #expect(!Self.users.contains { key.contains($0) }, "\(key)")
            }
            for (project, issue) in [(p, issueP), (q, issueQ)] {
                let expected = ["user-0", "user-1", "user-2", "user-3"].map { Self.key($0, project) }.sorted()
                #expect(
                    try await stores.texts("SELECT user_key FROM issue_users WHERE issue_id = \(issue.rawValue)")
                        == expected)
                #expect(
                    try await stores.texts(
                        "SELECT user_key FROM health_release_users WHERE project_id = \(project.id.rawValue)")
                        == ["user-0", "user-1", "user-2"].map { Self.key($0, project) }.sorted())
            }
            // …so the same id is two keys in two projects…
            let inP = Set(
                try await stores.texts("SELECT user_key FROM health_day_users WHERE project_id = \(p.id.rawValue)"))
            let inQ = Set(
                try await stores.texts("SELECT user_key FROM health_day_users WHERE project_id = \(q.id.rawValue)"))
            #expect(inP.count == 3 && inQ.count == 3 && inP.isDisjoint(with: inQ))

            // …and the distinct-user counts are those of the ids: 4 users of the issue (each more than once), per
            // release and day as a recount from the reports says, 3 users of release 1.0 of whom 1 crashed.
            for (project, issue) in [(p, issueP), (q, issueQ)] {
                let detail = try #require(try await stores.insights.issue(issue, project: project.id, now: Date()))
                #expect(detail.summary.users == 4)
                #expect(detail.repeatUsers == 4)
                #expect(
                    try await stores.texts(
                        "SELECT release || ' ' || users FROM issue_releases WHERE issue_id = \(issue.rawValue)")
                        == stores.texts(
                            """
                            SELECT coalesce(release, '') || ' ' || count(DISTINCT user_key) FROM reports
                            WHERE issue_id = \(issue.rawValue) GROUP BY coalesce(release, '')
                            """))
                #expect(
                    try await stores.texts(
                        "SELECT day || ' ' || users FROM issue_days WHERE issue_id = \(issue.rawValue)")
                        == stores.texts(
                            """
                            SELECT (occurred_at / 86400000) || ' ' || count(DISTINCT user_key) FROM reports
                            WHERE issue_id = \(issue.rawValue) GROUP BY occurred_at / 86400000
                            """))
                #expect(
                    try await stores.texts(
                        "SELECT release || ' ' || users || ' ' || crashed_users FROM health_releases WHERE project_id = \(project.id.rawValue)"
                    )
                        == ["1.0 3 1"])
                #expect(
                    try await stores.texts(
                        "SELECT release || ' ' || users || ' ' || crashed_users FROM health_days WHERE project_id = \(project.id.rawValue)"
                    )
                        == [" 3 1", "1.0 3 1"])
            }

            // When a known user has another session, a crashed one, and another report, nobody is counted twice.
            _ = try await stores.ingest.commit([
                .sessions(
                    SessionBatch(
                        project: p.id, receivedAt: Date(),
                        updates: [
                            SessionUpdate(
                                sessionID: SessionID("s5")!, distinctID: "user-0", release: "1.0",
                                started: Date(timeIntervalSince1970: StoreRows.day0 + 60), status: .crashed)
                        ]))
            ])
            try await insights.store(stores, p, [(900, "1.0", "user-3", 10, nil)])
            try await insights.group(stores, 900, "parse()")
            #expect(try await stores.insights.issue(issueP, project: p.id, now: Date())?.summary.users == 4)
            #expect(
                try await stores.texts(
                    "SELECT users || ' ' || crashed_users FROM health_releases WHERE project_id = \(p.id.rawValue)")
                    == ["3 2"])
        }
    }

    @Test(arguments: Engine.allCases) func anUpgradeRewritesStoredIdsToKeysAndKeepsEveryCount(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            // Given a database whose rollups hold user ids, as every database before the upgrade did: the rows the
            // stores wrote, their keys put back to the ids (the upgrade changes data only, not the schema)…
            let p = try await createProject(stores)
            let q = try await createProject(stores, "other")
            _ = try await fill(stores, p)
            _ = try await fill(stores, q)
            let keyed = try await snapshot(stores.texts)
            for project in [p, q] {
                for user in Self.users {
                    for (table, _) in Self.tables {
                        try await stores.execute(
                            "UPDATE \(table) SET user_key = '\(user)' WHERE user_key = '\(Self.key(user, project))'")
                    }
                }
            }
            #expect(
                try await storedKeys(stores.texts).filter { $0.hasPrefix("user-") }.count
                    == (try await storedKeys(stores.texts)).count)
            let migration: String
            switch engine {
            case .sqlite:
                migration = "v24-hashed-rollup-users"
                try await stores.execute("DELETE FROM grdb_migrations WHERE identifier = '\(migration)'")
            case .postgres:
                migration = "pg9-hashed-rollup-users"
                try await stores.execute("DELETE FROM faultline_migrations WHERE identifier = '\(migration)'")
            }

            // When it is opened: without the hasher the upgrade refuses (it would have to keep the ids); with it…
            switch engine {
            case .sqlite:
                // (a copy of the file, opened by a pool of its own: the stores keep theirs, one pool per file)
                let sqlite = try #require(stores.sqlite)
                let path = sqlite.pool.path + "-previous.sqlite"
                try await sqlite.pool.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM INTO ?", arguments: [path])
                }
                #expect(throws: (any Error).self) { try SQLiteEngine(path: path).close() }
                let upgraded = try SQLiteEngine(path: path, identities: .hmacSHA256)
                defer { try? upgraded.close() }
                #expect(try upgraded.appliedMigrations().contains(migration))
                let texts: (String) async throws -> [String] = { sql in
                    try await upgraded.pool.read { db in try String.fetchAll(db, sql: sql) }.sorted()
                }
                // Then every row holds its key again, with the same counts, and every counter is unchanged.
                #expect(try await snapshot(texts) == keyed)
                #expect(try await storedKeys(texts).allSatisfy { $0.hasPrefix(RollupUser.prefix) })
            case .postgres:
                let url = try #require(stores.postgres).urlForTests
                await #expect(throws: (any Error).self) { try await PostgresEngine.open(url: url).close() }
                let upgraded = try await PostgresEngine.open(url: url, identities: .hmacSHA256)
                await upgraded.close()
                #expect(
                    try await stores.texts(
                        "SELECT identifier FROM faultline_migrations WHERE identifier = '\(migration)'") == [migration])
                #expect(try await snapshot(stores.texts) == keyed)
                #expect(try await storedKeys(stores.texts).allSatisfy { $0.hasPrefix(RollupUser.prefix) })
            }
        }
    }

    @Test func aMigratedInstallationCountsEachUserUnderTheSameKey() async throws {
        try await withStores(.sqlite) { sqlite in
            try await withStores(.postgres) { postgres in
                // Given a SQLite installation with keyed rollups, copied into PostgreSQL by `faultline migrate`…
                let p = try await createProject(sqlite)
                let issue = try await fill(sqlite, p)
                let copied = try await snapshot(sqlite.texts)
                try await MigrationTests.migrate(sqlite, into: postgres)
                #expect(try await snapshot(postgres.texts) == copied)

                // When PostgreSQL stores another report and another session of users the copy already counts…
                let project = try #require(try await postgres.projects.project(id: p.id))
                #expect(project.identityKey == p.identityKey)
                try await insights.store(postgres, project, [(900, "1.0", "user-2", 10, nil)])
                try await insights.group(postgres, 900, "parse()")
                _ = try await postgres.ingest.commit([
                    .sessions(
                        SessionBatch(
                            project: p.id, receivedAt: Date(),
                            updates: [
                                SessionUpdate(
                                    sessionID: SessionID("s9")!, distinctID: "user-2", release: "1.0",
                                    started: Date(timeIntervalSince1970: StoreRows.day0 + 60), status: .exited)
                            ]))
                ])

                // Then they are the same users: under the same keys, the counts do not move.
                #expect(try await postgres.insights.issue(issue, project: p.id, now: Date())?.summary.users == 4)
                #expect(
                    try await postgres.texts("SELECT users || ' ' || crashed_users FROM health_releases") == ["3 1"])
                #expect(try await postgres.texts("SELECT count(*) FROM issue_users") == ["4"])
            }
        }
    }

    @Test(arguments: Engine.allCases) func theUserBreakdownNamesOnlyUsersOfRetainedReports(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let now = Date()
            let old = now.addingTimeInterval(-100 * 86_400)
            if let postgres = stores.postgres {
                try await PostgresPartitions.ensure(around: Millis.from(old), postgres)
            }
            // Given an issue whose reports came 100 days ago, and one report of another user that came today…
            let p = try await createProject(stores)
            let issue = try await fill(stores, p, receivedAt: old)
            try await insights.store(stores, p, [(900, "1.0", "kept-user", 10, nil)], receivedAt: now)
            try await insights.group(stores, 900, "parse()")
            let before = try #require(try await stores.insights.issue(issue, project: p.id, now: now))
            // (the breakdown counts the retained reports by user: ids, as the reports and their pages show them)
            #expect(
                Set(before.breakdowns["user"]?.map(\.value) ?? []) == [
                    "user-0", "user-1", "user-2", "user-3", "kept-user",
                ])
            #expect(before.breakdowns["user"]?.map(\.events).reduce(0, +) == 11)

            // When retention prunes the old reports…
            var pruned = 0
            for _ in 0..<20 {
                let pass = try await stores.retention.prune(
                    before: now.addingTimeInterval(-90 * 86_400), limit: 100, now: now)
                if pass.isEmpty { break }
                pruned += pass.reports
            }
            #expect(pruned == 12)

            // Then the issue page names only the user of the report kept, and nothing in the database names the others
            // but the keyed hashes that still count them: the issue had 5 users, and has.
            let after = try #require(try await stores.insights.issue(issue, project: p.id, now: now))
            #expect(after.breakdowns["user"] == [BreakdownEntry(value: "kept-user", events: 1)])
            #expect(after.summary.users == 5)
            for key in try await storedKeys(stores.texts) {
                #expect(!Self.users.contains { key.contains($0) } && !key.contains("kept-user"), "\(key)")
            }
            #expect(try await stores.texts("SELECT count(*) FROM reports WHERE user_key LIKE 'user-%'") == ["0"])
        }
    }
}
