import FaultlineCore
import GRDB

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A data rewrite too large for one transaction, done in bounded batches that survive an interruption (issue #38).
///
/// A GRDB migration is one transaction: a migration that rewrites every report (v15's search backfill, v27's release
/// names) holds the whole rewrite in the WAL until it commits — a WAL as large as the table, minutes with nothing to
/// show, and a kill at 90 % starts again from zero. A batched rewrite is the data half of such a migration: the
/// migration itself changes only the schema (a new column, a new table), and the rewrite then walks `table` by its
/// integer key, `batchRows` rows per transaction. Each batch commits together with its cursor in
/// `batched_rewrites`, so a batch is applied exactly once: after a kill, the next open continues after the last
/// committed batch. The WAL is checkpointed between batches, so it stays the size of a batch.
///
/// Order: `SQLiteBatchedRewrites.migrate` applies the migrations up to the rewrite's own, runs the rewrite to its end,
/// then goes on; a later migration never sees half-rewritten data, and the server opens only once everything is done.
///
/// To add one (docs/operations.md, "Upgrading"): register the schema half as a normal migration `vN-…`, then add
/// `BatchedRewrite(migration: "vN-…", table: "reports", sql: "UPDATE reports SET … WHERE id > ?1 AND id <= ?2")` to
/// `SQLiteBatchedRewrites.all`. `?1` and `?2` are the batch's bounds (exclusive, inclusive). The statement must only
/// change rows within the bounds.
public struct BatchedRewrite: Sendable {
    /// The migration whose data half this is.
    public let migration: String
    /// The table walked, by its `id` (an INTEGER PRIMARY KEY).
    public let table: String
    /// One statement whose `?1`, `?2` are the batch's bounds: `id > ?1 AND id <= ?2`.
    public let sql: String

    public init(migration: String, table: String, sql: String) {
        self.migration = migration
        self.table = table
        self.sql = sql
    }
}

public enum SQLiteBatchedRewrites {
    /// The rewrites of the shipped migrations, in migration order. Empty until the next data-rewriting migration:
    /// the earlier ones (v5, v11, v15, v24, v27) shipped as single transactions and are never edited.
    static let all: [BatchedRewrite] = []

    /// Rows per batch: about 10 MB of WAL for a row of the reports table with its indexes.
    public static let defaultBatchRows = 20_000

    /// Applies `migrator`'s pending migrations and, right after each migration that has one, its rewrite.
    /// - Parameters:
    ///   - stopAfterBatches: stop (as a kill would) after this many batches (tests, the benchmark).
    /// - Returns: false when it stopped early, true when everything is applied.
    @discardableResult
    static func migrate(
        _ writer: some DatabaseWriter, migrator: DatabaseMigrator, rewrites: [BatchedRewrite],
        batchRows: Int = defaultBatchRows, stopAfterBatches: Int? = nil,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)? = nil
    ) throws -> Bool {
        var budget = stopAfterBatches
        for rewrite in rewrites where migrator.migrations.contains(rewrite.migration) {
            // GRDB refuses to migrate "up to" a migration it is past: a finished rewrite's migration is applied already.
            if try !writer.read({ db in try migrator.appliedIdentifiers(db) }).contains(rewrite.migration) {
                try migrator.migrate(writer, upTo: rewrite.migration)
            }
            guard try run(rewrite, writer, batchRows: max(1, batchRows), budget: &budget, progress: progress) else {
                return false
            }
        }
        try migrator.migrate(writer)
        return true
    }

    /// Runs `rewrite` from where it stopped to its end (or until `budget` batches are spent).
    static func run(
        _ rewrite: BatchedRewrite, _ writer: some DatabaseWriter, batchRows: Int, budget: inout Int?,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)?
    ) throws -> Bool {
        let table = rewrite.table
        var cursor = try writer.write { db in try storedCursor(of: rewrite, db) }
        while cursor.hasBatch {
            guard BatchedRewriteCursor.spend(&budget) else { return false }
            let batch = try writer.write { db -> (through: Int64, count: Int64) in
                let after = cursor.last
                let through = cursor.through(
                    nth: try Int64.fetchOne(
                        db, sql: "SELECT id FROM \"\(table)\" WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?",
                        arguments: [after, batchRows - 1]))
                let count =
                    try Int64.fetchOne(
                        db, sql: "SELECT count(*) FROM \"\(table)\" WHERE id > ? AND id <= ?",
                        arguments: [after, through]
                    ) ?? 0
                try db.execute(sql: rewrite.sql, arguments: [after, through])
                try db.execute(
                    sql: "UPDATE batched_rewrites SET last_id = ?, rows_done = rows_done + ? WHERE migration = ?",
                    arguments: [through, count, rewrite.migration])
                return (through, count)
            }
            let moved = cursor.advance(through: batch.through, count: batch.count)
            // A passive checkpoint keeps the WAL at a batch's size (the server has not started: no reader holds it).
            try writer.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
            progress?(moved)
        }
        if cursor.finished { return true }
        try writer.write { db in
            try db.execute(
                sql: "UPDATE batched_rewrites SET finished = 1 WHERE migration = ?", arguments: [rewrite.migration])
        }
        progress?(cursor.finish())
        return true
    }

    /// The cursor of `rewrite` as stored, or a new one stored for it (the table's last id and rows as they are now).
    static func storedCursor(of rewrite: BatchedRewrite, _ db: Database) throws -> BatchedRewriteCursor {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS batched_rewrites (
                    migration TEXT PRIMARY KEY,
                    last_id INTEGER NOT NULL,
                    end_id INTEGER NOT NULL,
                    rows_done INTEGER NOT NULL CHECK (rows_done >= 0),
                    rows_total INTEGER NOT NULL CHECK (rows_total >= 0),
                    finished INTEGER NOT NULL DEFAULT 0 CHECK (finished IN (0, 1))
                )
                """)
        if let row = try Row.fetchOne(
            db,
            sql: "SELECT last_id, end_id, rows_done, rows_total, finished FROM batched_rewrites WHERE migration = ?",
            arguments: [rewrite.migration])
        {
            return BatchedRewriteCursor(
                migration: rewrite.migration, last: row[0], end: row[1], rows: row[2], total: row[3],
                finished: row[4] as Int64 == 1)
        }
        let cursor = BatchedRewriteCursor(
            migration: rewrite.migration, end: try Int64.fetchOne(db, sql: "SELECT max(id) FROM \"\(rewrite.table)\""),
            total: try Int64.fetchOne(db, sql: "SELECT count(*) FROM \"\(rewrite.table)\"") ?? 0)
        try db.execute(
            sql:
                "INSERT INTO batched_rewrites (migration, last_id, end_id, rows_done, rows_total) VALUES (?, ?, ?, 0, ?)",
            arguments: [rewrite.migration, cursor.last, cursor.end, cursor.total])
        return cursor
    }

    /// Progress as a server prints it: a line on standard error at each tenth of the way and at the end.
    public static let standardErrorProgress: @Sendable (BatchedRewriteProgress) -> Void = { progress in
        guard progress.crossesATenth else { return }
        _ = (progress.line + "\n").withCString { write(2, $0, strlen($0)) }
    }

    /// Opens the database at `path` as a server does (WAL) and applies the pending migrations with their rewrites,
    /// plus `extra` migrations after the shipped ones: for the benchmark and tests, which measure a rewrite that has
    /// not shipped (`tools/bench/upgrade/run`).
    /// - Returns: false when it stopped after `stopAfterBatches` batches.
    public static func apply(
        path: String, extra: [(identifier: String, sql: String)] = [], rewrites: [BatchedRewrite] = [],
        batchRows: Int = defaultBatchRows, stopAfterBatches: Int? = nil, identities: IdentityHashers? = nil,
        progress: (@Sendable (BatchedRewriteProgress) -> Void)? = nil
    ) throws -> Bool {
        var config = Configuration()
        config.foreignKeysEnabled = true
        let rollupUsers = identities.map(RollupUserKeys.sqlFunction)
        config.prepareDatabase { db in if let rollupUsers { db.add(function: rollupUsers) } }
        try SQLiteEngine.createWithAutoVacuum(path: path)
        let pool = try DatabasePool(path: path, configuration: config)
        defer { try? pool.close() }
        var migrator = SQLiteMigrations.migrator
        for migration in extra {
            migrator.registerMigration(migration.identifier) { db in try db.execute(sql: migration.sql) }
        }
        return try migrate(
            pool, migrator: migrator, rewrites: all + rewrites, batchRows: batchRows,
            stopAfterBatches: stopAfterBatches,
            progress: progress)
    }
}
