import FaultlineCore
import FaultlineHTTP
import Pipeline

extension ServerAssembly {
    /// Everything a server is configured with besides its data (`faultline serve` resolves it from its flags and
    /// `FAULTLINE_*` variables; tests give what they need). The defaults are `serve`'s.
    public struct Settings: Sendable {
        public var host: String
        /// 0 picks a free port.
        public var port: Int
        public var limits: IngestLimits
        /// Writes are refused (503) below this many free bytes on the data folder's disk; 0: only on a full disk.
        public var minFreeBytes: UInt64
        /// Measures the free bytes (tests); nil: the data folder's file system.
        public var freeSpace: (@Sendable () -> UInt64?)?
        /// `Retry-After` (seconds) of the answers given while the disk is full.
        public var storageRetryAfterSeconds: Int
        public var debugFileQuotaBytes: UInt64
        public var maxDebugFileBytes: UInt64
        public var publicDebuginfod: Bool
        public var publicDashboard: Bool
        /// Webhooks may go to loopback, private and link-local addresses.
        public var allowPrivateWebhooks: Bool
        /// The address people and tools reach the server at (links in alerts, sentry-cli's chunk-upload URL).
        public var publicURL: String?
        /// The dashboard's templates; nil: no dashboard is rendered (the login form is a plain one).
        public var webDirectory: String?
        public var connections: ConnectionPolicy
        public var retentionDays: Int
        /// The sample reports each issue keeps past `retentionDays` (`--retention-samples-per-issue`, `-per-project`).
        public var retentionSamples = RetentionSamplePolicy()
        public var renderDebounce: Duration
        public var alertInterval: Duration
        public var webhookBaseBackoffSeconds: Double
        public var webhookIdleDelay: Duration
        /// With PostgreSQL: how often the render lease's holder renders even without changes of its own.
        public var sharedRenderInterval: Duration
        /// The server's ceiling of events over every project together (`--max-events-per-minute`, `-per-hour`).
        public var eventCeiling = EventQuotas()
        /// How often the quota tally (accepted and dropped events) is added to the database and quota alerts written.
        public var quotaFlushInterval: Duration = .seconds(2)
        /// OpenID Connect single sign-on (`--oidc-issuer …`, docs/people.md); nil: passwords and the admin token only.
        public var singleSignOn: SingleSignOnConfiguration?
        /// Where alert mail goes (`--smtp-host …`, docs/email.md); nil: no mail, alerts go to webhooks only.
        public var smtp: SMTPSettings?
        /// The hour (UTC) from which a period's digest is made (`FAULTLINE_DIGEST_HOUR`).
        public var digestHour = 8
        /// How often the digest service looks for digests to make and send.
        public var digestInterval: Duration = .seconds(60)
        #if DEBUG
        /// Test-only faults of the symbolication worker (never compiled in release builds).
        public var workerFaults: SymbolicationWorker.FaultInjection?
        #endif

        public init(
            host: String = "127.0.0.1", port: Int = 8080, limits: IngestLimits = IngestLimits(),
            minFreeBytes: UInt64 = 256 << 20,
            freeSpace: (@Sendable () -> UInt64?)? = nil, storageRetryAfterSeconds: Int = 30,
            debugFileQuotaBytes: UInt64 = 10 << 30,
            maxDebugFileBytes: UInt64 = 4 << 30, publicDebuginfod: Bool = false, publicDashboard: Bool = false,
            allowPrivateWebhooks: Bool = false, publicURL: String? = nil, webDirectory: String? = nil,
            connections: ConnectionPolicy = ConnectionPolicy(), retentionDays: Int = 90,
            renderDebounce: Duration = .milliseconds(250),
            alertInterval: Duration = .seconds(30), webhookBaseBackoffSeconds: Double = 5,
            webhookIdleDelay: Duration = .seconds(1),
            sharedRenderInterval: Duration = .seconds(5)
        ) {
            self.host = host
            self.port = port
            self.limits = limits
            self.minFreeBytes = minFreeBytes
            self.freeSpace = freeSpace
            self.storageRetryAfterSeconds = storageRetryAfterSeconds
            self.debugFileQuotaBytes = debugFileQuotaBytes
            self.maxDebugFileBytes = maxDebugFileBytes
            self.publicDebuginfod = publicDebuginfod
            self.publicDashboard = publicDashboard
            self.allowPrivateWebhooks = allowPrivateWebhooks
            self.publicURL = publicURL
            self.webDirectory = webDirectory
            self.connections = connections
            self.retentionDays = retentionDays
            self.renderDebounce = renderDebounce
            self.alertInterval = alertInterval
            self.webhookBaseBackoffSeconds = webhookBaseBackoffSeconds
            self.webhookIdleDelay = webhookIdleDelay
            self.sharedRenderInterval = sharedRenderInterval
        }
    }
}
