import FaultlineCore
import FaultlineHTTP
import Formats
import Logging
import Pipeline
import Storage
import Symbolication

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The composition root: opens the data folder and wires every service. The only place where concrete
/// types (SQLite stores, SHA-256, the system clock) are chosen; `faultline` and the tests both use it.
public struct Composition: Sendable {
    public let folder: String
    public let database: FaultlineDatabase
    public let clock: any WallClock
    public let metrics = MetricsRegistry()
    public let projects: ProjectService

    /// Opens (creating) the data folder and its database.
    public init(folder: String, durability: FaultlineDatabase.Durability = .full, clock: any WallClock = SystemClock()) throws {
        for sub in ["", "/site", "/debug-files"] {
            try FileManager.default.createDirectory(atPath: folder + sub, withIntermediateDirectories: true)
        }
        self.folder = folder
        self.clock = clock
        database = try FaultlineDatabase(path: folder + "/faultline.sqlite", durability: durability)
        projects = ProjectService(
            store: SQLiteProjectStore(database: database), hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(),
            clock: clock)
    }

    public var telemetry: Telemetry { Telemetry(factory: metrics.factory) }

    public var reader: SQLiteReportReader { SQLiteReportReader(database: database) }

    /// The ingest service with group commit, rate limiting and the free-space floor.
    public func ingestService(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil) -> IngestService {
        let disk = DiskSpace(path: folder)
        return IngestService(
            committer: GroupCommitter(store: SQLiteIngestStore(database: database), telemetry: telemetry),
            rateLimiter: RateLimiter(clock: clock),
            diskGuard: DiskGuard(floorBytes: minFreeBytes, clock: clock, probe: freeSpace ?? { disk.availableBytes() }),
            clock: clock, telemetry: telemetry)
    }

    /// The symbolication queue and results.
    public var symbolicationStore: SQLiteSymbolicationStore { SQLiteSymbolicationStore(database: database) }

    /// Debug-file uploads and lookups, stored under `debug-files/`; storing one queues the reports that
    /// lacked it for symbolication again.
    public func debugFileService(quotaBytes: UInt64) throws -> DebugFileService {
        let symbolication = symbolicationStore
        return DebugFileService(
            store: try SQLiteDebugFileStore(database: database, root: folder + "/debug-files"), inspector: ELFFileInspector(),
            clock: clock, quotaBytes: quotaBytes,
            onStored: { project, buildID in _ = try? await symbolication.requeue(project: project, buildID: buildID) })
    }

    /// The background symbolicator: a module cache over the stored debug files, and the worker.
    public func symbolicationWorker(logger: Logger, idleDelay: Duration = .milliseconds(200)) throws -> SymbolicationWorker {
        let files = try SQLiteDebugFileStore(database: database, root: folder + "/debug-files")
        let cache = ShardedModuleCache(shards: 2) { buildID, kind, project in
            try? await files.path(of: buildID, kind: kind, project: project)
        }
        let limits = IngestLimits()
        return SymbolicationWorker(
            store: symbolicationStore, symbolicator: cache,
            reread: { raw in try NativeReports.reread(raw.payload, range: raw.range, limits: limits) }, clock: clock,
            logger: logger, idleDelay: idleDelay)
    }

    /// The HTTP dependencies for this data folder.
    public func dependencies(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil,
                             debugFileQuotaBytes: UInt64 = 10 << 30) throws
        -> AppDependencies<IngestService, SQLiteReportReader>
    {
        let reader = self.reader
        return AppDependencies(
            projects: projects, ingest: ingestService(minFreeBytes: minFreeBytes, freeSpace: freeSpace), reader: reader,
            debugFiles: try debugFileService(quotaBytes: debugFileQuotaBytes), symbolication: symbolicationStore, metrics: metrics,
            telemetry: telemetry,
            health: { _ = try await reader.reports(matching: ReportQuery(project: nil, limit: 1)) })
    }

    /// The server configuration for this data folder (the rendered site is served from `site/`).
    public func serverConfiguration(host: String, port: Int) -> ServerConfiguration {
        ServerConfiguration(host: host, port: port, siteDirectory: folder + "/site")
    }
}
