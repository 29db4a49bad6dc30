import CoreMetrics

/// Every metric and log key Faultline emits, declared in one place before use.
///
/// | metric | type | labels | meaning |
/// |---|---|---|---|
/// | `faultline_http_requests_total` | counter | `route`, `status` | requests answered |
/// | `faultline_reports_accepted_total` | counter | — | reports newly stored |
/// | `faultline_reports_duplicate_total` | counter | — | reports already stored (client retries) |
/// | `faultline_reports_rejected_total` | counter | `reason` | reports refused, by reason |
/// | `faultline_sessions_applied_total` | counter | — | session updates that changed a session |
/// | `faultline_ingest_duration_seconds` | histogram | `route` | request received → answered, ingest routes |
/// | `faultline_db_commit_duration_seconds` | histogram | — | one group commit (transaction + fsync) |
/// | `faultline_db_commit_writes` | histogram | — | requests folded into one group commit |
/// | `faultline_db_deadline_passed_total` | counter | — | writes answered 503 because their commit passed its deadline |
/// | `faultline_reports_grouped_total` | counter | — | reports filed under an issue (again, when symbols moved them) |
/// | `faultline_alerts_total` | counter | `kind` | alerts recorded by the alert service (velocity, crash-free target) |
/// | `faultline_webhook_deliveries_total` | counter | `outcome` | webhook attempts: delivered, retry, failed |
/// | `faultline_render_duration_seconds` | histogram | `mode` | one dashboard render, full or incremental |
/// | `faultline_render_pages_total` | counter | — | dashboard pages written |
/// | `faultline_retention_pruned_total` | counter | `kind` | reports and sessions removed by retention |
/// | `faultline_sentry_envelopes_total` | counter | `encoding` | Sentry envelopes and store bodies received, by Content-Encoding |
/// | `faultline_sentry_items_skipped_total` | counter | `type` | envelope items of types Faultline does not keep |
/// | `faultline_chunk_upload_requests_total` | counter | — | sentry-cli chunk requests (`POST …/chunk-upload/`) |
/// | `faultline_chunks_received_total` | counter | `outcome` | chunks received: `stored` (new) or `duplicate` |
/// | `faultline_dif_assemble_total` | counter | `state` | files answered by assemble, by state (`ok`, `not_found`, `error`, …) |
/// | `faultline_chunks_swept_total` | counter | — | unused chunks removed after their lifetime |
/// | `faultline_symbolication_poisoned_total` | counter | — | reports failed after stopping the symbolicator `maxAttempts` times |
/// | `faultline_storage_full` | gauge | — | 1 while the data folder's disk is full (ingest answers 507, background writers pause) |
/// | `faultline_nodes` | gauge | — | with PostgreSQL: the live nodes sharing the database, as this node last counted them |
/// | `faultline_render_lease_held` | gauge | — | with PostgreSQL: 1 while this node holds the lease to render the dashboard |
public struct Telemetry: Sendable {
    /// Metric names.
    public enum Name {
        public static let httpRequests = "faultline_http_requests_total"
        public static let reportsAccepted = "faultline_reports_accepted_total"
        public static let reportsDuplicate = "faultline_reports_duplicate_total"
        public static let reportsRejected = "faultline_reports_rejected_total"
        public static let sessionsApplied = "faultline_sessions_applied_total"
        /// Sessions (an aggregate's count each) refused over a project's session budget.
        public static let sessionsRateLimited = "faultline_sessions_rate_limited_total"
        public static let ingestDuration = "faultline_ingest_duration_seconds"
        public static let commitDuration = "faultline_db_commit_duration_seconds"
        public static let commitWrites = "faultline_db_commit_writes"
        /// Writes answered `503` because the database did not commit them within the deadline (`GroupCommitter`).
        public static let commitDeadlinePassed = "faultline_db_deadline_passed_total"
        public static let reportsGrouped = "faultline_reports_grouped_total"
        public static let alerts = "faultline_alerts_total"
        public static let webhookDeliveries = "faultline_webhook_deliveries_total"
        public static let renderDuration = "faultline_render_duration_seconds"
        public static let renderPages = "faultline_render_pages_total"
        public static let retentionPruned = "faultline_retention_pruned_total"
        public static let sentryEnvelopes = "faultline_sentry_envelopes_total"
        public static let sentryItemsSkipped = "faultline_sentry_items_skipped_total"
        public static let chunkUploadRequests = "faultline_chunk_upload_requests_total"
        public static let chunksReceived = "faultline_chunks_received_total"
        public static let difAssemble = "faultline_dif_assemble_total"
        public static let chunksSwept = "faultline_chunks_swept_total"
        /// Reports failed because symbolicating them stopped the process `SymbolicationRetry.maxAttempts` times.
        public static let symbolicationPoisoned = "faultline_symbolication_poisoned_total"
        /// 1 while the server is under storage pressure (`DiskGuard`), else 0.
        public static let storageFull = "faultline_storage_full"
        /// With PostgreSQL: the live nodes (`PostgresNodes`).
        public static let nodes = "faultline_nodes"
        /// With PostgreSQL: 1 while this node holds the render lease.
        public static let renderLeaseHeld = "faultline_render_lease_held"
    }

    /// Reasons a report is rejected (`reason` label of `faultline_reports_rejected_total`).
    public enum RejectReason: String, Sendable, CaseIterable {
        case invalid, tooLarge = "too_large", unauthorized, rateLimited = "rate_limited", diskFull = "disk_full"
        case unsupportedEncoding = "unsupported_encoding", storageFailed = "storage_failed"
        /// Past a project's event quota or the server's ceiling (`SpikeGuard`).
        case quotaReached = "quota_reached"
        /// The database could not be reached or did not commit within the deadline (503).
        case databaseUnavailable = "database_unavailable"
    }

    /// Structured log metadata keys.
    public enum LogKey {
        public static let freeBytes = "free_bytes"
        public static let floorBytes = "floor_bytes"
        public static let project = "project"
        public static let route = "route"
        public static let status = "status"
        public static let error = "error"
        public static let reports = "reports"
        public static let releasedBytes = "released_bytes"
        public static let durationMs = "duration_ms"
        public static let alert = "alert"
        public static let url = "url"
        public static let pages = "pages"
        public static let chunks = "chunks"
        /// A dashboard session's stable id (never its cookie secret).
        public static let session = "session"
        /// The person a dashboard session is for (their id), or `admin token`.
        public static let person = "person"
        public static let reportID = "report_id"
        public static let attempts = "attempts"
        public static let buildID = "build_id"
    }

    public let factory: any MetricsFactory

    public init(factory: any MetricsFactory) {
        self.factory = factory
    }

    public func count(_ name: String, by amount: Int = 1, _ dimensions: [(String, String)] = []) {
        guard amount > 0 else { return }
        Counter(label: name, dimensions: dimensions, factory: factory).increment(by: amount)
    }

    public func rejected(_ reason: RejectReason, count amount: Int = 1) {
        count(Name.reportsRejected, by: amount, [("reason", reason.rawValue)])
    }

    public func recordDuration(_ name: String, nanoseconds: Int64, _ dimensions: [(String, String)] = []) {
        Timer(label: name, dimensions: dimensions, factory: factory).recordNanoseconds(nanoseconds)
    }

    /// Sets a gauge (a value that goes up and down).
    public func gauge(_ name: String, _ value: Double) {
        Recorder(label: name, dimensions: [], aggregate: false, factory: factory).record(value)
    }

    public func recordValue(_ name: String, _ value: Double) {
        Recorder(label: name, dimensions: [], aggregate: true, factory: factory).record(value)
    }
}
