import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Logging
import Pipeline
import Storage

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

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0–65535") }
        if let minFreeMb, minFreeMb < 0 { throw ValidationError("--min-free-mb must not be negative") }
        if let durability, FaultlineDatabase.Durability(rawValue: durability) == nil {
            throw ValidationError("--durability must be full or normal")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level \(logLevel)") }
        if let debugFileQuotaMb, debugFileQuotaMb < 0 { throw ValidationError("--debug-file-quota-mb must not be negative") }
        if let maxDebugFileMb, maxDebugFileMb <= 0 { throw ValidationError("--max-debug-file-mb must be positive") }
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
        let dependencies = try root.dependencies(minFreeBytes: minFree, debugFileQuotaBytes: quota)
        let listenHost = config.host
        let worker = try root.symbolicationWorker(logger: Logger(label: "faultline.symbolication"))
        let app = buildApplication(
            configuration: config, dependencies: dependencies, logger: logger, services: [worker],
            onServerRunning: { port in
                // The one line tools and tests wait for; keep its shape.
                Console.write("Faultline listening on http://\(listenHost):\(port)/ (data: \(dataOptions.folder))\n")
            })
        try await app.runService()
        try root.database.close()
        logger.info("stopped")
    }
}

