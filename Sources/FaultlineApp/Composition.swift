import FaultlineCore
import FaultlineHTTP
import Formats
import Logging
import Pipeline
import PostgresStorage
import Storage
import Symbolication
import Dashboard
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The composition root: opens the data folder (SQLite) or a PostgreSQL database with its shared folder, and wires
/// every service. The only place where concrete types (the engine's stores through `OpenEngine`, SHA-256, the system
/// clock) are chosen; `faultline` and the tests both use it.
public struct Composition: Sendable {
    /// Where the files live: the SQLite database and, on every engine, `debug-files/`, `chunks/` and the rendered
    /// `site/` (with PostgreSQL, the folder every node shares).
    public let folder: String
    /// The engine the stores run on.
    public let engine: OpenEngine
    let stores: EngineStores
    public let clock: any WallClock
    public let metrics = MetricsRegistry()
    public let projects: ProjectService
    /// Moves whenever a debug file is stored; the symbolicator's module cache forgets where it found files then.
    public let debugFileChanges = ChangeCounter()
    /// Which render wrote each site page last (the render cycle and pages rendered after a dashboard change).
    public let pageGenerations = PageGenerations()
    /// Which issue version each issue page of `site/` was rendered from: pages still current are not rendered
    /// again, and a page asked for after its issue changed is rendered before it is served. Pages rendered before
    /// this server started are known by the mark at their end.
    public let issuePages: IssuePageLedger
    /// Dashboard login sessions (`admin_sessions`) and the failed-login limit.
    public let adminSessions: AdminSessionService
    /// When ingest last wrote: the symbolication worker gives way while ingest is busy.
    public let ingestActivity = IngestActivity()
    /// With PostgreSQL, the lease under which one node at a time renders the dashboard into the shared folder (the
    /// other nodes serve it; `SharedDashboardService` holds it). Nil with SQLite: the one server renders.
    public let renderLease: PostgresLease?
    /// With PostgreSQL, this node's presence and the count of live nodes (each allows 1 ÷ N of a project's rate limit).
    public let nodes: PostgresNodes?
    /// The lease count the last render ran under (`renderScheduler`).
    let renderedUnderLease = LeaseMark()
    /// Threads for CPU-heavy work on uploaded files (checking a source bundle), off the cooperative pool that
    /// answers requests.
    public let heavyWork = BlockingWorkPool()
    /// Stored source bundles parsed once, for debuginfod's `/source/` and the event pages' source lines.
    public let sourceBundles: SourceBundleCache

    /// Opens (creating) the data folder and its SQLite database; the folder is made private to this user (0700, the
    /// database files 0600; see `DataFolderPermissions`).
    public init(folder: String, durability: FaultlineDatabase.Durability = .full, clock: any WallClock = SystemClock()) throws {
        try Self.prepare(folder: folder)
        let database = try FaultlineDatabase(
            path: folder + "/faultline.sqlite", durability: durability, codec: .zlib, identities: .hmacSHA256)
        try DataFolderPermissions.restrict(folder: folder)
        try self.init(folder: folder, engine: .sqlite(database), clock: clock)
        // Debug files stored before per-project blobs get theirs now (once; a no-op afterwards).
        try SQLiteDebugFileStore(database: database, root: folder + "/debug-files").adoptLegacyFiles(hasher: SHA256ContentHasher())
    }

    /// Opens the engine `choice` names, with its files in `folder`: SQLite in the folder, or a PostgreSQL database
    /// (migrated on open; several nodes may open one at once) whose files live in `folder`, shared by every node.
    public static func open(folder: String, choice: StorageChoice, clock: any WallClock = SystemClock(),
                            logger: Logger = Logger(label: "faultline.postgres")) async throws -> Composition {
        switch choice {
        case .sqlite(let durability):
            return try Composition(folder: folder, durability: durability, clock: clock)
        case .postgres(let url, let password, let claimLease):
            try prepare(folder: folder)
            let database = try await PostgresEngine.open(
                url: url, password: password, codec: .zlib, claimLease: claimLease, identities: .hmacSHA256, logger: logger)
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
        let site = SiteWriter(root: folder + "/site")
        issuePages = IssuePageLedger { site.tail(of: $0, bytes: IssuePageLedger.markBytes) }
        stores = try engine.stores(folder: folder)
        renderLease = engine.postgres.map { PostgresLease(database: $0, name: "faultline.render") }
        nodes = engine.postgres.map { PostgresNodes(database: $0) }
        projects = ProjectService(
            store: stores.projects, hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(), clock: clock)
        adminSessions = AdminSessionService(
            store: stores.adminSessions, projects: projects, hasher: SHA256SecretHasher(),
            generator: SystemSecretGenerator(), clock: clock)
    }

    /// Closes the database (SQLite: checkpoints and closes; PostgreSQL: stops the connection pool).
    public func close() async throws {
        try await engine.close()
    }

    /// A mark that differs once some node announced a change since it was read last (`PostgresEngine.changeMark`);
    /// with SQLite, where the one server renders every change it makes, always the same.
    public func changeMark() async throws -> String {
        try await engine.postgres?.changeMark() ?? ""
    }

    /// Tells the node that renders the dashboard that data changed (`PostgresEngine.announceChange`); nothing with
    /// SQLite.
    public func announceChange() async throws {
        try await engine.postgres?.announceChange()
    }

    /// The SQLite database when the engine is SQLite (maintenance commands and SQLite-only tests).
    public var sqliteDatabase: FaultlineDatabase? { engine.sqlite }

    /// Which engine runs, for messages: "SQLite (data/faultline.sqlite)" or "PostgreSQL (user@host:port/database)" (never
    /// the password).
    public var engineDescription: String {
        switch engine {
        case .sqlite: "SQLite (\(folder)/faultline.sqlite)"
        case .postgres(let database): "PostgreSQL (\(database.location.displayName))"
        }
    }

    /// Where webhooks may go: internal addresses only when `allowPrivate` (`--allow-private-webhooks`).
    public func webhookTargetPolicy(allowPrivate: Bool) -> WebhookTargetPolicy {
        WebhookTargetPolicy(resolver: SystemHostResolver(), allowPrivate: allowPrivate)
    }

    public var telemetry: Telemetry { Telemetry(factory: metrics.factory) }

    public var reader: AnyReportReader { stores.reader }

    /// The server's one storage-pressure state over this data folder's file system (and the debug-file folder's,
    /// which lives inside it): entered below `minFreeBytes` free or on the first disk-full error, left with a margin.
    public func storagePressure(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil, retryAfterSeconds: Int = 30,
                                logger: Logger? = nil) -> DiskGuard {
        let disk = DiskSpace(path: folder)
        let database = engine.sqlite
        return DiskGuard(
            floorBytes: minFreeBytes, clock: clock, logger: logger ?? Logger(label: "faultline.storage"), telemetry: telemetry,
            retryAfterSeconds: retryAfterSeconds, isDiskFull: { StorageError.isDiskFull($0) },
            // The WAL holds up to a checkpoint's worth of pages (4 MiB): give that space back at once and keep it
            // small while under pressure (a failure, e.g. while the database file cannot grow, changes nothing).
            onEnter: { try? await database?.enterStoragePressure() },
            onLeave: { try? await database?.leaveStoragePressure() },
            probe: freeSpace ?? { disk.availableBytes() })
    }

    /// The ingest service with group commit, rate limiting and the free-space floor (`storage`, or a new
    /// state from `minFreeBytes`).
    public func ingestService(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil, storage: DiskGuard? = nil,
                              onCommit: @escaping @Sendable () -> Void = {}) -> IngestService {
        IngestService(
            committer: GroupCommitter(
                store: stores.ingest, telemetry: telemetry, activity: ingestActivity, onCommit: onCommit),
            rateLimiter: RateLimiter(clock: clock, share: { [nodes] in 1 / Double(nodes?.count ?? 1) }),
            diskGuard: storage ?? storagePressure(minFreeBytes: minFreeBytes, freeSpace: freeSpace),
            clock: clock, telemetry: telemetry)
    }

    /// The symbolication queue and results.
    public var symbolicationStore: any SymbolicationStore { stores.symbolication }

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

    /// sentry-cli's chunk upload and assemble: chunks under `chunks/`, assembled files through `debugFiles`
    /// (the same verification and store as symupload's uploads), file checksums in `dif_uploads`.
    public func chunkUploadService(debugFiles: DebugFileService, limits: ChunkUploadLimits = ChunkUploadLimits()) throws
        -> ChunkUploadService
    {
        ChunkUploadService(
            chunks: try FileChunkStore(root: folder + "/chunks"), uploads: stores.difUploads,
            debugFiles: debugFiles, hasher: SHA1ChecksumHasher(), clock: clock, telemetry: telemetry, limits: limits)
    }

    /// Removes chunks nobody assembled, hourly.
    public func chunkSweeper(uploads: ChunkUploadService, logger: Logger, interval: Duration = .seconds(3600)) -> ChunkSweeper {
        ChunkSweeper(uploads: uploads, clock: clock, logger: logger, interval: interval)
    }

    /// The background symbolicator: a module cache over the stored debug files, and the worker.
    ///
    /// - Parameters:
    ///   - batchSize: reports per batch when the queue is short; `backlogBatchSize` while a backlog lasts.
    ///   - interpose: wraps the module cache before the worker gets it (tests pause lookups with it).
    public func symbolicationWorker(logger: Logger, idleDelay: Duration = .milliseconds(200), batchSize: Int = 64,
                                    backlogBatchSize: Int = 256,
                                    onChange: @escaping @Sendable () -> Void = {},
                                    interpose: (any AddressSymbolicating) -> any AddressSymbolicating = { $0 }) throws
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
                        inflated: bytes, format: raw.payload.format, range: raw.range, limits: limits, purpose: .processing)
                }),
            clock: clock, logger: logger, batchSize: batchSize, backlogBatchSize: backlogBatchSize, idleDelay: idleDelay, telemetry: telemetry, onChange: onChange,
            onFilesSeen: { changes.observe($0) })
    }

    /// Issues, health and alerts (reads).
    public var insights: any InsightsReader { stores.insights }

    /// The ingest store itself, for tools that write prepared batches without the service's checks (benchmarks).
    public var ingestStore: any IngestStore { stores.ingest }

    /// The bytes the database takes: the SQLite file and its WAL, or `pg_database_size`.
    public func databaseBytes() async throws -> Int64 {
        switch engine {
        case .sqlite:
            let path = folder + "/faultline.sqlite"
            return [path, path + "-wal"].reduce(Int64(0)) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int).flatMap { Int64($0) } ?? 0)
            }
        case .postgres(let database):
            return try await database.databaseSize()
        }
    }

    /// Closing, muting and notes of issues.
    public var issueStates: any IssueStateStore { stores.issueStates }

    /// Alert settings, alerts and the webhook outbox.
    public var alertStore: any AlertStore { stores.alerts }

    /// The HTTP dependencies for this data folder. `onChange` is told about every change the dashboard shows.
    public func dependencies(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil,
                             debugFileQuotaBytes: UInt64 = 10 << 30, renderer: SiteRenderer? = nil, storage: DiskGuard? = nil,
                             onChange: @escaping @Sendable () -> Void = {}) throws
        -> AppDependencies<IngestService, AnyReportReader>
    {
        let storage = storage ?? storagePressure(minFreeBytes: minFreeBytes, freeSpace: freeSpace)
        let reader = self.reader
        let renderer = renderer
        let debugFiles = try debugFileService(quotaBytes: debugFileQuotaBytes)
        var currentPage: (@Sendable (ProjectSlug, IssueID) async throws -> Void)?
        if let renderer {
            currentPage = { [self] slug, issue in _ = try await self.currentIssuePage(with: renderer, slug: slug, issue: issue) }
        }
        var dependencies = AppDependencies(
            projects: projects, ingest: ingestService(minFreeBytes: minFreeBytes, storage: storage, onCommit: onChange),
            reader: reader, debugFiles: debugFiles, symbolication: symbolicationStore,
            metrics: metrics, telemetry: telemetry,
            health: { _ = try await reader.reports(matching: ReportQuery(project: nil, limit: 1)) },
            insights: insights, clientReports: stores.clientReports,
            issues: IssueService(store: issueStates, clock: clock, onChange: onChange),
            alerts: alertStore,
            clock: clock,
            loginPage: { error, next in
                (try? renderer?.loginPage(error: error, next: next)) ?? LoginFallback.html(error: error, next: next)
            },
            refreshIssuePage: { [self] project, issue in
                guard let renderer else { return }
                try await self.renderIssuePage(with: renderer, project: project, issue: issue)
            },
            currentIssuePage: currentPage,
            adminSessions: adminSessions, webhookResolver: SystemHostResolver(),
            chunkUploads: try chunkUploadService(debugFiles: debugFiles), storage: storage,
            searchPages: renderer.map(searchPages))
        if let renderer {
            let insights = self.insights
            let clock = self.clock
            dependencies.issueListPage = { project, request, token in
                try await renderer.issueListPage(project: project, request: request, insights: insights, csrfToken: token, now: clock.now())
            }
        }
        return dependencies
    }

    /// The search index.
    public var searchStore: any SearchReader { stores.search }

    /// The server-rendered search and event pages over this data folder, rendered with `renderer`.
    public func searchPages(_ renderer: SiteRenderer) -> SearchPages {
        let search = searchStore
        let load = loadEvent
        let clock = clock
        let sourceContext = self.sourceContext
        return SearchPages(
            search: { project, query, text, page, error in
                var results: SearchResults?
                if let text {
                    results = try await search.search(
                        text, project: project.id, page: page, pageSize: SiteRenderer.searchPageSize, now: clock.now())
                }
                return try renderer.searchPage(project: project, query: query, results: results, page: page, error: error)
            },
            event: { project, id in
                guard let event = try await load(id, project.id) else { return nil }
                return try await renderer.eventPage(project: project, eventID: id.rawValue, event: event, sourceContext: sourceContext)
            },
            eventMissing: { project, id in try await renderer.eventPage(project: project, eventID: id, event: nil) },
            maxPage: SiteRenderer.searchMaxPage)
    }

    /// Loads the stored report `id` of `project` in full with its symbolication result and issue; nil when the
    /// project holds no such report.
    var loadEvent: @Sendable (EventID, ProjectID) async throws -> (report: Report, symbols: SymbolicatedReport?, issue: IssueID?)? {
        let reader = self.reader
        let symbolication = symbolicationStore
        let limits = IngestLimits()
        return { id, project in
            guard let raw = try await reader.rawReport(eventID: id, project: project), raw.summary.project == project else {
                return nil
            }
            let report = try NativeReports.reread(raw.payload, range: raw.range, limits: limits)
            let (state, symbols) = try await symbolication.result(reportID: raw.summary.cursor)
            // No stored result for a report that needed none: its own frames are the answer.
            return (report, symbols ?? SymbolicatedReport(state: state, threads: [], missing: []), raw.summary.issue)
        }
    }

    /// Source lines around frames: each project's own source bundle of a build-id (the same isolation as its
    /// symbols); nil when the debug-file store cannot be opened.
    var sourceContext: SourceBundleExcerpts? {
        let files = stores.debugFiles
        return SourceBundleExcerpts(bundles: sourceBundles) { buildID, project in try? await files.path(of: buildID, kind: .sources, project: project) }
    }

    /// What the dashboard reads, over this data folder.
    public var dashboardSources: DashboardSources {
        let symbolication = symbolicationStore
        let projects = self.projects
        let load = loadEvent
        return DashboardSources(
            projects: { try await projects.all() }, insights: insights,
            missingDebugFiles: { try await symbolication.missingDebugFiles(project: $0, release: nil) },
            event: { summary in
                try await load(summary.eventID, summary.project).map { ($0.report, $0.symbols) }
            }, sourceContext: sourceContext)
    }

    /// Renders the dashboard into `out` (default: this folder's `site/`); `since == nil` renders every page and
    /// removes pages of issues that no longer exist. Returns the pages written.
    public func render(with renderer: SiteRenderer, since: Date?, into out: String? = nil) async throws -> Int {
        try await renderCycle(with: renderer, since: since, into: out).pages
    }

    /// One render cycle: the summary pages first (`summariesWritten` is called then), then the issue pages changed
    /// since `since` whose pages are not current (``issuePages``; into `site/` only). The cycle stops before the next
    /// issue page once `stop` answers true (the caller decides why: newer data, a full disk) and says it is not
    /// complete. `since == nil` renders everything and, when complete, removes pages of issues that no longer exist
    /// (a full render cut short cannot tell them from pages it did not reach, so it removes nothing).
    public func renderCycle(
        with renderer: SiteRenderer, since: Date?, into out: String? = nil, summariesWritten: @escaping @Sendable () -> Void = {},
        stop: @escaping @Sendable () -> Bool = { false }
    ) async throws -> SiteRenderer.CycleResult {
        let writer = SiteWriter(root: out ?? folder + "/site")
        let written = WrittenPages()
        let generation = pageGenerations.start()
        let generations = pageGenerations
        let cycle = SiteRenderer.Cycle(
            ledger: out == nil ? issuePages : nil, summariesWritten: summariesWritten, stopIssuePages: stop,
            issuePageKept: { written.insert($0) })
        let result = try await renderer.render(sources: dashboardSources, now: clock.now(), since: since, cycle: cycle) { path, html in
            try generations.write(path, generation: generation) { try writer.write(path, html) }
            written.insert(path)
        }
        if since == nil && result.complete { writer.removeStale(kept: written.paths) }
        return result
    }

    /// Renders one issue's page into this folder's `site/` now (after a change from the dashboard). A render
    /// cycle that started earlier and finishes later does not overwrite it (`PageGenerations`).
    public func renderIssuePage(with renderer: SiteRenderer, project: Project, issue: IssueID) async throws {
        let writer = SiteWriter(root: folder + "/site")
        let generation = pageGenerations.start()
        let generations = pageGenerations
        try await renderer.renderIssuePage(issue, of: project, sources: dashboardSources, now: clock.now(), ledger: issuePages) { path, html in
            try generations.write(path, generation: generation) { try writer.write(path, html) }
        }
    }

    /// Makes the page of issue `issue` of project `slug` in `site/` current before it is served: rendered now
    /// when the issue changed since the page was rendered, left alone when current, nothing for an unknown project
    /// or issue (`SiteRenderer.refreshIssuePage`).
    public func currentIssuePage(with renderer: SiteRenderer, slug: ProjectSlug, issue: IssueID) async throws
        -> SiteRenderer.IssuePageRefresh
    {
        guard let project = try await projects.project(slug: slug) else { return .absent }
        let root = folder + "/site"
        let writer = SiteWriter(root: root)
        let path = SitePaths.issue(project.slug, issue)
        let exists = FileManager.default.fileExists(atPath: root + "/" + path)
        let generation = pageGenerations.start()
        let generations = pageGenerations
        return try await renderer.refreshIssuePage(
            issue, of: project, sources: dashboardSources, now: clock.now(), ledger: issuePages, pageExists: exists
        ) { path, html in
            try generations.write(path, generation: generation) { try writer.write(path, html) }
        }
    }

    /// The dashboard renderer over the templates in `webDirectory`, stamped with ``programBuild``.
    public func siteRenderer(webDirectory: String) throws -> SiteRenderer {
        try SiteRenderer(webDirectory: webDirectory, build: Self.programBuild)
    }

    /// What names this program in the issue pages' marks (`SiteRenderer.stamp`): its GNU build-id, the same for the
    /// same binary on every node sharing a site folder and new with every build; the file's identity
    /// (`SiteRenderer.programIdentity`) when it has none.
    static let programBuild: String = {
        if let id = try? ELFReader.inspect(FileByteSource(path: "/proc/self/exe")).buildID { return "build-id " + id.rawValue }
        return SiteRenderer.programIdentity
    }()

    /// The render scheduler: renders the whole site at start, then what changed, `debounce` after changes.
    public func renderScheduler(renderer: SiteRenderer, logger: Logger, debounce: Duration = .milliseconds(250)) -> RenderScheduler {
        let lease = renderLease
        return RenderScheduler(
            render: { since, stop in
                var since = since
                if let lease {
                    // Several nodes: only the holder renders (into the folder they share); the others announce their
                    // changes to it (not at their start, which changed nothing: the first, full, render).
                    guard lease.isHeld else {
                        if since != nil { try await self.announceChange() }
                        return RenderScheduler.Outcome(pages: 0, complete: true)
                    }
                    // The first render under a newly taken lease renders everything: another node rendered in between
                    // (and this node's ledger of issue pages knows nothing of what it wrote).
                    let taken = lease.timesTaken
                    if self.renderedUnderLease.value.exchange(taken, ordering: .acquiringAndReleasing) != taken { since = nil }
                }
                let result = try await self.renderCycle(with: renderer, since: since, stop: stop)
                return RenderScheduler.Outcome(pages: result.pages, complete: result.complete)
            }, clock: clock, debounce: debounce, logger: logger, telemetry: telemetry)
    }

    /// The alert service (velocity and crash-free target rules; dispatch to the outbox).
    public func alertService(logger: Logger, interval: Duration = .seconds(30), publicURL: @escaping @Sendable () -> String?,
                             onChange: @escaping @Sendable () -> Void = {}) -> AlertService {
        AlertService(
            store: alertStore, projects: stores.projects, clock: clock, logger: logger, telemetry: telemetry,
            interval: interval, publicURL: publicURL, onChange: onChange)
    }

    /// The writer of `storage_full` / `storage_ok` alerts for every project with a webhook, from `storage`'s changes.
    public func storageAlertService(storage: DiskGuard, alerts: AlertService, logger: Logger) -> StorageAlertService {
        StorageAlertService(storage: storage, alerts: alerts, clock: clock, logger: logger)
    }

    /// The webhook outbox dispatcher; `allowPrivateTargets` lets deliveries reach internal addresses.
    public func webhookDispatcher(sender: any WebhookSending, logger: Logger, allowPrivateTargets: Bool = false,
                                  baseBackoff: TimeInterval = 5, idleDelay: Duration = .seconds(1)) -> WebhookDispatcher {
        WebhookDispatcher(
            store: alertStore, sender: sender, targets: webhookTargetPolicy(allowPrivate: allowPrivateTargets), clock: clock, logger: logger, telemetry: telemetry, baseBackoff: baseBackoff,
            idleDelay: idleDelay)
    }

    /// Retention: raw reports and sessions older than `days` are pruned.
    public func retentionService(days: Int, logger: Logger, onChange: @escaping @Sendable () -> Void = {}) -> RetentionService {
        RetentionService(
            store: stores.retention, clock: clock, days: days, logger: logger, telemetry: telemetry,
            onChange: onChange)
    }

    /// The server configuration for this data folder (the rendered site is served from `site/`).
    public func serverConfiguration(host: String, port: Int) -> ServerConfiguration {
        ServerConfiguration(host: host, port: port, siteDirectory: folder + "/site")
    }

    /// Where the dashboard templates are: `FAULTLINE_WEB`, else `web/` beside the working directory or up from the
    /// executable (`.build/<config>/faultline` → the checkout's `web/`). nil when none is found.
    public static func locateWebDirectory(executable: String = CommandLine.arguments.first ?? "") -> String? {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["FAULTLINE_WEB"], !env.isEmpty { candidates.append(env) }
        candidates.append(FileManager.default.currentDirectoryPath + "/web")
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir.appendingPathComponent("web").path)
            dir = dir.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/templates") }
    }
}

/// A counter that only moves forward, shared by the debug-file service (which advances it) and the module
/// cache (which reads it).
public final class ChangeCounter: Sendable {
    private let counter = Atomic<UInt64>(0)
    private let observed = Atomic<Int64>(0)
    public init() {}
    /// The current value: changes whenever `advance` is called or `observe` sees a higher sequence.
    public var value: UInt64 {
        counter.load(ordering: .acquiring) &+ UInt64(clamping: observed.load(ordering: .acquiring))
    }
    /// Moves the counter on.
    public func advance() { _ = counter.wrappingAdd(1, ordering: .releasing) }
    /// Takes in a change sequence read from the database (kept when higher than the last one seen).
    public func observe(_ sequence: Int64) { _ = observed.max(sequence, ordering: .acquiringAndReleasing) }
}

/// The set of pages one render wrote (collected from the writer callback).
/// Which render last wrote each page of the site, so that a page is never overwritten by a render that started
/// earlier (and so may have read older data): a cycle that began before a dashboard change and finishes after
/// the page rendered for that change must not put the old state back.
///
/// Each render takes a generation when it starts, before it reads anything; a page is written only when its
/// generation is at least the one that wrote it last. The check and the write happen under one lock (pages are
/// small files written by at most two renders at once).
public final class PageGenerations: Sendable {
    private let state = Mutex<(next: UInt64, written: [String: UInt64])>((1, [:]))
    public init() {}

    /// A new render's generation.
    public func start() -> UInt64 {
        state.withLock { state in
            defer { state.next &+= 1 }
            return state.next
        }
    }

    /// Runs `write` for `path` unless a later render already wrote it.
    public func write(_ path: String, generation: UInt64, _ write: () throws -> Void) throws {
        try state.withLock { state in
            if let last = state.written[path], last > generation { return }
            try write()
            state.written[path] = generation
        }
    }
}

/// The lease count a render last ran under.
final class LeaseMark: Sendable {
    let value = Atomic<UInt64>(0)
}

final class WrittenPages: Sendable {
    private let written = Mutex<Set<String>>([])
    func insert(_ path: String) {
        _ = written.withLock { $0.insert(path) }
    }
    var paths: Set<String> { written.withLock { $0 } }
}

/// A plain login form, used when the dashboard templates are not available.
enum LoginFallback {
    static func html(error: String?, next: String) -> String {
        func esc(_ s: String) -> String {
            s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        return """
            <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <title>Log in · Faultline</title></head><body><main><h1>Log in to Faultline</h1>
            \(error.map { "<p role=\"alert\">\(esc($0))</p>" } ?? "")
            <form method="post" action="/login"><label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required>
            <input type="hidden" name="next" value="\(esc(next))"><button type="submit">Log in</button></form></main></body></html>
            """
    }
}
