import ArgumentParser
import FaultlineCore
import PostgresStorage
import SQLiteStorage
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `tools/bench/upgrade/run --postgres`: the PostgreSQL twin of `BenchFill`: an empty database migrated as a server
/// migrates it (the weekly partitions around now made), then N reports of the last seven days, so they sit in their
/// weeks' partitions as a real install's do.
struct BenchFillPostgres: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-fill-postgres",
        abstract: "Make a PostgreSQL database at the current schema holding N reports.")

    @Option(help: "The empty database: postgres://…") var url: String
    @Option(help: "Reports to store.") var reports = 1_000_000

    func run() async throws {
        let engine = try await PostgresEngine.open(url: url)
        await engine.close()
        guard let current = PostgresUpgrade.migrations.last else { throw ExitCode.failure }
        let database = try await PostgresSchemaSnapshot(url: url, upTo: current, identities: nil)
        do {
            try await fill(database)
        } catch {
            await database.close()
            throw error
        }
        await database.close()
        print("stored \(reports) reports")
    }

    /// As `BenchFill`'s: a payload of 2 KB per 20 reports (a batch), 8 releases written three ways, 50,000 users,
    /// five error types; the reports spread evenly over the seven days before now, 100,000 a transaction.
    func fill(_ database: PostgresSchemaSnapshot) async throws {
        try await database.execute([
            "INSERT INTO projects (id, slug, created_at, rate_limit_per_second) VALUES (1, 'ios-app', 0, 50)"
        ])
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let span: Int64 = 7 * 86_400_000
        let start = now - span
        let step = max(1, span / Int64(max(reports, 1)))
        var done = 0
        while done < reports {
            let count = min(100_000, reports - done)
            try await database.execute([
                """
                INSERT INTO payloads (id, project_id, received_at, encoding, inflated_size, bytes)
                SELECT i, 1, \(start) + ((i - 1) * 20 + 1) * \(step), 'gzip', 8192, decode(repeat(md5(i::text), 128), 'hex')
                FROM generate_series(\(done / 20 + 1), \((done + count + 19) / 20)) AS i
                """,
                """
                INSERT INTO reports (id, project_id, event_id, kind, occurred_at, received_at, release, environment,
                    user_key, session_id, error_type, error_message, payload_id, payload_offset, payload_length,
                    symbolication, grouping_version)
                SELECT i, 1, lpad(to_hex(i), 32, '0'), CASE WHEN i % 4 = 0 THEN 'nonfatal' ELSE 'crash' END,
                    \(start) + i * \(step), \(start) + i * \(step),
                    CASE i % 3 WHEN 0 THEN '2.' || (i % 8) || '.0' WHEN 1 THEN '2.' || (i % 8) || '.0 (' || (200 + i % 8) || ')'
                        ELSE 'com.example.app@2.' || (i % 8) || '.0+' || (200 + i % 8) END,
                    'production', 'user-' || (i % 50000), 's-' || (i / 3),
                    CASE i % 5 WHEN 0 THEN 'SIGSEGV' WHEN 1 THEN 'SIGABRT' WHEN 2 THEN 'DecodingError' WHEN 3 THEN 'SIGBUS'
                        ELSE 'NSInvalidArgumentException' END,
                    'at 0x' || to_hex(i * 16), (i - 1) / 20 + 1, ((i - 1) % 20) * 400, 400, 'complete', 2
                FROM generate_series(\(done + 1), \(done + count)) AS i
                """,
            ])
            done += count
        }
        try await database.execute([
            "SELECT setval('payloads_id_seq', \((reports + 19) / 20))", "SELECT setval('reports_id_seq', \(reports))",
        ])
    }
}

/// The PostgreSQL twin of `BenchStep`: one upgrade step, timed (the script measures the server's CPU and WAL).
struct BenchStepPostgres: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-step-postgres",
        abstract: "Apply one upgrade step to a PostgreSQL database, timed.",
        discussion: """
            --sql (repeatable) runs statements as a migration, in one transaction (as every shipped migration runs). \
            --batched runs the schema half as a migration and the rewrite in batches (PostgresBatchedRewrites).
            """)

    @Option(help: "The database: postgres://…") var url: String
    @Option(help: "A migration's statement; all of them run in one transaction.") var sql: [String] = []
    @Flag(help: "The benchmark's batched rewrite: reports.release_key from each report's release and kind.")
    var batched = false
    @Option(help: "Rows per batch.") var batchRows = 20_000
    @Option(help: "Stop after this many batches (an interruption).") var stopAfter: Int?

    static let rewrite = PostgresBatchedRewrite(
        migration: "pg900-bench-release-key", table: "reports",
        sql: "UPDATE reports SET release_key = lower(coalesce(release, '')) || ':' || kind WHERE id > $1 AND id <= $2")

    func run() async throws {
        let clock = ContinuousClock()
        let started = clock.now
        let lastLine = Mutex<String>("")
        let batches = Mutex<Int>(0)
        let finished: Bool
        if batched {
            finished = try await PostgresBatchedRewrites.apply(
                url: url, extra: [("pg900-bench-release-key", ["ALTER TABLE reports ADD COLUMN release_key text"])],
                rewrites: [Self.rewrite], batchRows: batchRows, stopAfterBatches: stopAfter,
                progress: { progress in
                    SQLiteBatchedRewrites.standardErrorProgress(progress)
                    if progress.batch > 0 { batches.withLock { $0 += 1 } }
                    lastLine.withLock {
                        $0 = "\(progress.rows)/\(progress.total) rows\(progress.resumed ? " (resumed)" : "")"
                    }
                })
        } else {
            finished = try await PostgresBatchedRewrites.apply(url: url, extra: [("pg900-bench-step", sql)])
        }
        let elapsed = (clock.now - started).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        let what =
            batched
            ? "batched rewrite (\(batchRows) rows a batch)" : "one transaction: \(sql.joined(separator: "; "))"
        let done = batched ? ": " + lastLine.withLock { $0 } + ", \(batches.withLock { $0 }) batches this run" : ""
        print(
            """
            \(what)
              \(finished ? "finished" : "stopped") in \(String(format: "%.2f", seconds)) s\(done)
            """)
    }
}
