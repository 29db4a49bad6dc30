import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Logging
import Pipeline
import SQLiteStorage

#if canImport(Glibc)
import Glibc
#endif

/// Everything `faultline serve` is configured with, resolved once: each command-line option, else its
/// `FAULTLINE_*` variable, else the default. A value out of range or that does not parse — from a flag or
/// from the environment — is a `ValidationError` naming it; nothing falls back silently.
struct ServeSettings {
    /// What the server is built with (`ServerAssembly`); its `webDirectory` is the `--web` given (nil: look for the
    /// checkout's `web/`, `server(webDirectory:)`).
    var server: ServerAssembly.Settings
    var durability: SQLiteEngine.Durability
    var logLevel: Logger.Level
    /// With PostgreSQL: how long a node holds the queued reports it took (`--claim-lease-seconds`).
    var claimLease: Duration
    /// With PostgreSQL: how long a request waits for the database before a 503 (`--database-timeout-seconds`).
    var databaseTimeout: Duration
    /// How long a graceful stop may take before the process exits by itself (`--shutdown-timeout-seconds`).
    var shutdownTimeout: Duration
    var host: String { server.host }
    var publicDashboard: Bool { server.publicDashboard }
    var web: String? { server.webDirectory }

    /// - Parameter openFilesLimit: the process's soft `RLIMIT_NOFILE` (nil: unknown), for the default cap.
    init(_ serve: Serve, environment env: Environment, openFilesLimit: UInt64?) throws {
        func pick<T>(
            _ flag: T?, _ flagName: String, _ check: (T) -> Bool, _ rule: String, env fromEnv: () throws -> T?,
            default value: T
        ) throws -> T {
            if let flag {
                guard check(flag) else { throw ValidationError("\(flagName) must be \(rule)") }
                return flag
            }
            return try fromEnv() ?? value
        }
        let host = serve.host ?? env.string("FAULTLINE_HOST") ?? "127.0.0.1"
        let port = try pick(
            serve.port, "--port", { (0...65535).contains($0) }, "0–65535",
            env: { try env.int("FAULTLINE_PORT", in: 0...65535) }, default: 8080)
        let minFreeMb = try pick(
            serve.minFreeMb, "--min-free-mb", { (0...(1 << 40)).contains($0) }, "0 or more",
            env: { try env.int("FAULTLINE_MIN_FREE_MB", in: 0...(1 << 40)) }, default: 256)
        let minFreeBytes = UInt64(minFreeMb) << 20
        let durabilityName = try pick(
            serve.durability, "--durability", { SQLiteEngine.Durability(rawValue: $0) != nil }, "full or normal",
            env: { try env.choice("FAULTLINE_DURABILITY", ["full", "normal"]) }, default: "full")
        durability = SQLiteEngine.Durability(rawValue: durabilityName) ?? .full
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        let levelName = try pick(
            serve.logLevel, "--log-level", { levels.contains($0) }, levels.joined(separator: ", "),
            env: { try env.choice("FAULTLINE_LOG_LEVEL", levels) }, default: "info")
        logLevel = Logger.Level(rawValue: levelName) ?? .info
        let quotaMb = try pick(
            serve.debugFileQuotaMb, "--debug-file-quota-mb", { (0...(1 << 40)).contains($0) }, "0 or more",
            env: { try env.int("FAULTLINE_DEBUG_FILE_QUOTA_MB", in: 0...(1 << 40)) }, default: 10240)
        let debugFileQuotaBytes = UInt64(quotaMb) << 20
        let maxDebugMb = try pick(
            serve.maxDebugFileMb, "--max-debug-file-mb", { (1...(1 << 30)).contains($0) }, "positive",
            env: { try env.int("FAULTLINE_MAX_DEBUG_FILE_MB", in: 1...(1 << 30)) }, default: 4096)
        let maxDebugFileBytes = UInt64(maxDebugMb) << 20
        let publicDebuginfod = try serve.publicDebuginfod || (env.bool("FAULTLINE_PUBLIC_DEBUGINFOD") ?? false)
        let publicDashboard = try serve.publicDashboard || (env.bool("FAULTLINE_PUBLIC_DASHBOARD") ?? false)
        let allowPrivateWebhooks =
            try serve.allowPrivateWebhooks || (env.bool("FAULTLINE_ALLOW_PRIVATE_WEBHOOKS") ?? false)
        let retentionDays = try pick(
            serve.retentionDays, "--retention-days", { (1...36_500).contains($0) }, "1–36500",
            env: { try env.int("FAULTLINE_RETENTION_DAYS", in: 1...36_500) }, default: 90)
        let samplesPerIssue = try pick(
            serve.retentionSamplesPerIssue, "--retention-samples-per-issue",
            { (0...RetentionSamplePolicy.maxPerIssue).contains($0) }, "0–\(RetentionSamplePolicy.maxPerIssue)",
            env: { try env.int("FAULTLINE_RETENTION_SAMPLES_PER_ISSUE", in: 0...RetentionSamplePolicy.maxPerIssue) },
            default: RetentionSamplePolicy().perIssue)
        let samplesPerProject = try pick(
            serve.retentionSamplesPerProject, "--retention-samples-per-project",
            { (0...RetentionSamplePolicy.maxPerProject).contains($0) }, "0–\(RetentionSamplePolicy.maxPerProject)",
            env: {
                try env.int("FAULTLINE_RETENTION_SAMPLES_PER_PROJECT", in: 0...RetentionSamplePolicy.maxPerProject)
            },
            default: RetentionSamplePolicy().perProject)
        let publicURL: String?
        if let url = serve.publicURL {
            guard url.hasPrefix("http://") || url.hasPrefix("https://") else {
                throw ValidationError("--public-url must start with http:// or https://")
            }
            publicURL = url
        } else {
            publicURL = try env.url("FAULTLINE_PUBLIC_URL")
        }
        let web = serve.web ?? env.string("FAULTLINE_WEB")
        let day = 86_400_000
        let renderDebounce: Duration = .milliseconds(try env.int("FAULTLINE_RENDER_DEBOUNCE_MS", in: 0...day) ?? 250)
        let alertInterval: Duration = .milliseconds(try env.int("FAULTLINE_ALERT_INTERVAL_MS", in: 1...day) ?? 30_000)
        let webhookBaseBackoffSeconds = Double(try env.int("FAULTLINE_WEBHOOK_BACKOFF_MS", in: 1...day) ?? 5000) / 1000
        let webhookIdleDelay: Duration = .milliseconds(try env.int("FAULTLINE_WEBHOOK_POLL_MS", in: 1...day) ?? 1000)
        let storageRetryAfterSeconds = try env.int("FAULTLINE_STORAGE_RETRY_AFTER_S", in: 1...86_400) ?? 30
        let timeoutSeconds = try pick(
            serve.readTimeoutSeconds, "--read-timeout-seconds", { $0.isFinite && (0.05...86_400).contains($0) },
            "a number of seconds from 0.05 to 86400",
            env: { try env.double("FAULTLINE_READ_TIMEOUT_SECONDS", in: 0.05...86_400) }, default: 30)
        let readTimeout: Duration = .milliseconds(Int64((timeoutSeconds * 1000).rounded()))
        let defaultCap = openFilesLimit.map { ConnectionBudget.defaultMaxConnections(openFilesLimit: $0) } ?? 1024
        let maxConnections = try pick(
            serve.maxConnections, "--max-connections", { (1...1_000_000).contains($0) }, "1–1000000",
            env: { try env.int("FAULTLINE_MAX_CONNECTIONS", in: 1...1_000_000) }, default: defaultCap)
        let maxConnectionsPerAddress = min(
            maxConnections,
            try pick(
                serve.maxConnectionsPerAddress, "--max-connections-per-address", { (1...1_000_000).contains($0) },
                "1–1000000",
                env: { try env.int("FAULTLINE_MAX_CONNECTIONS_PER_ADDRESS", in: 1...1_000_000) },
                default: ConnectionBudget.defaultPerAddressShare(maxConnections: maxConnections)))
        let minBodyBytesPerSecond = try pick(
            serve.minBodyBytesPerSecond, "--min-body-bytes-per-second", { (0...(1 << 30)).contains($0) },
            "0–1073741824",
            env: { try env.int("FAULTLINE_MIN_BODY_BYTES_PER_SECOND", in: 0...(1 << 30)) }, default: 1024)
        claimLease = .seconds(
            try pick(
                serve.claimLeaseSeconds, "--claim-lease-seconds", { (1...86_400).contains($0) }, "1–86400",
                env: { try env.int("FAULTLINE_CLAIM_LEASE_SECONDS", in: 1...86_400) }, default: 300))
        databaseTimeout = .seconds(
            try pick(
                serve.databaseTimeoutSeconds, "--database-timeout-seconds", { (1...600).contains($0) }, "1–600",
                env: { try env.int("FAULTLINE_DATABASE_TIMEOUT_SECONDS", in: 1...600) }, default: 10))
        shutdownTimeout = .seconds(
            try pick(
                serve.shutdownTimeoutSeconds, "--shutdown-timeout-seconds", { (1...3600).contains($0) }, "1–3600",
                env: { try env.int("FAULTLINE_SHUTDOWN_TIMEOUT_SECONDS", in: 1...3600) }, default: 20))
        let sharedRenderInterval: Duration = .milliseconds(
            try env.int("FAULTLINE_RENDER_INTERVAL_MS", in: 100...day) ?? 5000)
        server = ServerAssembly.Settings(
            host: host, port: port, minFreeBytes: minFreeBytes, storageRetryAfterSeconds: storageRetryAfterSeconds,
            debugFileQuotaBytes: debugFileQuotaBytes, maxDebugFileBytes: maxDebugFileBytes,
            publicDebuginfod: publicDebuginfod,
            publicDashboard: publicDashboard, allowPrivateWebhooks: allowPrivateWebhooks, publicURL: publicURL,
            webDirectory: web,
            connections: ConnectionPolicy(
                readTimeout: readTimeout, minBodyBytesPerSecond: minBodyBytesPerSecond, maxConnections: maxConnections,
                maxConnectionsPerAddress: maxConnectionsPerAddress),
            retentionDays: retentionDays, renderDebounce: renderDebounce, alertInterval: alertInterval,
            webhookBaseBackoffSeconds: webhookBaseBackoffSeconds, webhookIdleDelay: webhookIdleDelay,
            sharedRenderInterval: sharedRenderInterval)
        server.retentionSamples = RetentionSamplePolicy(perIssue: samplesPerIssue, perProject: samplesPerProject)
        // The server's event ceiling: none unless a flag or variable sets one.
        let ceiling = 1...EventQuotas.maxValue
        func ceilingValue(_ flag: Int?, _ flagName: String, _ variable: String) throws -> Int? {
            guard let flag else { return try env.int(variable, in: ceiling) }
            guard ceiling.contains(flag) else { throw ValidationError("\(flagName) must be 1–\(ceiling.upperBound)") }
            return flag
        }
        server.eventCeiling = EventQuotas(
            perMinute: try ceilingValue(
                serve.maxEventsPerMinute, "--max-events-per-minute", "FAULTLINE_MAX_EVENTS_PER_MINUTE"),
            perHour: try ceilingValue(serve.maxEventsPerHour, "--max-events-per-hour", "FAULTLINE_MAX_EVENTS_PER_HOUR"))
        server.quotaFlushInterval = .milliseconds(try env.int("FAULTLINE_QUOTA_FLUSH_MS", in: 10...day) ?? 2000)
        server.smtp = try serve.smtp.settings(env)
        server.digestHour = try env.int("FAULTLINE_DIGEST_HOUR", in: 0...23) ?? 8
        server.digestInterval = .milliseconds(try env.int("FAULTLINE_DIGEST_INTERVAL_MS", in: 100...day) ?? 60_000)
        server.singleSignOn = try serve.singleSignOn.configuration(env)
    }

    /// The server's settings, with the dashboard templates in `webDirectory` (nil: no dashboard is rendered).
    func server(webDirectory: String?) -> ServerAssembly.Settings {
        var server = self.server
        server.webDirectory = webDirectory
        #if DEBUG
        // `FAULTLINE_TEST_ABORT_ON_BUILD_ID`: the worker aborts when it symbolicates that build-id (the poison-pill
        // end-to-end test). Release builds have no such fault.
        server.workerFaults = Environment.string("FAULTLINE_TEST_ABORT_ON_BUILD_ID").map {
            SymbolicationWorker.FaultInjection(abortOnBuildID: $0)
        }
        #endif
        return server
    }

    /// The soft open-files limit of this process (`getrlimit(RLIMIT_NOFILE)`), nil when unknown or unlimited.
    static func openFilesLimit() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else {
            return nil
        }
        return UInt64(limit.rlim_cur)
    }
}
