import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Report and session reads on PostgreSQL (the twin of `SQLiteReportReader`): listings page by keyset
/// (`id < cursor`, newest first), so page N costs what page 1 costs.
public struct PostgresReportReader: ReportReader, SessionReader {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func reports(matching query: ReportQuery) async throws -> [ReportSummary] {
        try await database.rows(ReportSQL.listing(query, .postgres), ReportSQL.summary)
    }

    public func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport? {
        // The event id's claim names the report and its week, so only that week's partitions are read.
        var binds = SQLBinds(.postgres)
        var sql = """
            SELECT \(ReportSQL.rawColumns)
            FROM report_event_ids e
            JOIN reports r ON r.id = e.report_id AND r.received_at = e.received_at
            JOIN payloads p ON p.id = r.payload_id AND p.received_at = r.received_at
            WHERE e.event_id = \(binds.bind(eventID.rawValue))
            """
        if let project { sql += " AND e.project_id = \(binds.bind(project.rawValue))" }
        let statement = SQLStatement(sql: sql + " ORDER BY r.id LIMIT 1", values: binds.values)
        return try await database.rows(statement, ReportSQL.raw).first
    }

    public func project(ofIssue issue: IssueID) async throws -> ProjectID? {
        let logger = database.logger
        return try await database.read { connection in
            for try await project in try await connection.query(
                "SELECT project_id FROM issues WHERE id = \(issue.rawValue)", logger: logger
            ).decode(Int64.self) {
                return ProjectID(project)
            }
            return nil
        }
    }

    public func session(project: ProjectID, id: SessionID) async throws -> SessionState? {
        let logger = database.logger
        return try await database.read { connection in
            try await PostgresSessions.state(project: project, id: id, connection, logger)
        }
    }

    /// Counts of stored rows, for operations and tests.
    public func counts() async throws -> (reports: Int, payloads: Int, sessions: Int) {
        let logger = database.logger
        return try await database.read { connection in
            let rows = try await connection.query(
                "SELECT (SELECT count(*) FROM reports), (SELECT count(*) FROM payloads), (SELECT count(*) FROM sessions)",
                logger: logger)
            for try await (reports, payloads, sessions) in rows.decode((Int, Int, Int).self) {
                return (reports, payloads, sessions)
            }
            return (0, 0, 0)
        }
    }

}
