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

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("--port must be 0–65535") }
        if let minFreeMb, minFreeMb < 0 { throw ValidationError("--min-free-mb must not be negative") }
        if let durability, FaultlineDatabase.Durability(rawValue: durability) == nil {
            throw ValidationError("--durability must be full or normal")
        }
        if let logLevel, Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level \(logLevel)") }
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
        let config = root.serverConfiguration(
            host: host ?? Environment.string("FAULTLINE_HOST") ?? "127.0.0.1",
            port: port ?? Environment.int("FAULTLINE_PORT") ?? 8080)
        let dependencies = root.dependencies(minFreeBytes: minFree)
        let app = buildApplication(
            configuration: config, dependencies: dependencies, logger: logger,
            onServerRunning: { port in
                // The one line tools and tests wait for; keep its shape.
                Console.write("Faultline listening on http://\(config.host):\(port)/ (data: \(dataOptions.folder))\n")
            })
        try await app.runService()
        try root.database.close()
        logger.info("stopped")
    }
}

