import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Logging
import Pipeline
import Dashboard
import ServiceLifecycle
import Storage
import Synchronization

/// `faultline serve`: runs the server until SIGTERM or SIGINT, then shuts down gracefully (stops
/// accepting, finishes requests in flight, checkpoints and closes the database).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Faultline server.")

    @OptionGroup var dataOptions: DataOptions

    @Option(help: "Address to listen on (env FAULTLINE_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (env FAULTLINE_PORT; default 8080).")
    var port: Int?

    @Option(help: "Refuse writes (503) when the data folder's disk has fewer free MiB (env FAULTLINE_MIN_FREE_MB; default 256; 0 disables).")
    var minFreeMb: Int?

    @Option(help: "full: fsync every commit (survives power loss); normal: survives a killed process (env FAULTLINE_DURABILITY).")
    var durability: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (env FAULTLINE_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(help: "MiB of debug files each project may store (env FAULTLINE_DEBUG_FILE_QUOTA_MB; default 10240).")
    var debugFileQuotaMb: Int?

    @Option(help: "Largest debug file accepted, in MiB (env FAULTLINE_MAX_DEBUG_FILE_MB; default 4096).")
    var maxDebugFileMb: Int?

    @Flag(help: "Serve /buildid/… (debuginfod) without a token (env FAULTLINE_PUBLIC_DEBUGINFOD=1).")
    var publicDebuginfod = false

    @Flag(help: "Serve the dashboard without the admin token (env FAULTLINE_PUBLIC_DASHBOARD=1). Only for a server nobody else reaches.")
    var publicDashboard = false

    @Flag(help: "Let webhooks go to loopback, private and link-local addresses (env FAULTLINE_ALLOW_PRIVATE_WEBHOOKS=1).")
    var allowPrivateWebhooks = false

    @Option(help: "Days raw reports and sessions are kept; counts stay exact after (env FAULTLINE_RETENTION_DAYS; default 90).")
    var retentionDays: Int?

    @Option(help: "The address people and tools reach the server at, for links in alerts and sentry-cli's chunk-upload URL (env FAULTLINE_PUBLIC_URL; default the listen address, or the request's Host for sentry-cli).")
    var publicURL: String?

    @Option(help: "Folder with the dashboard's templates/ and static/ (env FAULTLINE_WEB; default: the checkout's web/).")
    var web: String?

    /// Debug builds only: `FAULTLINE_TEST_ABORT_ON_BUILD_ID` makes the worker `abort()` when it symbolicates
    /// that build-id (the poison-pill end-to-end test). Release builds return the worker unchanged.
    static func withTestFaults(_ worker: SymbolicationWorker, logger: Logger) -> SymbolicationWorker {
        #if DEBUG
        if let poison = Environment.string("FAULTLINE_TEST_ABORT_ON_BUILD_ID") {
            logger.warning("FAULTLINE_TEST_ABORT_ON_BUILD_ID is set: symbolicating that build-id aborts the process")
            return worker.injectingFaults(SymbolicationWorker.FaultInjection(abortOnBuildID: poison))
        }
        #endif
        return worker
    }

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0–65535") }
        if let minFreeMb, minFreeMb < 0 { throw ValidationError("--min-free-mb must not be negative") }
        if let durability, FaultlineDatabase.Durability(rawValue: durability) == nil {
            throw ValidationError("--durability must be full or normal")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level \(logLevel)") }
        if let debugFileQuotaMb, debugFileQuotaMb < 0 { throw ValidationError("--debug-file-quota-mb must not be negative") }
        if let maxDebugFileMb, maxDebugFileMb <= 0 { throw ValidationError("--max-debug-file-mb must be positive") }
        if let retentionDays, retentionDays < 1 { throw ValidationError("--retention-days must be at least 1") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel ?? Environment.string("FAULTLINE_LOG_LEVEL") ?? "info") ?? .info
        LoggingSystem.bootstrap { JSONLogHandler(label: $0, level: level) }
        let logger = Logger(label: "faultline")

        let durabilityName = durability ?? Environment.string("FAULTLINE_DURABILITY") ?? "full"
        guard let durability = FaultlineDatabase.Durability(rawValue: durabilityName) else {
            throw ValidationError("FAULTLINE_DURABILITY must be full or normal")
        }
        let root = try Composition(folder: dataOptions.folder, durability: durability)
        let minFree = UInt64(max(0, minFreeMb ?? Environment.int("FAULTLINE_MIN_FREE_MB") ?? 256)) * 1_048_576
        var config = root.serverConfiguration(
            host: host ?? Environment.string("FAULTLINE_HOST") ?? "127.0.0.1",
            port: port ?? Environment.int("FAULTLINE_PORT") ?? 8080)
        config.maxDebugFileBytes = UInt64(max(1, maxDebugFileMb ?? Environment.int("FAULTLINE_MAX_DEBUG_FILE_MB") ?? 4096)) << 20
        config.publicDebuginfod = publicDebuginfod || Environment.string("FAULTLINE_PUBLIC_DEBUGINFOD") == "1"
        let quota = UInt64(max(0, debugFileQuotaMb ?? Environment.int("FAULTLINE_DEBUG_FILE_QUOTA_MB") ?? 10240)) << 20
        config.publicDashboard = publicDashboard || Environment.string("FAULTLINE_PUBLIC_DASHBOARD") == "1"
        config.allowPrivateWebhooks = allowPrivateWebhooks || Environment.string("FAULTLINE_ALLOW_PRIVATE_WEBHOOKS") == "1"
        let listenHost = config.host

        // The dashboard: rendered at start, then shortly after every change (ingest, grouping, alerts, state).
        var services: [any Service] = []
        var renderer: SiteRenderer?
        if let webDirectory = web ?? Environment.string("FAULTLINE_WEB") ?? Composition.locateWebDirectory() {
            renderer = try root.siteRenderer(webDirectory: webDirectory)
        } else {
            logger.warning("dashboard templates not found (pass --web DIR): the dashboard will not be rendered")
        }
        let debounce = Duration.milliseconds(Environment.int("FAULTLINE_RENDER_DEBOUNCE_MS") ?? 2000)
        let scheduler = renderer.map { root.renderScheduler(renderer: $0, logger: Logger(label: "faultline.render"), debounce: debounce) }
        let notify: @Sendable () -> Void = { scheduler?.notify() }

        let dependencies = try root.dependencies(
            minFreeBytes: minFree, debugFileQuotaBytes: quota, renderer: renderer, onChange: notify)
        let worker = try root.symbolicationWorker(logger: Logger(label: "faultline.symbolication"), onChange: notify)
        services.append(Self.withTestFaults(worker, logger: logger))
        if let scheduler { services.append(scheduler) }
        let sender = HTTPWebhookSender()
        let publicAddress = publicURL ?? Environment.string("FAULTLINE_PUBLIC_URL")
        config.publicURL = publicAddress
        if let uploads = dependencies.chunkUploads {
            services.append(root.chunkSweeper(uploads: uploads, logger: Logger(label: "faultline.chunks")))
        }
        let boundPort = PortBox()
        services.append(
            root.alertService(
                logger: Logger(label: "faultline.alerts"),
                interval: .milliseconds(Environment.int("FAULTLINE_ALERT_INTERVAL_MS") ?? 30_000),
                publicURL: { publicAddress ?? boundPort.port.map { "http://\(listenHost):\($0)/" } }, onChange: notify))
        services.append(
            root.webhookDispatcher(
                sender: sender, logger: Logger(label: "faultline.webhooks"), allowPrivateTargets: config.allowPrivateWebhooks,
                baseBackoff: Double(Environment.int("FAULTLINE_WEBHOOK_BACKOFF_MS") ?? 5000) / 1000,
                idleDelay: .milliseconds(Environment.int("FAULTLINE_WEBHOOK_POLL_MS") ?? 1000)))
        services.append(
            root.retentionService(
                days: retentionDays ?? Environment.int("FAULTLINE_RETENTION_DAYS") ?? 90, logger: Logger(label: "faultline.retention"),
                onChange: notify))
        let dashboardNote = config.publicDashboard ? "no login" : "log in with the admin token"
        let app = buildApplication(
            configuration: config, dependencies: dependencies, logger: logger, services: services,
            onServerRunning: { port in
                boundPort.set(port)
                // The one line tools and tests wait for; keep its shape.
                Console.write("Faultline listening on http://\(listenHost):\(port)/ (data: \(dataOptions.folder))\n")
                Console.write("Dashboard: http://\(listenHost):\(port)/ (\(dashboardNote))\n")
            })
        try await app.runService()
        await sender.shutdown()
        try root.database.close()
        logger.info("stopped")
    }
}


/// The port the server bound (known only once it runs; port 0 picks one).
final class PortBox: Sendable {
    private let value = Mutex<Int?>(nil)
    func set(_ port: Int) { value.withLock { $0 = port } }
    var port: Int? { value.withLock { $0 } }
}
