import FaultlineCore

extension SQLiteEngine {
    /// Every store of this SQLite database, as the ports the services take; debug-file blobs under `blobRoot`
    /// (`<data>/debug-files`). The server and the store conformance tests both build their stores here.
    public func stores(blobRoot: String) throws -> EngineStores {
        EngineStores(
            projects: SQLiteProjectStore(database: self), ingest: SQLiteIngestStore(database: self),
            reports: SQLiteReportReader(database: self), symbolication: SQLiteSymbolicationStore(database: self),
            insights: SQLiteInsightsReader(database: self), alerts: SQLiteAlertStore(database: self),
            retention: SQLiteRetentionStore(database: self), adminSessions: SQLiteAdminSessionStore(database: self),
            people: SQLitePeopleStore(database: self),
            search: SQLiteSearchStore(database: self),
            debugFiles: try SQLiteDebugFileStore(database: self, root: blobRoot),
            difUploads: SQLiteDifUploadStore(database: self), quotas: SQLiteQuotaStore(database: self),
            audit: SQLiteAuditTrail(database: self))
    }
}
