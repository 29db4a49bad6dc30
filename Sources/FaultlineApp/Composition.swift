import FaultlineCore
import FaultlineHTTP
import Formats
import Logging
import Pipeline
import Storage

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

    /// Debug-file uploads and lookups, stored under `debug-files/`.
    public func debugFileService(quotaBytes: UInt64) throws -> DebugFileService {
        DebugFileService(
            store: try SQLiteDebugFileStore(database: database, root: folder + "/debug-files"), inspector: ELFFileInspector(),
            clock: clock, quotaBytes: quotaBytes)
    }

    /// The HTTP dependencies for this data folder.
    public func dependencies(minFreeBytes: UInt64, freeSpace: (@Sendable () -> UInt64?)? = nil,
                             debugFileQuotaBytes: UInt64 = 10 << 30) throws
        -> AppDependencies<IngestService, SQLiteReportReader>
    {
        let reader = self.reader
        return AppDependencies(
            projects: projects, ingest: ingestService(minFreeBytes: minFreeBytes, freeSpace: freeSpace), reader: reader,
            debugFiles: try debugFileService(quotaBytes: debugFileQuotaBytes), metrics: metrics, telemetry: telemetry,
            health: { _ = try await reader.reports(matching: ReportQuery(project: nil, limit: 1)) })
    }

    /// The server configuration for this data folder (the rendered site is served from `site/`).
    public func serverConfiguration(host: String, port: Int) -> ServerConfiguration {
        ServerConfiguration(host: host, port: port, siteDirectory: folder + "/site")
    }
}
