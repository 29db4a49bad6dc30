import FaultlineCore
import PostgresNIO

/// Upgrading a PostgreSQL database from any earlier schema (issue #38): what an upgrade will do, said before it is
/// done (`faultline migrate --check --database URL`), with read-only queries.
///
/// Every migration of `PostgresMigrations` has a line here saying what it changes and the work it does (`steps`); a
/// test (`UpgradeSnapshotTests`) fails when one is missing.
public enum PostgresUpgrade {
    /// The identifiers of every migration this binary knows, in order.
    public static var migrations: [String] { PostgresMigrations.all.map(\.identifier) }

    /// What each migration does, in one line, and the work it does (what its cost grows with).
    static let steps: [String: (summary: String, work: UpgradePlan.Work)] = [
        "pg1-projects-ingest": ("projects, keys, payloads, reports, issues, sessions, health", .schema),
        "pg2-symbolication-issues-debug-files": ("symbolication, issue rollups, debug files, alerts", .schema),
        "pg3-search": ("the search index", .schema),
        "pg4-migrate-marker": ("what `faultline migrate` copied", .schema),
        "pg5-change-announcements": ("changes announced to the rendering node", .schema),
        "pg6-counted-sessions": ("one session row counts several sessions", .schema),
        "pg7-issue-created-at": ("issues record when they were made (new-issue cap)", .index("issues")),
        "pg8-mask-emails-and-phones": (
            "e-mail and phone masking; a random identity key per project", .rewrite(["projects"])
        ),
        "pg9-hashed-rollup-users": (
            "per-user rollups hold a keyed hash of the user instead of the id",
            .rewrite(PostgresRollupUsers.tables.map(\.name))
        ),
        "pg10-minidump-retention": ("minidump retention per project", .index("attachments")),
        "pg11-crash-free-targets": ("crash-free targets per project", .schema),
        "pg12-one-release": (
            "every spelling of a release stored under one name, rollups merged",
            .rewrite([
                "reports", "sessions", "issues", "issue_releases", "issue_release_users", "health_releases",
                "health_days", "health_release_users", "health_day_users",
            ])
        ),
        "pg13-merged-issues": ("merged issues: fingerprint aliases and the numbers they replaced", .schema),
        "pg14-retention-samples-trackers": (
            "sample reports kept past retention; issue trackers per project", .index("reports")
        ),
        "pg15-people": ("people, their roles and invites; logins belong to a person", .schema),
        "pg16-event-quotas": ("event quotas per project and what they counted; quota alerts", .schema),
        "pg17-fingerprint-rules": ("fingerprint rules per project; grouping facts per report; regroups", .schema),
        "pg18-personal-tokens-totp": ("personal API tokens; TOTP second factors and recovery codes", .schema),
        "pg19-audit": ("the audit trail of every change", .schema),
        "pg20-alert-mail": ("alert mail preferences; the digest outbox", .schema),
        "pg21-quota-counts-by-fingerprint": ("an index of refused events by fingerprint", .index("quota_counts")),
        "pg22-login-tickets": ("logins waiting for their second factor's code", .schema),
        "pg23-rotation": ("an end for old ingest keys after a rotation", .schema),
        "pg24-issue-hangs": (
            "hangs and ANRs marked on their issues (from the titles of those filed before)", .index("issues")
        ),
        "pg25-tag-users": ("users per device model, OS, environment and build of an issue", .schema),
    ]

    /// The migrations without a line in `steps` (a test keeps this empty).
    public static var undescribed: [String] { migrations.filter { steps[$0] == nil } }

    /// What opening the database at `url` with this binary would do; only reads.
    /// - Throws: `StorageError(.newerSchema)` for a database a newer faultline upgraded, `.openFailed` when it cannot
    ///   be reached.
    public static func plan(url: String, password: String? = nil, rates: UpgradeRates = .measured) async throws
        -> UpgradePlan
    {
        let location = try PostgresLocation(url: url, password: password)
        try await PostgresEngine.probe(location, logger: Logger(label: "faultline.postgres"))
        let database = try PostgresEngine(location: location, maximumConnections: 1)
        await database.waitUntilRunning()
        do {
            let plan = try await plan(database, rates: rates)
            await database.close()
            return plan
        } catch {
            await database.close()
            throw error
        }
    }

    static func plan(_ database: PostgresEngine, rates: UpgradeRates) async throws -> UpgradePlan {
        let logger = database.logger
        return try await database.read { connection in
            try await connection.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", logger: logger)
            var applied: [String] = []
            let exists = try await connection.query(
                "SELECT to_regclass('faultline_migrations') IS NOT NULL", logger: logger
            ).collect().first?.decode(Bool.self)
            if exists == true {
                for try await name in try await connection.query(
                    "SELECT identifier FROM faultline_migrations ORDER BY seq", logger: logger
                ).decode(String.self) {
                    applied.append(name)
                }
            }
            let (current, pending) = try UpgradePlan.pending(known: migrations, applied: applied, steps: steps)
            var sizes: [String: Int64] = [:]
            var total: Int64 = 0
            // A partitioned table counts with all its partitions; each table with its indexes and TOAST.
            for try await (name, bytes) in try await connection.query(
                """
                SELECT p.relname::text, sum(pg_total_relation_size(t.relid))::bigint
                FROM pg_class p, pg_partition_tree(p.oid) t
                WHERE p.relnamespace = to_regnamespace(current_schema()) AND p.relkind IN ('r', 'p')
                    AND NOT p.relispartition
                GROUP BY p.relname
                """, logger: logger
            ).decode((String, Int64).self) {
                sizes[name] = bytes
                total = total.addingReportingOverflow(bytes).overflow ? Int64.max : total + bytes
            }
            try await connection.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", logger: logger)
            return UpgradePlan.make(
                current: current, pending: pending, tableBytes: sizes,
                databaseBytes: total, rates: rates)
        }
    }
}

/// A database at an earlier schema version, for the upgrade snapshots (`tools/upgrade/make-snapshots`): an empty
/// database migrated up to that version and filled with SQL valid at that version; `pg_dump` writes it out.
public final class PostgresSchemaSnapshot: Sendable {
    let database: PostgresEngine

    /// Migrates the empty database at `url` up to and including `version`.
    /// - Parameter identities: the hasher of the per-user rollups (needed from `pg9-hashed-rollup-users` on).
    public init(url: String, upTo version: String, identities: IdentityHashers?) async throws {
        guard PostgresUpgrade.migrations.contains(version) else {
            throw StorageError(.conflict, "no PostgreSQL migration is named \(version)")
        }
        database = try PostgresEngine(
            location: try PostgresLocation(url: url), maximumConnections: 1, identities: identities)
        await database.waitUntilRunning()
        try await PostgresMigrations.apply(database, upTo: version)
    }

    /// The migrations applied, in order.
    public var applied: [String] {
        get async throws { try await database.appliedMigrations() }
    }

    /// Migrates on, with the rows added so far, up to and including the later `version`: the data passes through
    /// those migrations as an upgraded install's did (a snapshot of `pg12-one-release` or later holds its releases as
    /// that migration rewrote them).
    /// - Throws: `StorageError(.conflict)` when `version` is no migration of this binary.
    public func migrate(upTo version: String) async throws {
        guard PostgresUpgrade.migrations.contains(version) else {
            throw StorageError(.conflict, "no PostgreSQL migration is named \(version)")
        }
        try await PostgresMigrations.apply(database, upTo: version)
    }

    /// The columns of `table` in order, or nil when the table does not exist at this version.
    public func columns(_ table: String) async throws -> [String]? {
        let logger = database.logger
        return try await database.read { connection in
            var names: [String] = []
            for try await name in try await connection.query(
                """
                SELECT column_name::text FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = \(table) ORDER BY ordinal_position
                """, logger: logger
            ).decode(String.self) {
                names.append(name)
            }
            return names.isEmpty ? nil : names
        }
    }

    /// The primary key columns of `table` in key order (none for a table without one).
    public func primaryKey(_ table: String) async throws -> [String] {
        let logger = database.logger
        return try await database.read { connection in
            var names: [String] = []
            for try await name in try await connection.query(
                """
                SELECT k.column_name::text FROM information_schema.table_constraints c
                JOIN information_schema.key_column_usage k
                    ON k.constraint_schema = c.constraint_schema AND k.constraint_name = c.constraint_name
                    AND k.table_name = c.table_name
                WHERE c.table_schema = current_schema() AND c.table_name = \(table)
                    AND c.constraint_type = 'PRIMARY KEY'
                ORDER BY k.ordinal_position
                """, logger: logger
            ).decode(String.self) {
                names.append(name)
            }
            return names
        }
    }

    /// Runs `statements` in one transaction.
    public func execute(_ statements: [String]) async throws {
        let logger = database.logger
        try await database.write { connection in
            for statement in statements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    public func close() async { await database.close() }
}
