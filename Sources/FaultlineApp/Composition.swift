import Dashboard
import DataFolder
import FaultlineCore
import FaultlineHTTP
import Formats
import Logging
import Pipeline
import PostgresStorage
import SQLiteStorage
import Symbolication
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The opened data: the data folder (SQLite) or a PostgreSQL database with its shared folder, its stores, and the
/// services every command uses over them. The only place where the engine's concrete stores (through `OpenEngine`),
/// SHA-256 and the system clock are chosen. The admin commands use it directly; `ServerAssembly` builds the server on
/// it; the dashboard's rendering is in `Composition+Rendering.swift`.
public struct Composition: Sendable {
    /// Where the files live: the SQLite database and, on every engine, `debug-files/`, `chunks/` and the rendered
    /// `site/` (with PostgreSQL, the folder every node shares).
    public let folder: String
    /// The engine the stores run on.
    let engine: OpenEngine
    let stores: EngineStores
    public let clock: any WallClock
    let metrics = MetricsRegistry()
    public let projects: ProjectService
    /// Moves whenever a debug file is stored; the symbolicator's module cache forgets where it found files then.
    let debugFileChanges = ChangeCounter()
    /// The rendered dashboard, `site/`: every rendering write goes through it.
    public let site: SitePublisher
    /// Which issue version each issue page of `site/` was rendered from: pages still current are not rendered
    /// again, and a page asked for after its issue changed is rendered before it is served. Pages rendered before
    /// this server started are known by the mark at their end.
    public let issuePages: IssuePageLedger
    /// Dashboard login sessions (`admin_sessions`) and the failed-login limit.
    let adminSessions: AdminSessionService
    /// People, their roles, invites and password logins (issue #37).
    public let people: PeopleService
    /// People's own accounts: personal API tokens, password changes, the second factor.
    public let accounts: AccountService
    /// When ingest last wrote: the symbolication worker gives way while ingest is busy.
    let ingestActivity = IngestActivity()
    /// With PostgreSQL, this node's presence and the count of live nodes (each allows 1 ÷ N of a project's rate limit).
    let nodes: PostgresNodes?
    /// Threads for CPU-heavy work on uploaded files (checking a source bundle), off the cooperative pool that
    /// answers requests.
    let heavyWork = BlockingWorkPool()
    /// Stored source bundles parsed once, for debuginfod's `/source/` and the event pages' source lines.
    public let sourceBundles: SourceBundleCache

    /// Opens (creating) the data folder and its SQLite database; the folder is made private to this user (0700, the
    /// database files 0600; see `DataFolderPermissions`).
    public init(folder: String, durability: SQLiteEngine.Durability = .full, clock: any WallClock = SystemClock())
        throws
    {
        try Self.prepare(folder: folder)
        let database = try SQLiteEngine(
            path: folder + "/faultline.sqlite", durability: durability, codec: .zlib, identities: .hmacSHA256)
        try DataFolderPermissions.restrict(folder: folder)
        try self.init(folder: folder, engine: .sqlite(database), clock: clock)
        // Debug files stored before per-project blobs get theirs now (once; a no-op afterwards).
        try SQLiteDebugFileStore(database: database, root: folder + "/debug-files").adoptLegacyFiles(
            hasher: SHA256ContentHasher())
    }

    /// Opens the engine `choice` names, with its files in `folder`: SQLite in the folder, or a PostgreSQL database
    /// (migrated on open; several nodes may open one at once) whose files live in `folder`, shared by every node.
    public static func open(
        folder: String, choice: EngineChoice, clock: any WallClock = SystemClock(),
        logger: Logger = Logger(label: "faultline.postgres")
    ) async throws -> Composition {
        switch choice {
        case .sqlite(let durability):
            return try Composition(folder: folder, durability: durability, clock: clock)
        case .postgres(let url, let password, let claimLease, let requestDeadline):
            try prepare(folder: folder)
            let database = try await PostgresEngine.open(
                url: url, password: password, codec: .zlib, claimLease: claimLease, requestDeadline: requestDeadline,
                identities: .hmacSHA256, logger: logger)
            do {
                return try Composition(folder: folder, engine: .postgres(database), clock: clock)
            } catch {
                await database.close()
                throw error
            }
        }
    }

    /// The folder and its subfolders, private to this user (before a database in it is opened: SQLite gives its WAL
    /// files the database file's mode).
    static func prepare(folder: String) throws {
        for sub in ["", "/site", "/debug-files"] {
            try FileManager.default.createDirectory(
                atPath: folder + sub, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try DataFolderPermissions.restrict(folder: folder)
    }

    init(folder: String, engine: OpenEngine, clock: any WallClock) throws {
        self.folder = folder
        self.clock = clock
        self.engine = engine
        sourceBundles = SourceBundleCache(pool: heavyWork)
        let site = SitePublisher(root: folder + "/site")
        self.site = site
        issuePages = IssuePageLedger { site.tail(of: $0, bytes: IssuePageLedger.markBytes) }
        stores = try engine.stores(folder: folder)
        nodes = engine.postgres.map { PostgresNodes(database: $0) }
        projects = ProjectService(
            store: stores.projects, hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(), clock: clock,
            lookupDeadline: engine.requestDeadline, audit: stores.audit)
        adminSessions = AdminSessionService(
            store: stores.adminSessions, projects: projects, hasher: SHA256SecretHasher(),
            generator: SystemSecretGenerator(), clock: clock)
        people = PeopleService(
            store: stores.people, sessions: adminSessions, hasher: SHA256SecretHasher(),
            generator: SystemSecretGenerator(), deriver: ScryptPasswordDeriver(), clock: clock, audit: stores.audit)
        accounts = AccountService(
            store: stores.people, hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(), clock: clock,
            deriver: ScryptPasswordDeriver(), hmac: CryptoHMACSHA1(), audit: stores.audit)
    }

    /// Closes the database (SQLite: checkpoints and closes; PostgreSQL: stops the connection pool).
    public func close() async throws {
        try await engine.close()
    }

    /// A mark that differs once some node announced a change since it was read last (`PostgresEngine.changeMark`);
    /// with SQLite, where the one server renders every change it makes, always the same.
    func changeMark() async throws -> String {
        try await engine.postgres?.changeMark() ?? ""
    }

    /// Tells the node that renders the dashboard that data changed (`PostgresEngine.announceChange`); nothing with
    /// SQLite.
    public func announceChange() async throws {
        try await engine.postgres?.announceChange()
    }

    /// The SQLite database when the engine is SQLite (maintenance commands and SQLite-only tests).
    public var sqliteDatabase: SQLiteEngine? { engine.sqlite }

    /// Which engine runs, for messages: "SQLite (data/faultline.sqlite)" or "PostgreSQL (user@host:port/database)" (never
    /// the password).
    public var engineDescription: String {
        switch engine {
        case .sqlite: "SQLite (\(folder)/faultline.sqlite)"
        case .postgres(let database): "PostgreSQL (\(database.location.displayName))"
        }
    }

    /// The bytes the database takes: the SQLite file and its WAL, or `pg_database_size`.
    public func databaseBytes() async throws -> Int64 {
        switch engine {
        case .sqlite:
            let path = folder + "/faultline.sqlite"
            return [path, path + "-wal"].reduce(Int64(0)) { total, file in
                total
                    + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int).flatMap { Int64($0) }
                        ?? 0)
            }
        case .postgres(let database):
            return try await database.databaseSize()
        }
    }

    var telemetry: Telemetry { Telemetry(factory: metrics.factory) }

    /// Stored reports, as one concrete type (the HTTP dependencies are generic over their reader).
    public var reader: AnyReportReader { AnyReportReader(stores.reports) }
    /// The symbolication queue and results.
    public var symbolicationStore: any SymbolicationStore { stores.symbolication }
    /// Issues, health and alerts (reads).
    public var insights: any InsightsReader { stores.insights }
    /// Closing, muting and notes of issues.
    public var issueStates: any IssueStateStore { stores.insights }
    /// Alert settings, alerts and the webhook outbox.
    public var alertStore: any AlertStore { stores.alerts }
    /// Who wants which alerts by mail, and the digest outbox (docs/email.md).
    public var alertMailStore: any AlertMailStore { stores.alerts }
    /// People's alert mail choices, checked and audited (the account page and `faultline alerts mail`).
    public var alertMail: AlertMailPreferences {
        AlertMailPreferences(store: stores.alerts, audit: stores.audit, clock: clock)
    }
    /// The search index.
    public var searchStore: any SearchReader { stores.search }
    /// The ingest store itself, for tools that write prepared batches without the service's checks (benchmarks).
    public var ingestStore: any IngestStore { stores.ingest }

    /// Where webhooks may go: internal addresses only when `allowPrivate` (`--allow-private-webhooks`).
    public func webhookTargetPolicy(allowPrivate: Bool) -> WebhookTargetPolicy {
        WebhookTargetPolicy(resolver: SystemHostResolver(), allowPrivate: allowPrivate)
    }

    /// A storage-pressure state over this data folder's file system (and the debug-file folder's, which lives inside
    /// it): entered below `minFreeBytes` free or on the first disk-full error, left with a margin. A server has one
    /// (`ServerAssembly`).
    public func storagePressure(
        minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil, retryAfterSeconds: Int = 30
    ) -> DiskGuard {
        let disk = DiskSpace(path: folder)
        let database = engine.sqlite
        return DiskGuard(
            floorBytes: minFreeBytes, clock: clock, logger: Logger(label: "faultline.storage"),
            telemetry: telemetry,
            retryAfterSeconds: retryAfterSeconds, isDiskFull: { StorageError.isDiskFull($0) },
            // The WAL holds up to a checkpoint's worth of pages (4 MiB): give that space back at once and keep it
            // small while under pressure (a failure, e.g. while the database file cannot grow, changes nothing).
            onEnter: { try? await database?.enterStoragePressure() },
            onLeave: { try? await database?.leaveStoragePressure() },
            probe: freeSpace ?? { disk.availableBytes() })
    }

    /// The ingest service with group commit, rate limiting (each node's share of a project's limit) and the
    /// free-space floor of `storage`.
    public func ingestService(
        storage: DiskGuard, spikeGuard: SpikeGuard? = nil, onCommit: @escaping @Sendable () -> Void = {}
    ) -> IngestService {
        IngestService(
            committer: GroupCommitter(
                store: stores.ingest, telemetry: telemetry, activity: ingestActivity,
                deadline: engine.requestDeadline, onCommit: onCommit),
            rateLimiter: RateLimiter(clock: clock, share: nodeShare),
            diskGuard: storage, clock: clock, telemetry: telemetry, spikeGuard: spikeGuard ?? self.spikeGuard())
    }

    /// The event quotas' guard (`SpikeGuard`) with the server's `ceiling`: each node enforces its share (1 ÷ the
    /// live nodes) of every quota, counting in memory. A server has one, shared by ingest and `QuotaFlushService`.
    public func spikeGuard(ceiling: EventQuotas = EventQuotas()) -> SpikeGuard {
        SpikeGuard(clock: clock, ceiling: ceiling, share: nodeShare)
    }

    /// This node's part of every per-project limit and quota: 1 ÷ the live nodes sharing the database (1 alone).
    var nodeShare: @Sendable () -> Double {
        { [nodes] in 1 / Double(nodes?.count ?? 1) }
    }

    /// Debug-file uploads and lookups, stored under `debug-files/`; storing one queues, in the same transaction,
    /// the reports it outranks (made with nothing or with a stripped executable), and replacing one (newest wins)
    /// also the reports that used the old file (`SQLiteDebugFileStore.store`).
    public func debugFileService(quotaBytes: UInt64) throws -> DebugFileService {
        let changes = debugFileChanges
        let (pool, bundles) = (heavyWork, sourceBundles)
        return DebugFileService(
            store: stores.debugFiles, inspector: DebugFileFormatInspector(),
            hasher: SHA256ContentHasher(), clock: clock, quotaBytes: quotaBytes,
            offload: { try await pool.run($0) },
            sourceReader: { path, bundlePath in try await bundles.file(atPath: path, inBundleAt: bundlePath) },
            onStored: { _, _, _ in
                // The store queued the reports already; the cache forgets where files were (the worker also moves it
                // to the change sequence of each batch it reads, which is what makes the hand-over exact).
                changes.advance()
            })
    }

    /// The background symbolicator: a module cache over the stored debug files, and the worker.
    ///
    /// - Parameters:
    ///   - batchSize: reports per batch when the queue is short; `backlogBatchSize` while a backlog lasts.
    ///   - interpose: wraps the module cache before the worker gets it (tests pause lookups with it).
    ///   - storage: the storage-pressure state the worker pauses under (nil: never).
    ///   - yieldToIngest: whether the worker gives way while ingest is busy (the server's worker does).
    public func symbolicationWorker(
        logger: Logger, idleDelay: Duration = .milliseconds(200), batchSize: Int = 64,
        backlogBatchSize: Int = 256,
        onChange: @escaping @Sendable () -> Void = {},
        interpose: (any AddressSymbolicating) -> any AddressSymbolicating = { $0 },
        storage: DiskGuard? = nil, yieldToIngest: Bool = false
    ) throws
        -> SymbolicationWorker
    {
        let files = stores.debugFiles
        let changes = debugFileChanges
        let cache = ShardedModuleCache(shards: 2, generation: { changes.value }) { buildID, kind, project in
            try? await files.path(of: buildID, kind: kind, project: project)
        }
        let limits = IngestLimits()
        return SymbolicationWorker(
            store: symbolicationStore, symbolicator: interpose(cache),
            reading: StoredReportReading(
                inflate: { try NativeReports.inflate($0) },
                read: { bytes, raw in
                    try NativeReports.reread(
                        inflated: bytes, format: raw.payload.format, range: raw.range, limits: limits,
                        purpose: .processing)
                }),
            clock: clock, logger: logger, batchSize: batchSize, backlogBatchSize: backlogBatchSize,
            idleDelay: idleDelay, telemetry: telemetry, onChange: onChange,
            onFilesSeen: { changes.observe($0) }, storage: storage,
            ingestActivity: yieldToIngest ? ingestActivity : nil,
            stackWalker: MinidumpStackWalker(
                dumps: stores.ingest, results: symbolicationStore, files: files, limits: limits, logger: logger)
        )
    }

    /// Retention: raw reports and sessions older than `days` are pruned; `storage` runs a pass on each entry into
    /// storage pressure (nil: every hour only).
    public func retentionService(
        days: Int, samples: RetentionSamplePolicy = RetentionSamplePolicy(), logger: Logger,
        onChange: @escaping @Sendable () -> Void = {}, storage: DiskGuard? = nil
    ) -> RetentionService {
        RetentionService(
            store: stores.retention, clock: clock, days: days, samples: samples, logger: logger, telemetry: telemetry,
            onChange: onChange, storage: storage)
    }

    /// Loads the stored report `id` of `project` in full with its symbolication result and issue (a minidump
    /// report's threads as the worker walked them: `SymbolicationStore.readBack`); nil when the project holds no such
    /// report.
    var loadEvent:
        @Sendable (EventID, ProjectID) async throws -> (report: Report, symbols: SymbolicatedReport?, issue: IssueID?)?
    {
        let reader = self.reader
        let symbolication = symbolicationStore
        let limits = IngestLimits()
        return { id, project in
            guard let raw = try await reader.rawReport(eventID: id, project: project), raw.summary.project == project
            else {
                return nil
            }
            let (report, symbols) = try await symbolication.readBack(
                NativeReports.reread(raw.payload, range: raw.range, limits: limits), reportID: raw.summary.cursor,
                limits: limits)
            return (report, symbols, raw.summary.issue)
        }
    }

    /// Source lines around frames: each project's own source bundle of a build-id (the same isolation as its
    /// symbols); nil when the debug-file store cannot be opened.
    var sourceContext: SourceBundleExcerpts? {
        let files = stores.debugFiles
        return SourceBundleExcerpts(bundles: sourceBundles) { buildID, project in
            try? await files.path(of: buildID, kind: .sources, project: project)
        }
    }
}

/// A counter that only moves forward, shared by the debug-file service (which advances it) and the module
/// cache (which reads it).
final class ChangeCounter: Sendable {
    private let counter = Atomic<UInt64>(0)
    private let observed = Atomic<Int64>(0)
    init() {}
    /// The current value: changes whenever `advance` is called or `observe` sees a higher sequence.
    var value: UInt64 {
        counter.load(ordering: .acquiring) &+ UInt64(clamping: observed.load(ordering: .acquiring))
    }
    /// Moves the counter on.
    func advance() { _ = counter.wrappingAdd(1, ordering: .releasing) }
    /// Takes in a change sequence read from the database (kept when higher than the last one seen).
    func observe(_ sequence: Int64) { _ = observed.max(sequence, ordering: .acquiringAndReleasing) }
}
