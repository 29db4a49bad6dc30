import FaultlineCore
import Formats
import Logging
import PostgresStorage
import Storage

/// Where a server keeps its data.
public enum StorageChoice: Sendable {
    /// The embedded default: SQLite in the data folder (`faultline.sqlite`), with `durability`.
    case sqlite(durability: FaultlineDatabase.Durability)
    /// A PostgreSQL database that several nodes may share (`url`, libpq style; `password` when the URL has none). The
    /// files (debug files, sentry-cli chunks, the rendered site) live in the composition's folder, which every node
    /// must share then (`--blobs`). `claimLease`: how long a node holds queued reports it took (a dead node's are
    /// taken over after it).
    case postgres(url: String, password: String?, claimLease: Duration = PostgresEngine.defaultClaimLease)
}

/// The engine a composition opened: the one place that knows which it is.
public enum OpenEngine: Sendable {
    case sqlite(FaultlineDatabase)
    case postgres(PostgresEngine)

    /// Every store of this engine, as the ports the services take; files (debug files) under `folder`.
    func stores(folder: String) throws -> EngineStores {
        switch self {
        case .sqlite(let database):
            let insights = SQLiteInsightsReader(database: database)
            return EngineStores(
                projects: SQLiteProjectStore(database: database), ingest: SQLiteIngestStore(database: database),
                reader: AnyReportReader(SQLiteReportReader(database: database)),
                symbolication: SQLiteSymbolicationStore(database: database), insights: insights, issueStates: insights,
                clientReports: insights, alerts: SQLiteAlertStore(database: database),
                retention: SQLiteRetentionStore(database: database), adminSessions: SQLiteAdminSessionStore(database: database),
                search: SQLiteSearchStore(database: database),
                debugFiles: try SQLiteDebugFileStore(database: database, root: folder + "/debug-files"),
                difUploads: SQLiteDifUploadStore(database: database))
        case .postgres(let database):
            let insights = PostgresInsightsReader(database: database)
            return EngineStores(
                projects: PostgresProjectStore(database: database), ingest: PostgresIngestStore(database: database),
                reader: AnyReportReader(PostgresReportReader(database: database)),
                symbolication: PostgresSymbolicationStore(database: database), insights: insights, issueStates: insights,
                clientReports: insights, alerts: PostgresAlertStore(database: database),
                retention: PostgresRetentionStore(database: database), adminSessions: PostgresAdminSessionStore(database: database),
                search: PostgresSearch(database: database),
                debugFiles: try PostgresDebugFileStore(database: database, root: folder + "/debug-files"),
                difUploads: PostgresDifUploadStore(database: database))
        }
    }

    /// Closes the database (SQLite: checkpoints the WAL; PostgreSQL: stops the pool).
    func close() async throws {
        switch self {
        case .sqlite(let database): try database.close()
        case .postgres(let database): await database.close()
        }
    }

    /// The SQLite database, when this engine is SQLite.
    var sqlite: FaultlineDatabase? {
        if case .sqlite(let database) = self { return database }
        return nil
    }

    /// The PostgreSQL database, when this engine is PostgreSQL.
    var postgres: PostgresEngine? {
        if case .postgres(let database) = self { return database }
        return nil
    }
}

/// The stores of one engine, behind the ports of `FaultlineCore`: nothing above this knows which engine runs.
struct EngineStores: Sendable {
    let projects: any ProjectStore
    let ingest: any IngestStore
    let reader: AnyReportReader
    let symbolication: any SymbolicationStore
    let insights: any InsightsReader
    let issueStates: any IssueStateStore
    let clientReports: any ClientReportReader
    let alerts: any AlertStore
    let retention: any RetentionStore
    let adminSessions: any AdminSessionStore
    let search: any SearchReader
    let debugFiles: any DebugFileStore
    let difUploads: any DifUploadStore
}

/// Any engine's report reader as one concrete type (the HTTP dependencies are generic over their reader).
public struct AnyReportReader: ReportReader {
    let base: any ReportReader
    public init(_ base: any ReportReader) { self.base = base }

    public func reports(matching query: ReportQuery) async throws -> [ReportSummary] {
        try await base.reports(matching: query)
    }

    public func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport? {
        try await base.rawReport(eventID: eventID, project: project)
    }

    public func project(ofIssue issue: IssueID) async throws -> ProjectID? {
        try await base.project(ofIssue: issue)
    }
}
