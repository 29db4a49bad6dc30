import FaultlineCore
import PostgresNIO

/// The PostgreSQL twin of `SQLiteBatchedRewrites` (issue #38): a migration's data rewrite in bounded batches, each
/// committed with its cursor in `batched_rewrites`, so an interrupted upgrade continues after the last committed
/// batch and applies every row once; no later migration runs before the rewrite is done.
///
/// Several nodes may start at once: the rewrite runs under a session-level advisory lock, so one node rewrites and the
/// others wait for it, then find it finished. The table is walked by `id` (every rewritable table's primary key starts
/// with it, partitioned ones included), `batchRows` rows a transaction.
public struct PostgresBatchedRewrite: Sendable {
    /// The migration whose data half this is.
    public let migration: String
    public let table: String
    /// One statement whose `$1`, `$2` are the batch's bounds: `id > $1 AND id <= $2`.
    public let sql: String

    public init(migration: String, table: String, sql: String) {
        self.migration = migration
        self.table = table
        self.sql = sql
    }
}

/// Runs the rewrites of `all` (and, for the benchmark, others) batch by batch after their migrations
/// (`PostgresEngine.migrate`; `apply(url:…)` for a database no server has open).
public enum PostgresBatchedRewrites {
    /// The rewrites of the shipped migrations, in migration order (none yet: see `SQLiteBatchedRewrites.all`).
    static let all: [PostgresBatchedRewrite] = []
    static let lockKey = PostgresMigrations.lockKey + 4

    /// Applies the pending migrations and, right after each one that has it, its rewrite.
    /// - Returns: false when it stopped after `stopAfterBatches` batches.
    @discardableResult
    static func migrate(
        _ database: PostgresEngine, migrations: [PostgresMigrations.Migration] = PostgresMigrations.all,
        rewrites: [PostgresBatchedRewrite] = all, batchRows: Int = 20_000,
        stopAfterBatches: Int? = nil, progress: (@Sendable (BatchedRewriteProgress) -> Void)? = nil
    ) async throws -> Bool {
        var budget = stopAfterBatches
        for rewrite in rewrites where migrations.contains(where: { $0.identifier == rewrite.migration }) {
            try await PostgresMigrations.apply(database, upTo: rewrite.migration, migrations: migrations)
            guard
                try await run(rewrite, database, batchRows: max(1, batchRows), budget: &budget, progress: progress)
            else { return false }
        }
        try await PostgresMigrations.apply(database, migrations: migrations)
        return true
    }

    /// Runs `rewrite` from where it stopped to its end (or until `budget` batches are spent), under the rewrites'
    /// advisory lock: a node that waited for it finds the rewrite finished.
    static func run(
        _ rewrite: PostgresBatchedRewrite, _ database: PostgresEngine, batchRows: Int, budget: inout Int?,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)?
    ) async throws -> Bool {
        let logger = database.logger
        let (finished, left) = try await database.read { [budget] connection -> (Bool, Int?) in
            try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            do {
                var budget = budget
                let finished = try await batches(
                    rewrite, connection, logger, batchRows: batchRows, budget: &budget, progress: progress)
                try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                return (finished, budget)
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                throw error
            }
        }
        budget = left
        return finished
    }

    /// The batches, each `BEGIN … COMMIT` on `connection` (which holds the lock).
    static func batches(
        _ rewrite: PostgresBatchedRewrite, _ connection: PostgresConnection, _ logger: Logger, batchRows: Int,
        budget: inout Int?, progress: (@Sendable (BatchedRewriteProgress) -> Void)?
    ) async throws -> Bool {
        let table = rewrite.table
        var cursor = try await storedCursor(of: rewrite, connection, logger)
        while cursor.hasBatch {
            guard BatchedRewriteCursor.spend(&budget) else { return false }
            let after = cursor.last
            try await connection.query("BEGIN", logger: logger)
            let through = cursor.through(
                nth: try await connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "SELECT id FROM \(table) WHERE id > \(after) ORDER BY id LIMIT 1 OFFSET \(batchRows - 1)"),
                    logger: logger
                ).collect().first?.decode(Int64.self))
            let count =
                try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE id > \(after) AND id <= \(through)"),
                    logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
            var bindings = PostgresBindings()
            bindings.append(after)
            bindings.append(through)
            try await connection.query(PostgresQuery(unsafeSQL: rewrite.sql, binds: bindings), logger: logger)
            try await connection.query(
                """
                UPDATE batched_rewrites SET last_id = \(through), rows_done = rows_done + \(count)
                WHERE migration = \(rewrite.migration)
                """, logger: logger)
            try await connection.query("COMMIT", logger: logger)
            progress?(cursor.advance(through: through, count: count))
        }
        if cursor.finished { return true }
        try await connection.query(
            "UPDATE batched_rewrites SET finished = true WHERE migration = \(rewrite.migration)", logger: logger)
        progress?(cursor.finish())
        return true
    }

    /// The cursor of `rewrite` as stored, or a new one stored for it (the table's last id and rows as they are now).
    static func storedCursor(of rewrite: PostgresBatchedRewrite, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> BatchedRewriteCursor
    {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS batched_rewrites (
                migration text PRIMARY KEY, last_id bigint NOT NULL, end_id bigint NOT NULL,
                rows_done bigint NOT NULL CHECK (rows_done >= 0), rows_total bigint NOT NULL CHECK (rows_total >= 0),
                finished boolean NOT NULL DEFAULT false)
            """, logger: logger)
        if let row = try await connection.query(
            "SELECT last_id, end_id, rows_done, rows_total, finished FROM batched_rewrites WHERE migration = \(rewrite.migration)",
            logger: logger
        ).collect().first {
            let (last, end, rows, total, finished) = try row.decode((Int64, Int64, Int64, Int64, Bool).self)
            return BatchedRewriteCursor(
                migration: rewrite.migration, last: last, end: end, rows: rows, total: total, finished: finished)
        }
        let row = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT max(id), count(*) FROM \(rewrite.table)"), logger: logger
        ).collect().first
        let (end, total) = try row?.decode((Int64?, Int64).self) ?? (nil, Int64(0))
        let cursor = BatchedRewriteCursor(migration: rewrite.migration, end: end, total: total)
        try await connection.query(
            """
            INSERT INTO batched_rewrites (migration, last_id, end_id, rows_done, rows_total)
            VALUES (\(rewrite.migration), \(cursor.last), \(cursor.end), 0, \(cursor.total))
            """, logger: logger)
        return cursor
    }
}

extension PostgresBatchedRewrites {
    /// Opens the database at `url` and applies the pending migrations with their rewrites, plus `extra` migrations
    /// after the shipped ones: for the benchmark, which measures a rewrite that has not shipped
    /// (`tools/bench/upgrade/run --postgres`; the twin of `SQLiteBatchedRewrites.apply(path:…)`).
    /// - Returns: false when it stopped after `stopAfterBatches` batches.
    public static func apply(
        url: String, extra: [(identifier: String, statements: [String])] = [], rewrites: [PostgresBatchedRewrite] = [],
        batchRows: Int = 20_000, stopAfterBatches: Int? = nil,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)? = nil
    ) async throws -> Bool {
        let database = try PostgresEngine(location: try PostgresLocation(url: url), maximumConnections: 2)
        await database.waitUntilRunning()
        do {
            let migrations =
                PostgresMigrations.all
                + extra.map { PostgresMigrations.Migration(identifier: $0.identifier, statements: $0.statements) }
            let finished = try await migrate(
                database, migrations: migrations, rewrites: all + rewrites, batchRows: batchRows,
                stopAfterBatches: stopAfterBatches, progress: progress)
            await database.close()
            return finished
        } catch {
            await database.close()
            throw error
        }
    }
}
