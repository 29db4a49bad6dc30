import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The per-user rollups' keys on PostgreSQL (the twin of `RollupUserKeys` in Sources/SQLiteStorage/Rollups): `RollupUser.key`
/// of a user under its project's `identity_key`, with the hasher the engine was given (`PostgresEngine.identities`).
///
/// The writers (`PostgresBatchGrouper`, `PostgresSessionBatch`) key their contributions before they
/// add them up; `pg9-hashed-rollup-users` rewrites the ids stored before. An engine without a hasher refuses a
/// contribution that has a user rather than store its id.
enum PostgresRollupUsers {
    /// The hasher keyed with `project`'s identity key; nil when the engine has no hasher.
    static func hasher(
        project: ProjectID, identities: IdentityHashers?, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> (any IdentityHashing)?
    {
        guard let identities else { return nil }
        return identities.hasher(
            key: try await keys(projects: [project.rawValue], connection, logger)[project.rawValue] ?? [])
    }

    /// The identity keys of `projects`.
    static func keys(projects: [Int64], _ connection: PostgresConnection, _ logger: Logger) async throws -> [Int64:
        [UInt8]]
    {
        var keys: [Int64: [UInt8]] = [:]
        for try await (id, key) in try await connection.query(
            "SELECT id, identity_key FROM projects WHERE id = ANY(\(projects))", logger: logger
        ).decode((Int64, Data).self) {
            keys[id] = Array(key)
        }
        return keys
    }

    static func missingHasher() -> StorageError {
        StorageError(
            .invalidValue, "a user's rollup needs the identity hasher, which this PostgreSQL engine was not given")
    }

    /// `contribution` with its user's rollup key; throws when it has a user and there is no hasher.
    static func keyed(_ contribution: IssueContribution, _ hasher: (any IdentityHashing)?) throws -> IssueContribution {
        guard contribution.user != nil else { return contribution }
        guard let hasher else { throw missingHasher() }
        return RollupUser.keyed(contribution, hasher: hasher)
    }

    /// `contribution` with its user's rollup key; throws when it has a user and there is no hasher.
    static func keyed(_ contribution: SessionContribution?, _ hasher: (any IdentityHashing)?) throws
        -> SessionContribution?
    {
        guard let contribution, contribution.user != nil else { return contribution }
        guard let hasher else { throw missingHasher() }
        return RollupUser.keyed(contribution, hasher: hasher)
    }

    /// A per-user table: its key columns before `user_key`, its counters, how a row `t` finds its project's id, and the
    /// statements recounting the distinct-user counters above it.
    struct Table {
        var name: String
        var keys: [String]
        var counters: [String]
        var join: String
        var project: String
        var recount: [String]
    }

    static let byIssue = "JOIN issues i ON i.id = t.issue_id"

    /// Every table that holds a user per row.
    static let tables = [
        Table(
            name: "issue_users", keys: ["issue_id"], counters: ["events"], join: byIssue, project: "i.project_id",
            recount: [
                """
                UPDATE issues SET users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = issues.id),
                    repeat_users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = issues.id AND u.events > 1)
                WHERE EXISTS (SELECT 1 FROM issue_users u WHERE u.issue_id = issues.id)
                """
            ]),
        Table(
            name: "issue_release_users", keys: ["issue_id", "release"], counters: ["events"], join: byIssue,
            project: "i.project_id",
            recount: [
                """
                UPDATE issue_releases r SET users = (SELECT count(*) FROM issue_release_users u
                    WHERE u.issue_id = r.issue_id AND u.release = r.release)
                """
            ]),
        Table(
            name: "issue_day_users", keys: ["issue_id", "day"], counters: ["events"], join: byIssue,
            project: "i.project_id",
            recount: [
                """
                UPDATE issue_days d SET users = (SELECT count(*) FROM issue_day_users u WHERE u.issue_id = d.issue_id AND u.day = d.day)
                """
            ]),
        Table(
            name: "health_day_users", keys: ["project_id", "release", "day"], counters: ["sessions", "crashed"],
            join: "",
            project: "t.project_id",
            recount: [
                """
                UPDATE health_days h SET
                    users = (SELECT count(*) FROM health_day_users u
                        WHERE u.project_id = h.project_id AND u.release = h.release AND u.day = h.day),
                    crashed_users = (SELECT count(*) FROM health_day_users u
                        WHERE u.project_id = h.project_id AND u.release = h.release AND u.day = h.day AND u.crashed > 0)
                """
            ]),
        Table(
            name: "health_release_users", keys: ["project_id", "release"], counters: ["sessions", "crashed"], join: "",
            project: "t.project_id",
            recount: [
                """
                UPDATE health_releases h SET
                    users = (SELECT count(*) FROM health_release_users u WHERE u.project_id = h.project_id AND u.release = h.release),
                    crashed_users = (SELECT count(*) FROM health_release_users u
                        WHERE u.project_id = h.project_id AND u.release = h.release AND u.crashed > 0)
                """
            ]),
    ]

    /// Replaces every stored user id of the per-user rollups by its rollup key (migration `pg9-hashed-rollup-users`), in
    /// the migration's transaction: the distinct (project, id) pairs are read (held in memory: one entry per user of a
    /// project), keyed here, and written to a temporary table; each table is then rewritten from its rows grouped by
    /// the new key, the counters of rows that share one summed (two ids of one project with one 128-bit key: not
    /// expected, but then the distinct-user counters above are recounted). Empty tables need no hasher.
    static func rewriteStoredUsers(identities: IdentityHashers?, _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        let union = tables.map { "SELECT \($0.project) AS project_id, t.user_key FROM \($0.name) t \($0.join)" }
            .joined(separator: " UNION ")
        var projects: [Int64] = []
        var users: [String] = []
        for try await (project, user) in try await connection.query(PostgresQuery(unsafeSQL: union), logger: logger)
            .decode((Int64, String).self)
        {
            projects.append(project)
            users.append(user)
        }
        guard !users.isEmpty else { return }
        guard let identities else {
            throw StorageError(
                .openFailed,
                "pg9-hashed-rollup-users: the rollups hold user ids, and this engine has no identity hasher")
        }
        let keys = try await self.keys(projects: Array(Set(projects)), connection, logger)
        var hashers: [Int64: any IdentityHashing] = [:]
        var hashed: [String] = []
        hashed.reserveCapacity(users.count)
        for (project, user) in zip(projects, users) {
            guard let key = keys[project], !key.isEmpty else {
                throw StorageError(.openFailed, "pg9-hashed-rollup-users: project \(project) has no identity key")
            }
            let hasher = hashers[project] ?? identities.hasher(key: key)
            hashers[project] = hasher
            hashed.append(RollupUser.key(of: user, hasher: hasher))
        }
        try await connection.query(
            """
            CREATE TEMP TABLE rollup_user_keys (project_id bigint, user_key text, hashed text NOT NULL,
                PRIMARY KEY (project_id, user_key)) ON COMMIT DROP
            """, logger: logger)
        let chunk = 10_000
        var start = 0
        while start < users.count {
            let end = min(start + chunk, users.count)
            try await connection.query(
                """
                INSERT INTO rollup_user_keys SELECT * FROM unnest(\(Array(projects[start..<end]))::bigint[],
                    \(Array(users[start..<end]))::text[], \(Array(hashed[start..<end]))::text[])
                """, logger: logger)
            start = end
        }
        for table in tables {
            let keys = table.keys.map { "t.\($0)" }.joined(separator: ", ")
            let sums = table.counters.map { "sum(t.\($0)) AS \($0)" }.joined(separator: ", ")
            let columns = (table.keys + ["user_key"] + table.counters).joined(separator: ", ")
            let before = try await rows(table.name, connection, logger)
            guard before > 0 else { continue }
            for statement in [
                """
                CREATE TEMP TABLE rekeyed_users ON COMMIT DROP AS
                SELECT \(keys), m.hashed AS user_key, \(sums) FROM \(table.name) t \(table.join)
                JOIN rollup_user_keys m ON m.project_id = \(table.project) AND m.user_key = t.user_key
                GROUP BY \(keys), m.hashed
                """,
                "DELETE FROM \(table.name)",
                "INSERT INTO \(table.name) (\(columns)) SELECT * FROM rekeyed_users",
                "DROP TABLE rekeyed_users",
            ] {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            if try await rows(table.name, connection, logger) != before {
                for statement in table.recount {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
        }
    }

    static func rows(_ table: String, _ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        var count: Int64 = 0
        for try await value in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table)"), logger: logger
        )
        .decode(Int64.self) {
            count = value
        }
        return count
    }
}
