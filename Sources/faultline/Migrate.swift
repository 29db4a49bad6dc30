import ArgumentParser
import FaultlineCore
import FaultlineHTTP
import StoreMigration
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline migrate --from DATA --to postgres://… --blobs DIR`: copies a SQLite installation into PostgreSQL
/// (StoreMigrator; docs/scaling.md, "Moving an existing install").
struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Copy a data folder's database and debug files into PostgreSQL (server stopped); --check: what an upgrade will do.",
        discussion: """
            Copies every table (projects and keys, reports and payloads, sessions, issues with their state, symbols, \
            alerts, debug files, dashboard logins…) with their ids, in one PostgreSQL transaction, then counts each \
            table on both sides and commits only when every count matches. Debug files are copied into \
            BLOBS/debug-files, each checked against its SHA-256. Run it again to replace the copy an earlier run made; \
            a database that servers have written to is refused. Stop the server first: the copy is of one moment \
            (a SQLite snapshot), and what the server writes after it is not copied.
            """)

    @Option(
        name: .long, help: "The data folder to copy, holding faultline.sqlite (env FAULTLINE_DATA; default ./data).")
    var from: String?

    @Option(
        name: .long,
        help: """
            The PostgreSQL database: postgres://USER@HOST[:PORT]/DATABASE[?sslmode=…] (env FAULTLINE_DATABASE_URL; the \
            password from FAULTLINE_DATABASE_PASSWORD when the URL has none).
            """)
    var to: String?

    @Option(
        name: .long, help: "The folder every node shares; debug files go to its debug-files/ (env FAULTLINE_BLOBS).")
    var blobs: String?

    @Flag(
        name: .long,
        help: """
            Say what upgrading the database to this faultline's schema will do, and change nothing: the pending steps \
            by name with what each does, and an estimate of time and extra disk from the tables' sizes \
            (docs/operations.md, "Upgrading"). Checks --from's SQLite database, or --database.
            """)
    var check = false

    @Option(
        name: .long,
        help: "With --check: the PostgreSQL database to check instead of a data folder (postgres://…).")
    var database: String?

    var dataFolder: String { from ?? Environment.string("FAULTLINE_DATA") ?? "data" }
    var url: String? { to ?? Environment.string("FAULTLINE_DATABASE_URL") }
    var blobFolder: String? { blobs ?? Environment.string("FAULTLINE_BLOBS") }

    func validate() throws {
        if check {
            if let database, !(database.hasPrefix("postgres://") || database.hasPrefix("postgresql://")) {
                throw ValidationError("--database must be a postgres:// URL")
            }
            return
        }
        guard let url else { throw ValidationError("--to postgres://… is required (or FAULTLINE_DATABASE_URL)") }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw ValidationError("--to must be a postgres:// URL")
        }
        guard blobFolder != nil else {
            throw ValidationError(
                "--blobs is required (or FAULTLINE_BLOBS): the folder the servers will share, for the debug files")
        }
    }

    func run() async throws {
        if check { return try await runCheck() }
        let clock = ContinuousClock()
        let started = clock.now
        let display = ProgressLine()
        let summary: MigrationSummary
        do {
            summary = try await StoreMigrator.migrate(
                dataFolder: dataFolder, url: url ?? "", password: Environment.string("FAULTLINE_DATABASE_PASSWORD"),
                blobs: blobFolder ?? "", hasher: SHA256ContentHasher(), identities: .hmacSHA256, now: Date(),
                progress: { display.show($0) })
        } catch let error as MigrationError {
            display.end()
            if let counts = error.counts { Console.write(counts.rendered + "\n") }
            Console.write("error: \(error.message)\n", fd: 2)
            throw ExitCode.failure
        }
        display.end()
        let elapsed = (clock.now - started).components
        let seconds = max(0.001, Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        Console.write(summary.counts.rendered + "\n")
        if let replaced = summary.replaced {
            Console.write("replaced the copy migrated from \(replaced.source) at \(replaced.at.formatted(.iso8601))\n")
        }
        Console.write(
            "copied \(summary.rows) rows in \(String(format: "%.1f", seconds)) s (\(Int(Double(summary.rows) / seconds)) rows/s); "
                + "debug files: \(summary.blobsCopied) copied, \(summary.blobsPresent) already there\n")
        if !summary.blobsMissing.isEmpty {
            Console.write(
                "warning: \(summary.blobsMissing.count) debug files were named in the database but missing from \(dataFolder)/debug-files "
                    + "(their rows were copied and serve nothing, as before): \(summary.blobsMissing.prefix(5).map(\.rawValue).joined(separator: ", "))\n",
                fd: 2)
        }
    }
}

/// Progress on standard error: on a terminal, one line rewritten in place (at most every 200 ms); otherwise (a log) a
/// line per finished step.
final class ProgressLine: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var shown = false
    }
    private let state = Mutex(State())
    private let terminal = isatty(2) == 1

    func show(_ progress: MigrationProgress) {
        let text: String
        let finished: Bool
        switch progress {
        case .blobs(let done, let total):
            text = "debug files: \(done)/\(total)"
            finished = done == total
        case .table(let table, let rows, let total):
            text = "\(table): \(rows)/\(total) rows"
            finished = rows == total && (terminal || total > 0)
        case .verifying:
            text = "counting both sides"
            finished = true
        }
        guard terminal else {
            if finished { Console.write(text + "\n", fd: 2) }  // a log: the steps that copied something
            return
        }
        let now = ContinuousClock.now
        let due = state.withLock { state -> Bool in
            if let last = state.last, now - last < .milliseconds(200), !finished { return false }
            state.last = now
            state.shown = true
            return true
        }
        if due { Console.write("\r\u{1B}[K" + text, fd: 2) }
    }

    func end() {
        if state.withLock({ $0.shown }) { Console.write("\r\u{1B}[K", fd: 2) }
    }
}
