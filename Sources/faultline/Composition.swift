import FaultlineCore
import FaultlineHTTP
import Pipeline
import Storage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The composition root: opens the data folder and wires every service. The only place where concrete
/// types (SQLite stores, SHA-256, the system clock) are chosen.
struct Composition {
    let folder: String
    let database: FaultlineDatabase
    let clock: any WallClock = SystemClock()
    let metrics = MetricsRegistry()
    let projects: ProjectService

    /// Opens (creating) the data folder and its database.
    init(folder: String, durability: FaultlineDatabase.Durability = .full) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for sub in ["site", "debug-files"] {
            try FileManager.default.createDirectory(atPath: folder + "/" + sub, withIntermediateDirectories: true)
        }
        self.folder = folder
        database = try FaultlineDatabase(path: folder + "/faultline.sqlite", durability: durability)
        projects = ProjectService(
            store: SQLiteProjectStore(database: database), hasher: SHA256SecretHasher(), generator: SystemSecretGenerator(),
            clock: clock)
    }

    var telemetry: Telemetry { Telemetry(factory: metrics.factory) }

    /// The ingest service with group commit, rate limiting and the free-space floor.
    func ingestService(minFreeBytes: UInt64) -> IngestService {
        let disk = DiskSpace(path: folder)
        return IngestService(
            committer: GroupCommitter(store: SQLiteIngestStore(database: database), telemetry: telemetry),
            rateLimiter: RateLimiter(clock: clock),
            diskGuard: DiskGuard(floorBytes: minFreeBytes, clock: clock, probe: { disk.availableBytes() }),
            clock: clock, telemetry: telemetry)
    }

    var reader: SQLiteReportReader { SQLiteReportReader(database: database) }
}
