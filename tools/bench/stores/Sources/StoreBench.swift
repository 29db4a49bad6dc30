import ArgumentParser
import FaultlineCore
import FaultlineHTTP
import Logging
import PostgresStorage
import SQLiteStorage
import StoreMigration

#if canImport(Glibc)
import Glibc
#endif
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
    @Option(
        help: "With sqlite:FOLDER: afterwards, migrate the folder into this (empty) postgres:// database and time it.")
    var migrateTo: String?
    @Option(
        help:
            "Sessions to store after processing (each an update that starts it, then one that ends it, 1 % crashed, in later commits); default: as many as reports."
    )
    var sessions: Int?
    @Option(
        help:
            "The PostgreSQL server's postmaster.pid, when it runs on this machine: the server's CPU time of each phase is read from /proc (per database core figures)."
    )
    var postgresPidFile: String?

    struct Engine: Sendable {
        var ingest: any IngestStore
        var projects: any ProjectStore
        var symbolication: any SymbolicationStore
        var size: @Sendable () async throws -> Int64
        var sqlite: SQLiteEngine? = nil
    }

    func engine() async throws -> Engine {
        if database.hasPrefix("sqlite:") {
            let folder = String(database.dropFirst("sqlite:".count))
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let db = try SQLiteEngine(path: folder + "/faultline.sqlite", codec: .none, identities: .hmacSHA256)
            return Engine(
                ingest: SQLiteIngestStore(database: db), projects: SQLiteProjectStore(database: db),
                symbolication: SQLiteSymbolicationStore(database: db),
                size: {
                    let sizes = ["", "-wal"].compactMap {
                        try? FileManager.default.attributesOfItem(atPath: folder + "/faultline.sqlite" + $0)[.size]
                    }
                    return sizes.reduce(Int64(0)) { $0 + ((($1 as? Int).map(Int64.init)) ?? ($1 as? Int64) ?? 0) }
                }, sqlite: db)
        }
        var logger = Logger(label: "store-bench")
        logger.logLevel = .warning
        let pg = try await PostgresEngine.open(url: database, identities: .hmacSHA256, logger: logger)
        return Engine(
            ingest: PostgresIngestStore(database: pg), projects: PostgresProjectStore(database: pg),
            symbolication: PostgresSymbolicationStore(database: pg), size: { try await pg.databaseSize() })
    }

    func run() async throws {
        let main = try await engine()
        let slug = "bench\(Int.random(in: 0..<1_000_000))"
        let project = try await main.projects.createProject(
            slug: ProjectSlug(slug)!,
            ingestKeyHash: SecretHash(
                hex: String(repeating: "a", count: 60) + String(format: "%04x", Int.random(in: 0..<65536))),
            uploadTokenHash: SecretHash(
                hex: String(repeating: "b", count: 60) + String(format: "%04x", Int.random(in: 0..<65536))),
            createdAt: Date(), rateLimitPerSecond: 1000)
        let serverCPU = postgresPidFile.flatMap(ServerCPU.init(pidFile:))
        var cpuMark = serverCPU?.seconds()
        /// The server's CPU seconds since the last call (nil without a server to watch).
        func serverSeconds() -> Double? {
            guard let now = serverCPU?.seconds(), let before = cpuMark else { return nil }
            cpuMark = now
            return now - before
        }
        let sizeBefore = try await main.size()
        let payload = StoredPayload(bytes: Array(repeating: 0x5a, count: 3_000), encoding: .gzip, inflatedSize: 12_000)
        let requests = (reports + perRequest - 1) / perRequest
        let clock = ContinuousClock()
        let start = clock.now
        var stored = 0
        var request = 0
        while request < requests {
            var writes: [IngestWrite] = []
            for _ in 0..<perCommit where request < requests {
                let reports = (0..<perRequest).map { index -> PreparedReport in
                    let n = request * perRequest + index
                    var report = Report(
                        eventID: EventID(String(format: "%032x", n + 1))!, kind: .crash, timestamp: Date())
                    report.app = AppInfo(version: "1.\(n % 4)")
                    report.userID = "user-\(n % 5_000)"
                    report.error = ErrorInfo(type: "SIGSEGV", message: "crash \(n % self.issues)")
                    return PreparedReport(report: report, range: (index * 150)..<(index * 150 + 150))
                }
                writes.append(
                    .reports(ReportBatch(project: project.id, receivedAt: Date(), payload: payload, reports: reports)))
                request += 1
            }
            for case .reports(let new, _) in try await main.ingest.commit(writes) { stored += new.count }
        }
        let ingestSeconds = seconds(clock.now - start)
        print(
            "ingest: \(stored) reports in \(format(ingestSeconds)) s = \(Int(Double(stored) / ingestSeconds)) reports/s "
                + "(\(perRequest) per request, \(perCommit) requests per commit)")
        printServerCPU(serverSeconds(), for: stored, of: "reports stored")

        var workers = [main]
        if nodes > 1 { for _ in 1..<nodes { workers.append(try await engine()) } }
        let (batch, issues) = (self.batch, self.issues)
        let (processed, processSeconds) = try await onEveryNode(workers) { _, worker in
            try await Self.process(worker, batch: batch, issues: issues)
        }
        print(
            "processing: \(processed) reports in \(format(processSeconds)) s = \(Int(Double(processed) / processSeconds)) reports/s "
                + "(\(Self.nodes(workers.count)), batches of \(batch): claim, result, modules, search entry, "
                + "grouping and rollups)")
        printServerCPU(serverSeconds(), for: processed, of: "reports processed")
        let grown = try await main.size() - sizeBefore
        print(
            "storage: \(grown / 1024) KiB for \(stored) reports = \(grown / Int64(max(1, stored))) bytes per report "
                + "(3,000-byte payloads shared by \(perRequest) reports)")

        // Sessions: every node stores its share, each session started in one commit and ended in a later one.
        let sessionCount = sessions ?? reports
        if sessionCount > 0 {
            let sizeBeforeSessions = try await main.size()
            let (perCommit, nodes) = (self.perCommit, workers.count)
            let (updates, sessionSeconds) = try await onEveryNode(workers) { index, worker in
                try await Self.storeSessions(
                    worker, project: project.id, ids: Array(stride(from: index, to: sessionCount, by: nodes)),
                    perCommit: perCommit)
            }
            print(
                "sessions: \(updates) updates of \(sessionCount) sessions in \(format(sessionSeconds)) s = "
                    + "\(Int(Double(updates) / sessionSeconds)) updates/s (\(Self.nodes(workers.count)), "
                    + "\(Self.sessionsPerRequest) per request, \(perCommit) requests per commit, health rollups included)"
            )
            printServerCPU(serverSeconds(), for: updates, of: "session updates")
            let grown = try await main.size() - sizeBeforeSessions
            print(
                "storage: \(grown / 1024) KiB for \(sessionCount) sessions = \(grown / Int64(max(1, sessionCount))) bytes per session "
                    + "(with its health rollups)")
        }
        if let migrateTo, let source = main.sqlite {
            try await migrate(source, to: migrateTo)
        }
    }

    /// `faultline migrate` of what the run stored, timed: every table copied, derived, counted and committed.
    func migrate(_ source: SQLiteEngine, to url: String) async throws {
        let folder = String(database.dropFirst("sqlite:".count))
        let blobs = folder + "/migrated-blobs"
        let clock = ContinuousClock()
        let start = clock.now
        var logger = Logger(label: "store-bench")
        logger.logLevel = .warning
        let target = try await PostgresEngine.open(url: url, identities: .hmacSHA256, logger: logger)
        let summary = try await StoreMigrator(
            source: source, sourceName: folder, debugFiles: folder + "/debug-files", target: target, blobs: blobs,
            hasher: NoDebugFiles()
        ).run(now: Date())
        let elapsed = seconds(clock.now - start)
        await target.close()
        print(summary.counts.rendered)
        print(
            "migrate: \(summary.rows) rows in \(format(elapsed)) s = \(Int(Double(summary.rows) / elapsed)) rows/s "
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

    static let sessionsPerRequest = 10

    /// Stores the sessions `ids` through `engine`: an update that starts each, then, once all have started, one that
    /// ends it (1 % crashed, as a crash-free rate of 99 %); 5,000 users, 4 releases. Returns the updates applied.
    static func storeSessions(_ engine: Engine, project: ProjectID, ids: [Int], perCommit: Int) async throws -> Int {
        let started = Date().addingTimeInterval(-600)
        var applied = 0
        for ending in [false, true] {
            var next = 0
            while next < ids.count {
                var writes: [IngestWrite] = []
                for _ in 0..<perCommit where next < ids.count {
                    let chunk = ids[next..<min(ids.count, next + sessionsPerRequest)]
                    next += chunk.count
                    let updates = chunk.map { n in
                        SessionUpdate(
                            sessionID: SessionID("session-\(n)")!, distinctID: "user-\(n % 5_000)",
                            release: "1.\(n % 4)",
                            started: started, status: !ending ? .ok : n % 100 == 0 ? .crashed : .exited,
                            duration: ending ? 60 : nil)
                    }
                    writes.append(.sessions(SessionBatch(project: project, receivedAt: Date(), updates: updates)))
                }
                for case .sessions(let done, _) in try await engine.ingest.commit(writes) { applied += done }
            }
        }
        return applied
    }

    /// The database server's CPU per item of a phase, and what one core of it would sustain at that cost.
    func printServerCPU(_ seconds: Double?, for items: Int, of what: String) {
        guard let seconds, items > 0 else { return }
        let perItem = seconds / Double(items)
        print(
            "  database server CPU: \(format(seconds)) s = \(Int(perItem * 1e6)) µs per item = "
                + "\(Int(1 / max(perItem, 1e-9))) \(what)/s per database core")
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
            threads: [
                [
                    SymbolicatedFrameSlot(
                        frames: [ResolvedFrame(function: site, file: "/src/app.swift", line: 42)],
                        buildID: "aaaaaaaaaaaaaaaa", status: "dwarf", offset: 16),
                    SymbolicatedFrameSlot(
                        frames: [], buildID: "bbbbbbbbbbbbbbbb", status: "missing_debug_file", offset: 32),
                ]
            ],
            missing: [MissingModule(buildID: "bbbbbbbbbbbbbbbb", module: "libc.so.6")])
        let grouping = GroupingInput(
            grouping: GroupingResult(
                fingerprint: Grouping.fingerprint(kind: .crash, source: .stack, components: [site]), source: .stack,
                components: [site],
                title: "crash in \(site)", culprit: site),
            tags: ["device": "Pixel \(pending.reportID % 7)", "os": "Android 14"])
        let search = SearchDocument(
            event: pending.raw.summary.eventID.rawValue, user: pending.raw.summary.userKey ?? "",
            release: pending.raw.summary.release ?? "",
            error: "SIGSEGV crash in \(site)", functions: "\(site)\nmain", keys: "")
        return SymbolicationOutcome(
            reportID: pending.reportID, result: result, grouping: grouping, filesSeen: pending.filesSeen,
            modules: ["aaaaaaaaaaaaaaaa": "app", "bbbbbbbbbbbbbbbb": "libc.so.6"], search: search)
    }

    /// Runs `work` on every node at once (its index and engine); the items they did in all, and the seconds it took.
    func onEveryNode(_ workers: [Engine], _ work: @escaping @Sendable (Int, Engine) async throws -> Int) async throws
        -> (items: Int, seconds: Double)
    {
        let start = ContinuousClock.now
        let items = try await withThrowingTaskGroup(of: Int.self) { group in
            for (index, worker) in workers.enumerated() { group.addTask { try await work(index, worker) } }
            return try await group.reduce(0, +)
        }
        return (items, seconds(ContinuousClock.now - start))
    }

    /// "1 node", "2 nodes".
    static func nodes(_ count: Int) -> String { "\(count) node\(count == 1 ? "" : "s")" }

    func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
    func format(_ v: Double) -> String { String(format: "%.2f", v) }
}

/// The CPU time a PostgreSQL server on this machine has used: its postmaster's own and that of its children, live
/// (read from each child's `/proc/PID/stat`) or gone (the postmaster's reaped-children times), so that backends which
/// ended between two readings still count.
struct ServerCPU {
    let postmaster: Int32
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    init?(pidFile: String) {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8),
            let line = text.split(separator: "\n").first, let pid = Int32(line.trimmingCharacters(in: .whitespaces))
        else { return nil }
        postmaster = pid
    }

    /// The fields of `/proc/PID/stat` after the command name: [0] = state, [1] = ppid, [11…14] = utime, stime,
    /// cutime, cstime (fields 14–17 of proc(5)).
    static func stat(_ pid: String) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: end)...].split(separator: " ")
    }

    func seconds() -> Double? {
        guard let own = Self.stat(String(postmaster)), own.count > 14 else { return nil }
        var ticks = own[11...14].compactMap { Double($0) }.reduce(0, +)
        let children = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for pid in children where pid.first?.isNumber == true {
            guard let fields = Self.stat(pid), fields.count > 12, fields[1] == Substring(String(postmaster)) else {
                continue
            }
            ticks += fields[11...12].compactMap { Double($0) }.reduce(0, +)
        }
        return ticks / ticksPerSecond
    }
}
