import FaultlineCore
import Formats
import Logging
import PostgresStorage
import SQLiteStorage

/// Where a server keeps its data.
public enum EngineChoice: Sendable {
    /// The embedded default: SQLite in the data folder (`faultline.sqlite`), with `durability`.
    case sqlite(durability: SQLiteEngine.Durability)
    /// A PostgreSQL database that several nodes may share (`url`, libpq style; `password` when the URL has none). The
    /// files (debug files, sentry-cli chunks, the rendered site) live in the composition's folder, which every node
    /// must share then (`--blobs`). `claimLease`: how long a node holds queued reports it took (a dead node's are
    /// taken over after it). `requestDeadline`: how long a request waits for the database before it is answered 503.
    case postgres(
        url: String, password: String?, claimLease: Duration = PostgresEngine.defaultClaimLease,
        requestDeadline: Duration = PostgresEngine.defaultRequestDeadline)
}

/// The engine a composition opened: the one place that knows which it is.
public enum OpenEngine: Sendable {
    case sqlite(SQLiteEngine)
    case postgres(PostgresEngine)

    /// Every store of this engine, as the ports the services take; debug files under `folder`'s `debug-files/`
    /// (the same list the store conformance tests build).
    func stores(folder: String) throws -> EngineStores {
        switch self {
        case .sqlite(let database): try database.stores(blobRoot: folder + "/debug-files")
        case .postgres(let database): try database.stores(blobRoot: folder + "/debug-files")
        }
    }

    /// The lease under which this node renders the dashboard: always held by the one SQLite server; with PostgreSQL
    /// an advisory lock the nodes take in turn.
    func renderLease() -> any RenderLease {
        switch self {
        case .sqlite: AlwaysHeldLease()
        case .postgres(let database): PostgresLease(database: database, name: "faultline.render")
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
    var sqlite: SQLiteEngine? {
        if case .sqlite(let database) = self { return database }
        return nil
    }

    /// How long a request waits for the database before it is answered 503: PostgreSQL's request deadline; none with
    /// SQLite, whose commits run in this process and end.
    var requestDeadline: Duration? { postgres?.requestDeadline }

    /// The PostgreSQL database, when this engine is PostgreSQL.
    var postgres: PostgresEngine? {
        if case .postgres(let database) = self { return database }
        return nil
    }
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
