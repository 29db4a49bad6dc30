import FaultlineCore
import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing

@testable import SQLiteStorage

/// Issue #38: a migration that rewrites a large table does it in bounded batches, each committed with its cursor, so
/// an interrupted upgrade continues where it stopped and applies every row exactly once, and no later migration runs
/// before the rewrite is done.
@Suite struct BatchedRewriteTests {
    /// A test migration's schema half and its rewrite: each run adds 1 to `rewritten`, so a row done twice shows 2.
    static let extra: [(identifier: String, sql: String)] = [
        ("v900-test-rewritten", "ALTER TABLE reports ADD COLUMN rewritten INTEGER NOT NULL DEFAULT 0"),
        ("v901-test-after", "CREATE TABLE test_after_rewrite (x INTEGER)"),
    ]
    static let rewrite = BatchedRewrite(
        migration: "v900-test-rewritten", table: "reports",
        sql: "UPDATE reports SET rewritten = rewritten + 1 WHERE id > ?1 AND id <= ?2")

    /// A database at the current schema with `count` reports (ids with gaps, as deletions leave them).
    static func database(reports count: Int) throws -> (TempFolder, String) {
        let folder = try TempFolder()
        let path = folder.path + "/faultline.sqlite"
        #expect(try SQLiteBatchedRewrites.apply(path: path))
        try SQLiteSchemaSnapshot.execute(
            """
            INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (1, 'app', 0, 10);
            INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes) VALUES (1, 1, 0, 'gzip', 1, x'00');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
            INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, payload_id, payload_offset,
                                 payload_length)
            SELECT i * 3, 1, printf('%032x', i), 'crash', i, i, 1, 0, 1 FROM n;
            """, at: path)
        return (folder, path)
    }

    static func counts(_ path: String) throws -> [String] {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT rewritten, count(*) FROM reports GROUP BY rewritten ORDER BY rewritten")
                .map { "\($0[0] as Int64)×\($0[1] as Int64)" }
        }
    }

    static func tableExists(_ path: String, _ table: String) throws -> Bool {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in try db.tableExists(table) }
    }

    @Test func anInterruptedRewriteResumesWhereItStoppedAndRewritesEachRowOnce() throws {
        let (folder, path) = try Self.database(reports: 5000)
        defer { _ = folder }
        let seen = Mutex<[BatchedRewriteProgress]>([])
        let record: @Sendable (BatchedRewriteProgress) -> Void = { progress in seen.withLock { $0.append(progress) } }

        // When the upgrade stops after three batches of 700 rows (as a kill would)…
        let finished = try SQLiteBatchedRewrites.apply(
            path: path, extra: Self.extra, rewrites: [Self.rewrite], batchRows: 700, stopAfterBatches: 3,
            progress: record)

        // …then 2,100 rows are rewritten, once each, progress said so, and the later migration has not run.
        #expect(!finished)
        #expect(try Self.counts(path) == ["0×2900", "1×2100"])
        #expect(seen.withLock { $0.map(\.rows) } == [700, 1400, 2100])
        #expect(seen.withLock { $0.allSatisfy { $0.total == 5000 && !$0.resumed } })
        #expect(try !Self.tableExists(path, "test_after_rewrite"))

        // When it is opened again, it continues after the last committed batch, to the end, then migrates on.
        seen.withLock { $0 = [] }
        #expect(
            try SQLiteBatchedRewrites.apply(
                path: path, extra: Self.extra, rewrites: [Self.rewrite], batchRows: 700, progress: record))
        #expect(try Self.counts(path) == ["1×5000"])
        #expect(seen.withLock { $0.first?.rows } == 2800)
        #expect(
            seen.withLock { $0.last }
                == BatchedRewriteProgress(
                    migration: "v900-test-rewritten", rows: 5000, batch: 0, total: 5000, resumed: true, finished: true))
        #expect(try Self.tableExists(path, "test_after_rewrite"))

        // A third open has nothing to do: no row is rewritten again.
        #expect(
            try SQLiteBatchedRewrites.apply(path: path, extra: Self.extra, rewrites: [Self.rewrite], batchRows: 700))
        #expect(try Self.counts(path) == ["1×5000"])
    }

    @Test func aRewriteOfAnEmptyTableFinishesAtOnce() throws {
        let folder = try TempFolder()
        let path = folder.path + "/faultline.sqlite"
        #expect(
            try SQLiteBatchedRewrites.apply(
                path: path, extra: Self.extra, rewrites: [Self.rewrite], stopAfterBatches: 0))
        #expect(try Self.tableExists(path, "test_after_rewrite"))
    }
}
