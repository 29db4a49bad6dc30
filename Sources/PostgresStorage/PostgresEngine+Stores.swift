import FaultlineCore

extension PostgresEngine {
    /// Every store of this PostgreSQL database, as the ports the services take; debug-file blobs under `blobRoot`
    /// (the folder every node shares). The server and the store conformance tests both build their stores here.
    public func stores(blobRoot: String) throws -> EngineStores {
        EngineStores(
            projects: PostgresProjectStore(database: self), ingest: PostgresIngestStore(database: self),
            reports: PostgresReportReader(database: self), symbolication: PostgresSymbolicationStore(database: self),
            insights: PostgresInsightsReader(database: self), alerts: PostgresAlertStore(database: self),
            retention: PostgresRetentionStore(database: self), adminSessions: PostgresAdminSessionStore(database: self),
            people: PostgresPeopleStore(database: self),
            search: PostgresSearchStore(database: self),
            debugFiles: try PostgresDebugFileStore(database: self, root: blobRoot),
            difUploads: PostgresDifUploadStore(database: self), quotas: PostgresQuotaStore(database: self),
            audit: PostgresAuditTrail(database: self))
    }
}
