import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Report and session reads on SQLite. Listings page by keyset (`id < cursor`), so page N costs the
/// same as page 1 however many reports are stored.
public struct SQLiteReportReader: ReportReader, SessionReader {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func reports(matching query: ReportQuery) async throws -> [ReportSummary] {
        try await database.rows(ReportSQL.listing(query, .sqlite), ReportSQL.summary)
    }

    /// SQLite's plan for a listing (`EXPLAIN QUERY PLAN`, one line per step), for tests that pin the index used.
    public func queryPlan(_ query: ReportQuery) async throws -> [String] {
        let listing = ReportSQL.listing(query, .sqlite)
        return try await database.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + listing.sql, arguments: StatementArguments(listing)).map {
                $0["detail"] as String
            }
        }
    }

    public func project(ofIssue issue: IssueID) async throws -> ProjectID? {
        try await database.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT project_id FROM issues WHERE id = ?", arguments: [issue.rawValue]).map {
                ProjectID($0)
            }
        }
    }

    public func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport? {
        var binds = SQLBinds(.sqlite)
        var sql = """
            SELECT \(ReportSQL.rawColumns) FROM reports r JOIN payloads p ON p.id = r.payload_id
            WHERE r.event_id = \(binds.bind(eventID.rawValue))
            """
        if let project { sql += " AND r.project_id = \(binds.bind(project.rawValue))" }
        let statement = SQLStatement(sql: sql + " ORDER BY r.id LIMIT 1", values: binds.values)
        return try await database.rows(statement, ReportSQL.raw).first
    }

    public func session(project: ProjectID, id: SessionID) async throws -> SessionState? {
        try await database.pool.read { db in
            try SessionRecord.fetchOne(db, key: ["project_id": project.rawValue, "session_id": id.rawValue])?.state
        }
    }

    /// Counts of stored rows, for operations and tests.
    public func counts() async throws -> (reports: Int, payloads: Int, sessions: Int) {
        try await database.pool.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM reports") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM payloads") ?? 0,
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sessions") ?? 0
            )
        }
    }

}
