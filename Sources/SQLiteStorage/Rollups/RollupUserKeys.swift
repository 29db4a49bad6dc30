import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The per-user rollups' keys on SQLite: `RollupUser.key` (FaultlineCore) of a user, under its project's
/// `identity_key`, computed by the SQL function `faultline_rollup_user(identity_key, user)`.
///
/// The function is the hasher `SQLiteEngine` was given (`IdentityHashers`, HMAC-SHA-256 at the server's edge),
/// registered on every connection: the rollup writers (`SQLiteBatchGrouper`, `HealthRollup`) and the upgrade that rewrites
/// stored ids (`rewriteStoredUsers`) reach it through the connection they already hold. A database opened without a
/// hasher has no such function, and a write that needs a rollup key fails there rather than store a user id.
enum RollupUserKeys {
    static let function = "faultline_rollup_user"

    /// The SQL function over `identities`; a NULL user gives NULL, a project without a key an error (never a raw id).
    static func sqlFunction(_ identities: IdentityHashers) -> DatabaseFunction {
        DatabaseFunction(function, argumentCount: 2, pure: true) { values in
            guard let user = String.fromDatabaseValue(values[1]) else { return nil }
            guard let key = Data.fromDatabaseValue(values[0]), !key.isEmpty else {
                throw DatabaseError(message: "\(function): the project has no identity key")
            }
            return RollupUser.key(of: user, hasher: identities.hasher(key: Array(key)))
        }
    }

    /// The rollup key of `user` in `project` (nil without a user).
    static func key(_ user: String?, project: ProjectID, _ db: Database) throws -> String? {
        guard let user else { return nil }
        return try String.fetchOne(
            db.cachedStatement(sql: "SELECT \(function)(identity_key, ?) FROM projects WHERE id = ?"),
            arguments: [user, project.rawValue])
    }

    /// The rollup keys of a batch's users: each project's identity key read once, not once a report or session.
    final class Keyer {
        /// By project id; a nil value: no such project (its users have no key, as in `key(_:project:_:)`).
        private var identityKeys: [Int64: DatabaseValue?] = [:]

        func key(_ user: String?, project: ProjectID, _ db: Database) throws -> String? {
            guard let user else { return nil }
            let identityKey: DatabaseValue?
            if let known = identityKeys[project.rawValue] {
                identityKey = known
            } else {
                identityKey = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT identity_key FROM projects WHERE id = ?"),
                    arguments: [project.rawValue]
                ).map { $0[0] as DatabaseValue }
                identityKeys[project.rawValue] = identityKey
            }
            guard let identityKey else { return nil }
            return try String.fetchOne(
                db.cachedStatement(sql: "SELECT \(function)(?, ?)"), arguments: [identityKey, user])
        }
    }

    /// A per-user table: its key columns before `user_key`, its counters, how a row finds its project's key, and the
    /// distinct-user counters above it to recount when two of its rows became one.
    struct Table {
        var name: String
        var keys: [String]
        var counters: [String]
        /// The join from the table `t` to `p`, its project.
        var project: String
        /// Statements recounting the distinct-user counters from the rewritten rows.
        var recount: [String]
    }

    /// A per-user table under one of an issue's rows keyed by `key` (its release or day), whose `users` it recounts.
    private static func perIssue(_ name: String, key: String, parent: String) -> Table {
        Table(
            name: name, keys: ["issue_id", key], counters: ["events"],
            project: "JOIN issues i ON i.id = t.issue_id JOIN projects p ON p.id = i.project_id",
            recount: [
                """
                UPDATE \(parent) SET users = (SELECT count(*) FROM \(name) u
                    WHERE u.issue_id = \(parent).issue_id AND u.\(key) = \(parent).\(key))
                """
            ])
    }

    /// Every table that holds a user per row.
    static let tables = [
        Table(
            name: "issue_users", keys: ["issue_id"], counters: ["events"],
            project: "JOIN issues i ON i.id = t.issue_id JOIN projects p ON p.id = i.project_id",
            recount: [
                """
                UPDATE issues SET users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = issues.id),
                    repeat_users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = issues.id AND u.events > 1)
                """
            ]),
        perIssue("issue_release_users", key: "release", parent: "issue_releases"),
        perIssue("issue_day_users", key: "day", parent: "issue_days"),
        Table(
            name: "health_day_users", keys: ["project_id", "release", "day"], counters: ["sessions", "crashed"],
            project: "JOIN projects p ON p.id = t.project_id",
            recount: [
                """
                UPDATE health_days SET
                    users = (SELECT count(*) FROM health_day_users u WHERE u.project_id = health_days.project_id
                        AND u.release = health_days.release AND u.day = health_days.day),
                    crashed_users = (SELECT count(*) FROM health_day_users u WHERE u.project_id = health_days.project_id
                        AND u.release = health_days.release AND u.day = health_days.day AND u.crashed > 0)
                """
            ]),
        Table(
            name: "health_release_users", keys: ["project_id", "release"], counters: ["sessions", "crashed"],
            project: "JOIN projects p ON p.id = t.project_id",
            recount: [
                """
                UPDATE health_releases SET
                    users = (SELECT count(*) FROM health_release_users u WHERE u.project_id = health_releases.project_id
                        AND u.release = health_releases.release),
                    crashed_users = (SELECT count(*) FROM health_release_users u WHERE u.project_id = health_releases.project_id
                        AND u.release = health_releases.release AND u.crashed > 0)
                """
            ]),
    ]

    /// Replaces every stored user id of the per-user rollups by its rollup key (migration `v24-hashed-rollup-users`):
    /// each table is rewritten from its rows grouped by the new key, the counters of rows that share one summed (two
    /// ids of one project with one 128-bit key: not expected, but then the distinct-user counters above are recounted,
    /// so they stay equal to the rows). Empty tables need no hasher; a table with rows needs one.
    static func rewriteStoredUsers(_ db: Database) throws {
        for table in tables {
            let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name)") ?? 0
            guard before > 0 else { continue }
            let keys = table.keys.joined(separator: ", ")
            let sums = table.counters.map { "sum(\($0)) AS \($0)" }.joined(separator: ", ")
            let columns = (table.keys + ["user_key"] + table.counters).joined(separator: ", ")
            try db.execute(
                sql: """
                    CREATE TEMP TABLE rekeyed_users AS
                    SELECT \(keys), hashed AS user_key, \(sums) FROM (
                        SELECT t.*, \(function)(p.identity_key, t.user_key) AS hashed FROM \(table.name) t \(table.project))
                    GROUP BY \(keys), hashed;
                    DELETE FROM \(table.name);
                    INSERT INTO \(table.name) (\(columns)) SELECT * FROM temp.rekeyed_users;
                    DROP TABLE temp.rekeyed_users;
                    """)
            let after = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.name)") ?? 0
            if after != before {
                for statement in table.recount { try db.execute(sql: statement) }
            }
        }
    }
}
