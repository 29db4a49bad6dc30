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
    let database: FaultlineDatabase

    public init(database: FaultlineDatabase) {
        self.database = database
    }


    /// The SQL and arguments of a listing.
    static func listing(_ query: ReportQuery) -> (String, StatementArguments) {
        var conditions: [String] = []
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let project = query.project {
            // With an issue, the unary `+` keeps SQLite off `reports_by_project`: walking a busy project's
            // reports to find one issue's would cost the project's size, not the page's.
            conditions.append(query.issue == nil ? "r.project_id = ?" : "+r.project_id = ?")
            arguments.append(project.rawValue)
        }
        if let kind = query.kind {
            conditions.append("r.kind = ?")
            arguments.append(kind.rawValue)
        }
        if let release = query.release {
            conditions.append("r.release = ?")
            arguments.append(release)
        }
        if let since = query.since {
            conditions.append("r.occurred_at >= ?")
            arguments.append(Millis.from(since))
        }
        if let issue = query.issue {
            // Served by `reports_by_issue_id (issue_id, id)`: the issue's rows newest first, no sort.
            conditions.append("r.issue_id = ?")
            arguments.append(issue.rawValue)
        }
        if let before = query.before {
            conditions.append("r.id < ?")
            arguments.append(before)
        }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT \(Self.summaryColumns) FROM reports r \(whereClause) ORDER BY r.id DESC LIMIT ?"
        arguments.append(max(1, min(query.limit, 501)))
        return (sql, StatementArguments(arguments))
    }

    public func reports(matching query: ReportQuery) async throws -> [ReportSummary] {
        let (sql, args) = Self.listing(query)
        return try await database.pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: args).compactMap(Self.summary)
        }
    }

    /// SQLite's plan for a listing (`EXPLAIN QUERY PLAN`, one line per step), for tests that pin the index used.
    public func queryPlan(_ query: ReportQuery) async throws -> [String] {
        let (sql, args) = Self.listing(query)
        return try await database.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: args).map { $0["detail"] as String }
        }
    }

    public func project(ofIssue issue: IssueID) async throws -> ProjectID? {
        try await database.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT project_id FROM issues WHERE id = ?", arguments: [issue.rawValue]).map { ProjectID($0) }
        }
    }

    public func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport? {
        var sql = """
            SELECT \(Self.rawColumns) FROM reports r JOIN payloads p ON p.id = r.payload_id WHERE r.event_id = ?
            """
        var arguments: [(any DatabaseValueConvertible)?] = [eventID.rawValue]
        if let project {
            sql += " AND r.project_id = ?"
            arguments.append(project.rawValue)
        }
        sql += " ORDER BY r.id LIMIT 1"
        let args = StatementArguments(arguments)
        let finalSQL = sql
        return try await database.pool.read { db in
            try Row.fetchOne(db, sql: finalSQL, arguments: args).flatMap(Self.raw)
        }
    }

    /// The columns `raw(_:)` reads: the summary, the byte range and the payload.
    static let rawColumns = "\(summaryColumns), r.payload_offset, r.payload_length, p.encoding, p.inflated_size, p.bytes, p.format"

    /// A raw report from a row of `rawColumns` (reports `r` joined with payloads `p`).
    static func raw(_ row: Row) -> RawReport? {
        guard let summary = summary(row), let encoding = StoredPayload.Encoding(rawValue: row["encoding"]),
            let format = StoredPayload.Format(rawValue: row["format"])
        else { return nil }
        let offset: Int = row["payload_offset"]
        let length: Int = row["payload_length"]
        let bytes: Data = row["bytes"]
        return RawReport(
            summary: summary,
            payload: StoredPayload(bytes: Array(bytes), encoding: encoding, inflatedSize: row["inflated_size"], format: format),
            range: offset..<(offset + length))
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

    /// The columns of a report summary in a select, in order: `summary` reads them by position.
    static let summaryColumnNames = [
        "id", "project_id", "event_id", "kind", "occurred_at", "received_at", "release", "environment", "user_key",
        "error_type", "error_message", "custom_keys_dropped", "values_truncated", "breadcrumbs_dropped", "threads_dropped",
        "frames_dropped", "modules_dropped", "issue_id",
    ]
    /// `summaryColumnNames` of the reports table `r`, for a select.
    static let summaryColumns = summaryColumnNames.map { "r.\($0)" }.joined(separator: ", ")

    /// A report from a row whose select starts with `summaryColumns`. Read by position, as
    /// `SQLiteInsightsReader.summary` is and for the same reason (the worker reads one per report); debug builds
    /// check the names at each call.
    static func summary(_ row: Row) -> ReportSummary? {
        assert(Array(row.columnNames.prefix(summaryColumnNames.count)) == summaryColumnNames, "a select without summaryColumns first")
        guard let eventID = EventID(row[2]), let kind = ReportKind(rawValue: row[3]) else { return nil }
        var trimmed = TrimCounts()
        trimmed.customKeysDropped = row[11]
        trimmed.valuesTruncated = row[12]
        trimmed.breadcrumbsDropped = row[13]
        trimmed.threadsDropped = row[14]
        trimmed.framesDropped = row[15]
        trimmed.modulesDropped = row[16]
        return ReportSummary(
            cursor: row[0], project: ProjectID(row[1]), eventID: eventID, kind: kind,
            timestamp: Millis.date(row[4]), receivedAt: Millis.date(row[5]),
            release: row[6], environment: row[7], userKey: row[8],
            errorType: row[9], errorMessage: row[10], trimmed: trimmed,
            issue: (row[17] as Int64?).map { IssueID($0) })
    }
}
