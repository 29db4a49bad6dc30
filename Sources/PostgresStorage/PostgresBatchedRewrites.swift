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

enum PostgresBatchedRewrites {
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

    static func run(
        _ rewrite: PostgresBatchedRewrite, _ database: PostgresEngine, batchRows: Int, budget: inout Int?,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)?
    ) async throws -> Bool {
        let logger = database.logger
        let table = rewrite.table
        let startBudget = budget
        let (finished, spent) = try await database.read { connection -> (Bool, Int) in
            try await connection.query("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            do {
                let result = try await batches(
                    rewrite, table, connection, logger, batchRows: batchRows, budget: startBudget, progress: progress)
                try await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                return result
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                _ = try? await connection.query("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                throw error
            }
        }
        budget = startBudget.map { $0 - spent }
        return finished
    }

    /// The batches, each `BEGIN … COMMIT` on `connection` (which holds the lock).
    static func batches(
        _ rewrite: PostgresBatchedRewrite, _ table: String, _ connection: PostgresConnection, _ logger: Logger,
        batchRows: Int, budget: Int?, progress: (@Sendable (BatchedRewriteProgress) -> Void)?
    ) async throws -> (Bool, Int) {
        try await connection.query(
            """
            CREATE TABLE IF NOT EXISTS batched_rewrites (
                migration text PRIMARY KEY, last_id bigint NOT NULL, end_id bigint NOT NULL,
                rows_done bigint NOT NULL CHECK (rows_done >= 0), rows_total bigint NOT NULL CHECK (rows_total >= 0),
                finished boolean NOT NULL DEFAULT false)
            """, logger: logger)
        var state = try await connection.query(
            "SELECT last_id, end_id, rows_done, rows_total, finished FROM batched_rewrites WHERE migration = \(rewrite.migration)",
            logger: logger
        ).collect().first.map { try $0.decode((Int64, Int64, Int64, Int64, Bool).self) }
        let resumed = state != nil
        if state == nil {
            let row = try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT coalesce(max(id), \(Int64.min)), count(*) FROM \(table)"),
                logger: logger
            ).collect().first
            let (end, total) = try row?.decode((Int64, Int64).self) ?? (Int64.min, Int64(0))
            try await connection.query(
                """
                INSERT INTO batched_rewrites (migration, last_id, end_id, rows_done, rows_total)
                VALUES (\(rewrite.migration), \(Int64.min), \(end), 0, \(total))
                """, logger: logger)
            state = (Int64.min, end, 0, total, false)
        }
        guard var (last, end, rows, total, done) = state else { return (true, 0) }
        if done { return (true, 0) }
        var spent = 0
        while last < end {
            if let budget, spent >= budget { return (false, spent) }
            spent += 1
            try await connection.query("BEGIN", logger: logger)
            let upper = try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT id FROM \(table) WHERE id > \(last) ORDER BY id LIMIT 1 OFFSET \(batchRows - 1)"),
                logger: logger
            ).collect().first?.decode(Int64.self)
            let through = min(upper ?? end, end)
            let count =
                try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(table) WHERE id > \(last) AND id <= \(through)"),
                    logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
            var bindings = PostgresBindings()
            bindings.append(last)
            bindings.append(through)
            try await connection.query(PostgresQuery(unsafeSQL: rewrite.sql, binds: bindings), logger: logger)
            try await connection.query(
                """
                UPDATE batched_rewrites SET last_id = \(through), rows_done = rows_done + \(count)
                WHERE migration = \(rewrite.migration)
                """, logger: logger)
            try await connection.query("COMMIT", logger: logger)
            last = through
            rows += count
            progress?(
                BatchedRewriteProgress(
                    migration: rewrite.migration, rows: rows, batch: count, total: total, resumed: resumed,
                    finished: false))
        }
        try await connection.query(
            "UPDATE batched_rewrites SET finished = true WHERE migration = \(rewrite.migration)", logger: logger)
        done = true
        progress?(
            BatchedRewriteProgress(
                migration: rewrite.migration, rows: rows, batch: 0, total: total, resumed: resumed, finished: true))
        return (true, spent)
    }
}
