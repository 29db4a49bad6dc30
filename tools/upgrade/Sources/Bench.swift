import ArgumentParser
import FaultlineCore
import SQLiteStorage
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `tools/bench/upgrade/run`: a SQLite database of N reports at the current schema, then one upgrade step on a copy
/// of it, timed, with the WAL's peak size sampled while it runs.
struct BenchFill: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-fill", abstract: "Make a database at the current schema holding N reports.")

    @Option(help: "The database file to make.") var path: String
    @Option(help: "Reports to store.") var reports = 1_000_000

    func run() throws {
        guard try SQLiteBatchedRewrites.apply(path: path) else { throw ExitCode.failure }
        try SQLiteSchemaSnapshot.execute(
            "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (1, 'ios-app', 0, 50)", at: path)
        // 100,000 reports a transaction: a payload of 2 KB per 20 reports (a batch), 8 releases written three ways,
        // 50,000 users, five error types, as an app's reports look.
        var done = 0
        while done < reports {
            let count = min(100_000, reports - done)
            try SQLiteSchemaSnapshot.execute(
                """
                WITH RECURSIVE n(i) AS (SELECT \(done / 20 + 1) UNION ALL SELECT i + 1 FROM n WHERE i < \((done + count + 19) / 20))
                INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes)
                SELECT i, 1, 1772442000000 + i * 1000, 'gzip', 8192, randomblob(2048) FROM n;
                WITH RECURSIVE n(i) AS (SELECT \(done + 1) UNION ALL SELECT i + 1 FROM n WHERE i < \(done + count))
                INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, environment,
                    user_key, session_id, error_type, error_message, payload_id, payload_offset, payload_length,
                    symbolication, grouping_version)
                SELECT i, 1, printf('%032x', i), CASE WHEN i % 4 = 0 THEN 'nonfatal' ELSE 'crash' END,
                    1772442000000 + i * 50, 1772442000000 + i * 50,
                    CASE i % 3 WHEN 0 THEN '2.' || (i % 8) || '.0' WHEN 1 THEN '2.' || (i % 8) || '.0 (' || (200 + i % 8) || ')'
                        ELSE 'com.example.app@2.' || (i % 8) || '.0+' || (200 + i % 8) END,
                    'production', 'user-' || (i % 50000), 's-' || (i / 3),
                    CASE i % 5 WHEN 0 THEN 'SIGSEGV' WHEN 1 THEN 'SIGABRT' WHEN 2 THEN 'DecodingError' WHEN 3 THEN 'SIGBUS'
                        ELSE 'NSInvalidArgumentException' END,
                    'at 0x' || printf('%x', i * 16), (i - 1) / 20 + 1, ((i - 1) % 20) * 400, 400, 'complete', 2
                FROM n;
                """, at: path)
            done += count
        }
        print("stored \(done) reports in \(path)")
    }
}

struct BenchStep: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-step",
        abstract: "Apply one upgrade step to the database, timed, with the WAL's peak size.",
        discussion: """
            --sql runs a statement as a migration, in one transaction (as every shipped migration runs). \
            --batched runs the schema half as a migration and the rewrite in batches (SQLiteBatchedRewrites).
            """)

    @Option(help: "The database file.") var path: String
    @Option(help: "A migration's SQL, run in one transaction.") var sql: String?
    @Flag(help: "The benchmark's batched rewrite: reports.release_key from each report's release and kind.")
    var batched = false
    @Option(help: "Rows per batch.") var batchRows = SQLiteBatchedRewrites.defaultBatchRows
    @Option(help: "Stop after this many batches (an interruption).") var stopAfter: Int?

    static let column = "ALTER TABLE reports ADD COLUMN release_key TEXT"
    static let rewrite = BatchedRewrite(
        migration: "v900-bench-release-key", table: "reports",
        sql: """
            UPDATE reports SET release_key = lower(coalesce(release, '')) || ':' || kind
            WHERE id > ?1 AND id <= ?2
            """)

    func run() async throws {
        let before = Self.size(path)
        let peak = Atomic<Int64>(0)
        let wal = path + "-wal"
        let sampler = Task.detached {
            while !Task.isCancelled {
                let size = Self.size(wal)
                if size > peak.load(ordering: .relaxed) { peak.store(size, ordering: .relaxed) }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        let clock = ContinuousClock()
        let started = clock.now
        let lastLine = Mutex<String>("")
        let (path, sql, batched, batchRows, stopAfter) = (path, sql, batched, batchRows, stopAfter)
        let finished = try await Task.detached {
            if batched {
                return try SQLiteBatchedRewrites.apply(
                    path: path, extra: [("v900-bench-release-key", Self.column)], rewrites: [Self.rewrite],
                    batchRows: batchRows, stopAfterBatches: stopAfter,
                    progress: { progress in
                        SQLiteBatchedRewrites.standardErrorProgress(progress)
                        lastLine.withLock {
                            $0 = "\(progress.rows)/\(progress.total) rows\(progress.resumed ? " (resumed)" : "")"
                        }
                    })
            }
            return try SQLiteBatchedRewrites.apply(path: path, extra: [("v900-bench-step", sql ?? "SELECT 1")])
        }.value
        let seconds =
            Double((clock.now - started).components.attoseconds) / 1e18
            + Double((clock.now - started).components.seconds)
        sampler.cancel()
        let after = Self.size(path)
        print(
            """
            \(batched ? "batched rewrite (\(batchRows) rows a batch)" : "one transaction: \(sql ?? "")")
              \(finished ? "finished" : "stopped") in \(String(format: "%.2f", seconds)) s\(batched ? ": " + lastLine.withLock { $0 } : "")
              WAL peak \(Self.mb(peak.load(ordering: .relaxed))); database \(Self.mb(before)) → \(Self.mb(after))
            """)
    }

    static func size(_ path: String) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int).map(Int64.init) ?? 0
    }

    static func mb(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
}

struct BenchSizes: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-sizes", abstract: "Each table's bytes with its indexes (dbstat).")
    @Option(help: "The database file.") var path: String

    func run() throws {
        for (table, bytes) in try SQLiteUpgrade.tableBytes(path: path).sorted(by: { $0.value > $1.value }).prefix(6) {
            print("  \(table): \(BenchStep.mb(bytes))")
        }
    }
}
