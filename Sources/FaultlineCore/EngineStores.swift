/// Every store one storage engine provides, behind the ports of this module: the one list of stores that both the
/// server and the store conformance tests build (SQLite: `SQLiteEngine.stores(blobRoot:)`; PostgreSQL:
/// `PostgresEngine.stores(blobRoot:)`). A port added to an engine is added here, so that neither side can forget it.
public struct EngineStores: Sendable {
    /// Projects, and their fingerprint rules and regroups (issue #36).
    public let projects: any ProjectStore & GroupingRulesStore
    public let ingest: any IngestStore & MinidumpStore
    /// Stored reports and sessions.
    public let reports: any ReportReader & SessionReader
    /// The symbolication queue and results.
    public let symbolication: any SymbolicationStore
    /// Issues, health and dropped-event statistics (reads), and closing, muting and notes of issues.
    public let insights: any InsightsReader & IssueStateStore & ClientReportReader
    /// Alert settings, alerts, the webhook outbox (which carries alert mail too) and who wants which alerts by mail.
    public let alerts: any AlertStore & AlertMailStore
    public let retention: any RetentionStore
    public let adminSessions: any AdminSessionStore
    /// People, their roles and invites, their personal API tokens and second factors (issue #37).
    public let people: any PeopleStore & PersonalTokenStore & AccountStore
    public let search: any SearchReader
    /// Debug-file rows, with their blobs under the engine's blob folder.
    public let debugFiles: any DebugFileStore
    /// sentry-cli's uploaded-file checksums (`dif_uploads`).
    public let difUploads: any DifUploadStore
    /// What the event quotas counted, accepted and dropped, per day and release (`SpikeGuard`).
    public let quotas: any QuotaCountStore
    /// Who changed what, when and from where (`AuditTrail`, issue #37).
    public let audit: any AuditTrail

    public init(
        projects: any ProjectStore & GroupingRulesStore, ingest: any IngestStore & MinidumpStore,
        reports: any ReportReader & SessionReader,
        symbolication: any SymbolicationStore, insights: any InsightsReader & IssueStateStore & ClientReportReader,
        alerts: any AlertStore & AlertMailStore, retention: any RetentionStore,
        adminSessions: any AdminSessionStore,
        people: any PeopleStore & PersonalTokenStore & AccountStore, search: any SearchReader,
        debugFiles: any DebugFileStore, difUploads: any DifUploadStore, quotas: any QuotaCountStore,
        audit: any AuditTrail
    ) {
        self.audit = audit
        self.quotas = quotas
        self.projects = projects
        self.ingest = ingest
        self.reports = reports
        self.symbolication = symbolication
        self.insights = insights
        self.alerts = alerts
        self.retention = retention
        self.adminSessions = adminSessions
        self.people = people
        self.search = search
        self.debugFiles = debugFiles
        self.difUploads = difUploads
    }
}
