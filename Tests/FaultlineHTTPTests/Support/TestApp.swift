import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import SQLiteStorage

/// A real application on a fresh data folder (real SQLite file), assembled as `faultline serve` assembles it
/// (`ServerAssembly`, without a dashboard) and driven through the router.
final class TestApp: Sendable {
    let folder: String
    let root: Composition
    let credentials: ProjectCredentials
    let adminToken: String
    let settings: ServerAssembly.Settings
    let configuration: ServerConfiguration

    init(
        limits: IngestLimits = IngestLimits(), rateLimit: Double? = nil, minFreeBytes: UInt64 = 0,
        freeSpace: (@Sendable () -> UInt64?)? = nil, debugFileQuota: UInt64 = 10 << 30, publicDebuginfod: Bool = false,
        clock: any WallClock = SystemClock(), publicURL: String? = nil
    ) async throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("faultline-http-\(UUID().uuidString)").path
        root = try Composition(folder: folder, clock: clock)
        credentials = try await root.projects.create(slug: ProjectSlug("app")!, rateLimitPerSecond: rateLimit)
        adminToken = try await root.projects.rotateAdminToken()
        settings = ServerAssembly.Settings(
            host: "127.0.0.1", port: 0, limits: limits, minFreeBytes: minFreeBytes, freeSpace: freeSpace,
            debugFileQuotaBytes: debugFileQuota, publicDebuginfod: publicDebuginfod, publicURL: publicURL)
        configuration = ServerAssembly.configuration(settings, siteDirectory: folder + "/site")
    }

    deinit { try? FileManager.default.removeItem(atPath: folder) }

    /// The SQLite reader of this app's data folder (counts, query plans and sessions, which only it answers).
    var sqliteReader: SQLiteReportReader { SQLiteReportReader(database: root.sqliteDatabase!) }

    /// Runs `body` against the router of a server assembled anew (no sockets; its background services do not run).
    func test<Value: Sendable>(_ body: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let server = try ServerAssembly(settings: settings, data: root, logger: Logger(label: "test"))
        let app = buildApplication(
            configuration: server.configuration, dependencies: server.dependencies, logger: Logger(label: "test"))
        return try await app.test(.router, body)
    }

    var ingestHeaders: HTTPFields {
        [.authorization: "Bearer \(credentials.ingestKey)", .contentType: "application/json"]
    }
    var gzipHeaders: HTTPFields {
        var h = ingestHeaders
        h[.contentEncoding] = "gzip"
        return h
    }
    var readHeaders: HTTPFields { [.authorization: "Bearer \(credentials.uploadToken)"] }
    var adminHeaders: HTTPFields { [.authorization: "Bearer \(adminToken)"] }
}

/// A clock that stands still (rate limits and windows then do not depend on how busy the machine is).
struct FrozenClock: WallClock {
    let date: Date
    func now() -> Date { date }
}

extension TestResponse {
    /// The body as a JSON object.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.readableBytesView))) as? [String: Any] ?? [:]
    }
}
