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
        var arguments = PostgresArguments()
        var conditions: [String] = []
        if let project = query.project { conditions.append("r.project_id = \(arguments.bind(project.rawValue))") }
        if let kind = query.kind { conditions.append("r.kind = \(arguments.bind(kind.rawValue))") }
        if let release = query.release { conditions.append("r.release = \(arguments.bind(release))") }
        if let since = query.since { conditions.append("r.occurred_at >= \(arguments.bind(Millis.from(since)))") }
        if let issue = query.issue { conditions.append("r.issue_id = \(arguments.bind(issue.rawValue))") }
        if let before = query.before { conditions.append("r.id < \(arguments.bind(before))") }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let limit = arguments.bind(Int64(max(1, min(query.limit, 501))))
        let logger = database.logger
        let statement = arguments.query("SELECT \(Self.summaryColumns) FROM reports r \(whereClause) ORDER BY r.id DESC LIMIT \(limit)")
        return try await database.read { connection in
            var summaries: [ReportSummary] = []
            for try await row in try await connection.query(statement, logger: logger) {
                if let summary = try Self.summary(row.makeRandomAccess()) { summaries.append(summary) }
            }
            return summaries
        }
    }

    public func rawReport(eventID: EventID, project: ProjectID?) async throws -> RawReport? {
        // The event id's claim names the report and its week, so only that week's partitions are read.
        var sql = """
            SELECT \(Self.summaryColumns), r.payload_offset, r.payload_length, p.encoding, p.inflated_size, p.bytes, p.format
            FROM report_event_ids e
            JOIN reports r ON r.id = e.report_id AND r.received_at = e.received_at
            JOIN payloads p ON p.id = r.payload_id AND p.received_at = r.received_at
            WHERE e.event_id = $1
            """
        var binds = PostgresBindings()
        binds.append(eventID.rawValue)
        if let project {
            sql += " AND e.project_id = $2"
            binds.append(project.rawValue)
        }
        sql += " ORDER BY r.id LIMIT 1"
        let logger = database.logger
        let statement = PostgresQuery(unsafeSQL: sql, binds: binds)
        return try await database.read { connection in
            for try await row in try await connection.query(statement, logger: logger) {
                let cells = row.makeRandomAccess()
                let count = Self.summaryColumnNames.count
                guard let summary = try Self.summary(cells),
                      let encoding = StoredPayload.Encoding(rawValue: try cells[count + 2].decode(String.self)),
                      let format = StoredPayload.Format(rawValue: try cells[count + 5].decode(String.self)),
                      let offset = Int(exactly: try cells[count].decode(Int64.self)),
                      let length = Int(exactly: try cells[count + 1].decode(Int64.self)),
                      let inflated = Int(exactly: try cells[count + 3].decode(Int64.self)),
                      offset <= Int.max - length
                else { return nil }
                let bytes = try cells[count + 4].decode(Data.self)
                return RawReport(
                    summary: summary,
                    payload: StoredPayload(bytes: Array(bytes), encoding: encoding, inflatedSize: inflated, format: format),
                    range: offset..<(offset + length))
            }
            return nil
        }
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

    /// The columns of a report summary in a select, in order: `summary` reads them by position.
    static let summaryColumnNames = [
        "id", "project_id", "event_id", "kind", "occurred_at", "received_at", "release", "environment", "user_key",
        "error_type", "error_message", "custom_keys_dropped", "values_truncated", "breadcrumbs_dropped", "threads_dropped",
        "frames_dropped", "modules_dropped", "issue_id",
    ]
    static let summaryColumns = summaryColumnNames.map { "r.\($0)" }.joined(separator: ", ")

    static func summary(_ cells: PostgresRandomAccessRow) throws -> ReportSummary? {
        guard let eventID = EventID(try cells[2].decode(String.self)), let kind = ReportKind(rawValue: try cells[3].decode(String.self))
        else { return nil }
        var trimmed = TrimCounts()
        trimmed.customKeysDropped = try cells[11].decode(Int.self)
        trimmed.valuesTruncated = try cells[12].decode(Int.self)
        trimmed.breadcrumbsDropped = try cells[13].decode(Int.self)
        trimmed.threadsDropped = try cells[14].decode(Int.self)
        trimmed.framesDropped = try cells[15].decode(Int.self)
        trimmed.modulesDropped = try cells[16].decode(Int.self)
        return ReportSummary(
            cursor: try cells[0].decode(Int64.self), project: ProjectID(try cells[1].decode(Int64.self)), eventID: eventID, kind: kind,
            timestamp: Millis.date(try cells[4].decode(Int64.self)), receivedAt: Millis.date(try cells[5].decode(Int64.self)),
            release: try cells[6].decode(String?.self), environment: try cells[7].decode(String?.self),
            userKey: try cells[8].decode(String?.self), errorType: try cells[9].decode(String?.self),
            errorMessage: try cells[10].decode(String?.self), trimmed: trimmed,
            issue: try cells[17].decode(Int64?.self).map { IssueID($0) })
    }
}
