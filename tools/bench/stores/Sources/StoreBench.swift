import ArgumentParser
import FaultlineCore
import Logging
import PostgresStorage
import Storage
import StoreMigration

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The storage engines side by side (issue #14): ingest commits and the worker's processing (claim a batch, save the
/// results with grouping, rollups and search entries) through the real stores, on SQLite and on PostgreSQL, with
/// one or several PostgreSQL nodes. No HTTP, no symbolication: what the database side of a node costs.
@main
struct StoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store-bench", abstract: "Measure ingest and processing through the stores of one engine.")

    @Option(help: "postgres://… (a database to fill; it is migrated), or sqlite:FOLDER.") var database: String
    @Option(help: "Reports to store and process.") var reports = 20_000
    @Option(help: "Reports per request (one payload).") var perRequest = 20
    @Option(help: "Requests per ingest commit (what group commit gathers under load).") var perCommit = 16
    @Option(help: "Reports per processing batch.") var batch = 256
    @Option(help: "Distinct crash sites (issues).") var issues = 500
    @Option(help: "PostgreSQL nodes processing at once (each its own pool).") var nodes = 1
    @Option(help: "With sqlite:FOLDER: afterwards, migrate the folder into this (empty) postgres:// database and time it.")
    var migrateTo: String?

    struct Engine: Sendable {
        var ingest: any IngestStore
        var projects: any ProjectStore
        var symbolication: any SymbolicationStore
        var size: @Sendable () async throws -> Int64
        var sqlite: FaultlineDatabase? = nil
    }

    func engine() async throws -> Engine {
        if database.hasPrefix("sqlite:") {
            let folder = String(database.dropFirst("sqlite:".count))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let db = try FaultlineDatabase(path: folder + "/faultline.sqlite", codec: .none)
            return Engine(
                ingest: SQLiteIngestStore(database: db), projects: SQLiteProjectStore(database: db),
                symbolication: SQLiteSymbolicationStore(database: db),
                size: {
                    let sizes = ["", "-wal"].compactMap { try? FileManager.default.attributesOfItem(atPath: folder + "/faultline.sqlite" + $0)[.size] }
                    return sizes.reduce(Int64(0)) { $0 + ((($1 as? Int).map(Int64.init)) ?? ($1 as? Int64) ?? 0) }
                }, sqlite: db)
        }
        var logger = Logger(label: "store-bench")
        logger.logLevel = .warning
        let pg = try await PostgresEngine.open(url: database, logger: logger)
        return Engine(
            ingest: PostgresIngestStore(database: pg), projects: PostgresProjectStore(database: pg),
            symbolication: PostgresSymbolicationStore(database: pg), size: { try await pg.databaseSize() })
    }

    func run() async throws {
        let main = try await engine()
        let slug = "bench\(Int.random(in: 0..<1_000_000))"
        let project = try await main.projects.createProject(
            slug: ProjectSlug(slug)!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 60) + String(format: "%04x", Int.random(in: 0..<65536))),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 60) + String(format: "%04x", Int.random(in: 0..<65536))),
            createdAt: Date(), rateLimitPerSecond: 1000)
        let sizeBefore = try await main.size()
        let payload = StoredPayload(bytes: Array(repeating: 0x5a, count: 3_000), encoding: .gzip, inflatedSize: 12_000)
        let requests = (reports + perRequest - 1) / perRequest
        let clock = ContinuousClock()
        var start = clock.now
        var stored = 0
        var request = 0
        while request < requests {
            var writes: [IngestWrite] = []
            for _ in 0..<perCommit where request < requests {
                let reports = (0..<perRequest).map { index -> PreparedReport in
                    let n = request * perRequest + index
                    var report = Report(eventID: EventID(String(format: "%032x", n + 1))!, kind: .crash, timestamp: Date())
                    report.app = AppInfo(version: "1.\(n % 4)")
                    report.userID = "user-\(n % 5_000)"
                    report.error = ErrorInfo(type: "SIGSEGV", message: "crash \(n % self.issues)")
                    return PreparedReport(report: report, range: (index * 150)..<(index * 150 + 150))
                }
                writes.append(.reports(ReportBatch(project: project.id, receivedAt: Date(), payload: payload, reports: reports)))
                request += 1
            }
            for case .reports(let new, _) in try await main.ingest.commit(writes) { stored += new.count }
        }
        let ingestSeconds = seconds(clock.now - start)
        print("ingest: \(stored) reports in \(format(ingestSeconds)) s = \(Int(Double(stored) / ingestSeconds)) reports/s "
            + "(\(perRequest) per request, \(perCommit) requests per commit)")

        var workers = [main]
        if nodes > 1 { for _ in 1..<nodes { workers.append(try await engine()) } }
        start = clock.now
        let (batch, issues) = (self.batch, self.issues)
        let processed = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in workers {
                group.addTask { try await Self.process(worker, batch: batch, issues: issues) }
            }
            return try await group.reduce(0, +)
        }
        let processSeconds = seconds(clock.now - start)
        print("processing: \(processed) reports in \(format(processSeconds)) s = \(Int(Double(processed) / processSeconds)) reports/s "
            + "(\(workers.count) node\(workers.count == 1 ? "" : "s"), batches of \(batch): claim, result, modules, search entry, "
            + "grouping and rollups)")
        let grown = try await main.size() - sizeBefore
        print("storage: \(grown / 1024) KiB for \(stored) reports = \(grown / Int64(max(1, stored))) bytes per report "
            + "(3,000-byte payloads shared by \(perRequest) reports)")
        if let migrateTo, let source = main.sqlite {
            try await migrate(source, to: migrateTo)
        }
    }

    /// `faultline migrate` of what the run stored, timed: every table copied, derived, counted and committed.
    func migrate(_ source: FaultlineDatabase, to url: String) async throws {
        let folder = String(database.dropFirst("sqlite:".count))
        let blobs = folder + "/migrated-blobs"
        let clock = ContinuousClock()
        let start = clock.now
        var logger = Logger(label: "store-bench")
        logger.logLevel = .warning
        let target = try await PostgresEngine.open(url: url, logger: logger)
        let summary = try await StoreMigrator(
            source: source, sourceName: folder, debugFiles: folder + "/debug-files", target: target, blobs: blobs, hasher: NoDebugFiles()
        ).run(now: Date())
        let elapsed = seconds(clock.now - start)
        await target.close()
        print(summary.counts.rendered)
        print("migrate: \(summary.rows) rows in \(format(elapsed)) s = \(Int(Double(summary.rows) / elapsed)) rows/s "
            + "(\(Int(Double(stored(summary, "reports")) / elapsed)) reports/s with their payloads, results, modules, search entries "
            + "and rollups; one transaction, counted on both sides)")
    }

    func stored(_ summary: MigrationSummary, _ table: String) -> Int64 {
        summary.counts.first { $0.table == table }?.postgres ?? 0
    }

    /// The bench stores no debug files: nothing is hashed.
    struct NoDebugFiles: ContentHashing {
        final class Unused: ContentDigesting {
            func update(_ bytes: [UInt8]) {}
            func finalize() -> ContentHash { ContentHash(String(repeating: "0", count: 64))! }
        }
        func sha256() -> any ContentDigesting { Unused() }
        func sha256(ofFileAt path: String) throws -> ContentHash {
            throw StorageError(.openFailed, "store-bench stores no debug files")
        }
    }

    /// One node's worker loop: claim a batch, save synthetic results, until the queue is empty.
    static func process(_ engine: Engine, batch: Int, issues: Int) async throws -> Int {
        var done = 0
        while true {
            let pending = try await engine.symbolication.pending(limit: batch)
            if pending.isEmpty { return done }
            try await engine.symbolication.saveAll(pending.map { outcome($0, issues: issues) }, at: Date())
            done += pending.count
        }
    }

    static func outcome(_ pending: PendingSymbolication, issues: Int) -> SymbolicationOutcome {
        let site = "site\(Int(pending.reportID) % issues)"
        let result = SymbolicatedReport(
            state: .partial,
            threads: [[
                SymbolicatedFrameSlot(frames: [ResolvedFrame(function: site, file: "/src/app.swift", line: 42)], buildID: "aaaaaaaaaaaaaaaa", status: "dwarf", offset: 16),
                SymbolicatedFrameSlot(frames: [], buildID: "bbbbbbbbbbbbbbbb", status: "missing_debug_file", offset: 32),
            ]],
            missing: [MissingModule(buildID: "bbbbbbbbbbbbbbbb", module: "libc.so.6")])
        let grouping = GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack, components: [site],
                title: "crash in \(site)", culprit: site),
            tags: ["device": "Pixel \(pending.reportID % 7)", "os": "Android 14"])
        let search = SearchDocument(
            event: pending.raw.summary.eventID.rawValue, user: pending.raw.summary.userKey ?? "", release: pending.raw.summary.release ?? "",
            error: "SIGSEGV crash in \(site)", functions: "\(site)\nmain", keys: "")
        return SymbolicationOutcome(
            reportID: pending.reportID, result: result, grouping: grouping, filesSeen: pending.filesSeen,
            modules: ["aaaaaaaaaaaaaaaa": "app", "bbbbbbbbbbbbbbbb": "libc.so.6"], search: search)
    }

    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    func format(_ v: Double) -> String { String(format: "%.2f", v) }
}
