import FaultlineCore
import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import PostgresStorage

/// Issue #38, on PostgreSQL: a migration's data rewrite runs in bounded batches, each committed with its cursor; an
/// interrupted upgrade continues where it stopped, every row is rewritten once, and no later migration runs before.
@Suite(.tags(.postgres), .provisioned) struct PostgresBatchedRewriteTests {
    static let extra =
        PostgresMigrations.all + [
            PostgresMigrations.Migration(
                identifier: "pg900-test-rewritten",
                statements: ["ALTER TABLE reports ADD COLUMN rewritten integer NOT NULL DEFAULT 0"]),
            PostgresMigrations.Migration(
                identifier: "pg901-test-after", statements: ["CREATE TABLE test_after_rewrite (x integer)"]),
        ]
    static let rewrite = PostgresBatchedRewrite(
        migration: "pg900-test-rewritten", table: "reports",
        sql: "UPDATE reports SET rewritten = rewritten + 1 WHERE id > $1 AND id <= $2")

    static let counts = "SELECT rewritten || '×' || count(*) FROM reports GROUP BY rewritten"

    /// 5,000 reports (ids with gaps) in two weeks' partitions.
    static func fill(_ stores: Stores) async throws {
        try await stores.execute(
            "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (1, 'app', 0, 10)")
        try await stores.execute(
            """
            INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, payload_id, payload_offset,
                                 payload_length)
            SELECT i * 3, 1, lpad(to_hex(i), 32, '0'), 'crash', i, 1772442000000 + i * 200000, 1, 0, 1
            FROM generate_series(1, 5000) AS i
            """)
    }

    @Test func anInterruptedRewriteResumesWhereItStoppedAndRewritesEachRowOnce() async throws {
        try await withStores(.postgres) { stores in
            // Given 5,000 reports (ids with gaps) in two weeks' partitions…
            let database = try #require(stores.postgres)
            try await Self.fill(stores)
            let seen = Mutex<[BatchedRewriteProgress]>([])
            let record: @Sendable (BatchedRewriteProgress) -> Void = { p in seen.withLock { $0.append(p) } }

            // When the upgrade stops after three batches of 700 rows…
            let finished = try await PostgresBatchedRewrites.migrate(
                database, migrations: Self.extra, rewrites: [Self.rewrite], batchRows: 700, stopAfterBatches: 3,
                progress: record)

            // …then 2,100 rows are rewritten once, and the later migration has not run.
            #expect(!finished)
            let counts = Self.counts
            #expect(try await stores.texts(counts) == ["0×2900", "1×2100"])
            #expect(seen.withLock { $0.map(\.rows) } == [700, 1400, 2100])
            #expect(try await stores.texts("SELECT to_regclass('test_after_rewrite')::text") == ["∅"])

            // When it runs again, it continues after the last committed batch, to the end, then migrates on.
            seen.withLock { $0 = [] }
            #expect(
                try await PostgresBatchedRewrites.migrate(
                    database, migrations: Self.extra, rewrites: [Self.rewrite], batchRows: 700, progress: record))
            #expect(try await stores.texts(counts) == ["1×5000"])
            #expect(seen.withLock { $0.first?.rows } == 2800)
            #expect(seen.withLock { $0.last?.finished == true && $0.last?.resumed == true })
            #expect(try await stores.texts("SELECT to_regclass('test_after_rewrite')::text") == ["test_after_rewrite"])

            // A third run has nothing to do.
            #expect(
                try await PostgresBatchedRewrites.migrate(
                    database, migrations: Self.extra, rewrites: [Self.rewrite], batchRows: 700))
            #expect(try await stores.texts(counts) == ["1×5000"])
        }
    }

    @Test func twoNodesStartingAtOnceRewriteEachRowOnce() async throws {
        try await withStores(.postgres) { stores in
            // Given 5,000 reports and a second node on the same database…
            let database = try #require(stores.postgres)
            try await Self.fill(stores)
            let other = try PostgresEngine(
                location: try PostgresLocation(url: database.urlForTests), maximumConnections: 2)
            await other.waitUntilRunning()

            // When both upgrade at once…
            let seen = Mutex<[BatchedRewriteProgress]>([])
            let record: @Sendable (BatchedRewriteProgress) -> Void = { p in seen.withLock { $0.append(p) } }
            async let first = PostgresBatchedRewrites.migrate(
                database, migrations: Self.extra, rewrites: [Self.rewrite], batchRows: 700, progress: record)
            async let second = PostgresBatchedRewrites.migrate(
                other, migrations: Self.extra, rewrites: [Self.rewrite], batchRows: 700, progress: record)
            let finished = try await (first, second)
            await other.close()

            // …then one rewrote every row once, and the other found the rewrite done: one finish, no batch twice.
            #expect(finished == (true, true))
            #expect(try await stores.texts(Self.counts) == ["1×5000"])
            #expect(seen.withLock { $0.filter(\.finished).count } == 1)
            #expect(seen.withLock { $0.map(\.batch).reduce(0, +) } == 5000)
        }
    }
}
