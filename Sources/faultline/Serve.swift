import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `faultline serve`: runs the server until SIGTERM or SIGINT, then shuts down gracefully (stops
/// accepting, finishes requests in flight, checkpoints and closes the database).
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the Faultline server.")

    @OptionGroup var dataOptions: DataOptions
    /// Where alert mail goes (docs/email.md).
    @OptionGroup var smtp: SMTPOptions
    /// OpenID Connect single sign-on (docs/people.md).
    @OptionGroup var singleSignOn: SingleSignOnOptions

    @Option(help: "Address to listen on (env FAULTLINE_HOST; default 127.0.0.1).")
    var host: String?

    @Option(help: "Port to listen on; 0 picks a free one (env FAULTLINE_PORT; default 8080).")
    var port: Int?

    @Option(
        help:
            "Refuse writes (503) when the data folder's disk has fewer free MiB (env FAULTLINE_MIN_FREE_MB; default 256; 0 disables)."
    )
    var minFreeMb: Int?

    @Option(
        help:
            "full: fsync every commit (survives power loss); normal: survives a killed process (env FAULTLINE_DURABILITY)."
    )
    var durability: String?

    @Option(help: "trace, debug, info, notice, warning, error or critical (env FAULTLINE_LOG_LEVEL; default info).")
    var logLevel: String?

    @Option(
        help:
            "MiB of debug files and minidumps each project may store (env FAULTLINE_DEBUG_FILE_QUOTA_MB; default 10240)."
    )
    var debugFileQuotaMb: Int?

    @Option(help: "Largest debug file accepted, in MiB (env FAULTLINE_MAX_DEBUG_FILE_MB; default 4096).")
    var maxDebugFileMb: Int?

    @Flag(help: "Serve /buildid/… (debuginfod) without a token (env FAULTLINE_PUBLIC_DEBUGINFOD=1).")
    var publicDebuginfod = false

    @Flag(
        help:
            "Serve the dashboard without the admin token (env FAULTLINE_PUBLIC_DASHBOARD=1). Only for a server nobody else reaches."
    )
    var publicDashboard = false

    @Flag(
        help: "Let webhooks go to loopback, private and link-local addresses (env FAULTLINE_ALLOW_PRIVATE_WEBHOOKS=1).")
    var allowPrivateWebhooks = false

    @Option(
        help:
            "Days raw reports and sessions are kept; counts stay exact after (env FAULTLINE_RETENTION_DAYS; default 90)."
    )
    var retentionDays: Int?

    @Option(
        help:
            "Sample reports each issue keeps past the retention period: its first, its latest, one a release (env FAULTLINE_RETENTION_SAMPLES_PER_ISSUE; default 8; 0 keeps none)."
    )
    var retentionSamplesPerIssue: Int?

    @Option(
        help:
            "Most sample reports a project keeps past the retention period, in all its issues (env FAULTLINE_RETENTION_SAMPLES_PER_PROJECT; default 2000; 0 keeps none)."
    )
    var retentionSamplesPerProject: Int?

    @Option(
        help:
            "The server's ceiling of events per minute, over all projects together; past it events get 429 and are counted as dropped, sessions still flow (env FAULTLINE_MAX_EVENTS_PER_MINUTE; default none)."
    )
    var maxEventsPerMinute: Int?

    @Option(
        help:
            "The server's ceiling of events per hour, over all projects (env FAULTLINE_MAX_EVENTS_PER_HOUR; default none)."
    )
    var maxEventsPerHour: Int?

    @Option(
        help:
            "The address people and tools reach the server at, for links in alerts and sentry-cli's chunk-upload URL (env FAULTLINE_PUBLIC_URL; default: the listen address for alerts; a URL relative to the server sentry-cli uses for its uploads)."
    )
    var publicURL: String?

    @Option(
        help: "Folder with the dashboard's templates/ and static/ (env FAULTLINE_WEB; default: the checkout's web/).")
    var web: String?

    /// The server's clock. Debug builds only: `FAULTLINE_TEST_CLOCK_OFFSET_S` moves it by that many seconds (the
    /// retention end-to-end test stores reports "days ago"). Release builds always use the system clock.
    static func clock(logger: Logger) -> any WallClock {
        #if DEBUG
        if let text = Environment.string("FAULTLINE_TEST_CLOCK_OFFSET_S"), let offset = Double(text), offset.isFinite {
            logger.warning("FAULTLINE_TEST_CLOCK_OFFSET_S is set: the server's clock is moved by \(offset) s")
            return OffsetClock(offset: offset)
        }
        #endif
        return SystemClock()
    }

    @Option(
        help:
            "Seconds a client may take to send a request head, between pieces of a body, or idle between requests, and may leave an answer unread; then 408 (or a close) (env FAULTLINE_READ_TIMEOUT_SECONDS; default 30)."
    )
    var readTimeoutSeconds: Double?

    @Option(
        help:
            "With --database: seconds a node holds the queued reports it took to symbolicate; another node takes a dead node's reports after this (env FAULTLINE_CLAIM_LEASE_SECONDS; default 300)."
    )
    var claimLeaseSeconds: Int?

    @Option(
        help:
            "With --database: seconds a request waits for the database (an ingest commit, a key's lookup) before it is answered 503 with Retry-After (env FAULTLINE_DATABASE_TIMEOUT_SECONDS; default 10)."
    )
    var databaseTimeoutSeconds: Int?

    @Option(
        help:
            "Seconds a graceful stop (SIGTERM, SIGINT) may take before the server exits by itself: a database that does not answer never holds it longer; a second signal exits at once (env FAULTLINE_SHUTDOWN_TIMEOUT_SECONDS; default 20)."
    )
    var shutdownTimeoutSeconds: Int?

    @Option(
        help:
            "Connections open at once; past it a new one gets 503 with Retry-After (env FAULTLINE_MAX_CONNECTIONS; default: half of the open-files limit left after 256 for the database and debug files)."
    )
    var maxConnections: Int?

    @Option(
        help:
            "Connections open at once from one IPv4 address or IPv6 /64; past it that address gets 503 while others are served. Behind a reverse proxy set it to --max-connections (env FAULTLINE_MAX_CONNECTIONS_PER_ADDRESS; default: an eighth of the cap, at least 8)."
    )
    var maxConnectionsPerAddress: Int?

    @Option(
        help:
            "Least average rate of a request body in bytes a second, after a grace of the read timeout; slower gets 408. 0: none (env FAULTLINE_MIN_BODY_BYTES_PER_SECOND; default 1024)."
    )
    var minBodyBytesPerSecond: Int?

    /// Flags and `FAULTLINE_*` variables checked together, before anything runs.
    func validate() throws {
        _ = try settings()
    }

    func settings() throws -> ServeSettings {
        try ServeSettings(self, environment: .current, openFilesLimit: ServeSettings.openFilesLimit())
    }

    func run() async throws {
        let arenas = MallocArenas.limit()
        let settings = try settings()
        let level = settings.logLevel
        LoggingSystem.bootstrap { JSONLogHandler(label: $0, level: level) }
        let logger = Logger(label: "faultline")
        if let arenas { logger.info("malloc arenas: at most \(arenas) (MALLOC_ARENA_MAX chooses another number)") }

        // Nobody else on the machine reads the data: folders 0700 and files 0600, whatever the umask was.
        umask(0o077)
        let web = settings.web ?? Composition.locateWebDirectory()
        if web == nil {
            logger.warning("dashboard templates not found (pass --web DIR): the dashboard will not be rendered")
        }
        let deadline = ShutdownDeadline(limit: settings.shutdownTimeout, logger: logger)
        defer { deadline.cancel() }
        let data = try await dataOptions.open(
            durability: settings.durability, claimLease: settings.claimLease,
            requestDeadline: settings.databaseTimeout, clock: Self.clock(logger: logger))
        let server = try ServerAssembly(settings: settings.server(webDirectory: web), data: data, logger: logger)
        try await server.run(logger: logger) { port in
            deadline.serving()
            Self.announce(port: port, settings: settings, data: data)
        }
        try await data.close()
        logger.info("stopped")
    }

    /// The lines tools and tests wait for; keep their shape.
    static func announce(port: Int, settings: ServeSettings, data: Composition) {
        let folder = data.sqliteDatabase != nil ? data.folder : "\(data.engineDescription), files: \(data.folder)"
        let note = settings.publicDashboard ? "no login" : "log in with the admin token"
        // Recorded before the lines: whoever waits for them can read it (`projects create`'s DSN).
        ServerURLRecord.write(
            ServerURLRecord.url(host: settings.host, port: port, publicURL: settings.server.publicURL),
            folder: data.folder)
        Console.write("Faultline listening on http://\(settings.host):\(port)/ (data: \(folder))\n")
        Console.write("Dashboard: http://\(settings.host):\(port)/ (\(note))\n")
    }
}
