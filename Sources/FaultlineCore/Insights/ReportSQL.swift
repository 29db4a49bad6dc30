/// The report reads both storage engines run, and how their rows become report summaries: written once (see
/// `SQLStatement`). Listings page by keyset (`id < cursor`, newest first), so page N costs what page 1 costs.
public enum ReportSQL {
    /// The columns of a report summary, in the order ``summary(_:)`` reads them.
    public static let columnNames = [
        "id", "project_id", "event_id", "kind", "occurred_at", "received_at", "release", "environment", "user_key",
        "error_type", "error_message", "custom_keys_dropped", "values_truncated", "breadcrumbs_dropped",
        "threads_dropped",
        "frames_dropped", "modules_dropped", "issue_id",
    ]
    /// ``columnNames`` of the reports table `r`, for a select.
    public static let columns = columnNames.map { "r.\($0)" }.joined(separator: ", ")

    /// The columns ``raw(_:)`` reads: the summary, the payload's byte range, then the payload `p`.
    public static let rawColumns =
        "\(columns), r.payload_offset, r.payload_length, p.encoding, p.inflated_size, p.bytes, p.format"

    /// A page of reports matching `query`, newest first (oldest first when it has an `after` cursor).
    public static func listing(_ query: ReportQuery, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        var conditions: [String] = []
        if let project = query.project {
            // With an issue, the project must not pick the index: walking a busy project's reports to find one
            // issue's would cost the project's size, not the page's.
            let column = query.issue == nil ? "r.project_id" : dialect.unindexed("r.project_id")
            conditions.append("\(column) = \(binds.bind(project.rawValue))")
        }
        if let kind = query.kind { conditions.append("r.kind = \(binds.bind(kind.rawValue))") }
        if let release = query.release { conditions.append("r.release = \(binds.bind(release))") }
        if let since = query.since { conditions.append("r.occurred_at >= \(binds.bind(Millis.from(since)))") }
        // Served by `reports_by_issue_id (issue_id, id)`: the issue's rows newest first, no sort.
        if let issue = query.issue { conditions.append("r.issue_id = \(binds.bind(issue.rawValue))") }
        if let before = query.before { conditions.append("r.id < \(binds.bind(before))") }
        if let after = query.after { conditions.append("r.id > \(binds.bind(after))") }
        let whereClause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let order = query.after == nil ? "DESC" : "ASC"
        let sql =
            "SELECT \(columns) FROM reports r \(whereClause) ORDER BY r.id \(order) LIMIT \(binds.bind(query.page.limit))"
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// The newest reports of an issue, for its detail page's samples.
    public static func samples(of issue: IssueID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT \(columns) FROM reports r WHERE r.issue_id = \(binds.bind(issue.rawValue))
            ORDER BY r.occurred_at DESC, r.id DESC LIMIT 10
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A report from a row whose select starts with ``columns``. Nil for an event id or kind this build cannot read.
    public static func summary(_ row: some SQLRow) throws -> ReportSummary? {
        guard let eventID = EventID(try row.text(2)), let kind = ReportKind(rawValue: try row.text(3)) else {
            return nil
        }
        var trimmed = TrimCounts()
        trimmed.customKeysDropped = try row.int(11)
        trimmed.valuesTruncated = try row.int(12)
        trimmed.breadcrumbsDropped = try row.int(13)
        trimmed.threadsDropped = try row.int(14)
        trimmed.framesDropped = try row.int(15)
        trimmed.modulesDropped = try row.int(16)
        return ReportSummary(
            cursor: try row.integer(0), project: ProjectID(try row.integer(1)), eventID: eventID, kind: kind,
            timestamp: try row.date(4), receivedAt: try row.date(5), release: try row.textOrNull(6),
            environment: try row.textOrNull(7), userKey: try row.textOrNull(8), errorType: try row.textOrNull(9),
            errorMessage: try row.textOrNull(10), trimmed: trimmed, issue: try row.integerOrNull(17).map { IssueID($0) }
        )
    }

    /// A stored report from a row of ``rawColumns``. Nil for a summary, encoding or format this build cannot read, or a
    /// byte range that is not one.
    public static func raw(_ row: some SQLRow) throws -> RawReport? {
        let next = columnNames.count
        guard let summary = try summary(row),
            let encoding = StoredPayload.Encoding(rawValue: try row.text(next + 2)),
            let format = StoredPayload.Format(rawValue: try row.text(next + 5))
        else { return nil }
        let offset = try row.int(next)
        let length = try row.int(next + 1)
        guard offset >= 0, length >= 0, offset <= Int.max - length else { return nil }
        return RawReport(
            summary: summary,
            payload: StoredPayload(
                bytes: try row.bytes(next + 4), encoding: encoding, inflatedSize: try row.int(next + 3), format: format),
            range: offset..<(offset + length))
    }

    // MARK: Client reports

    /// What SDKs of `project` dropped before sending (Sentry's client reports), per day from `from` on, newest first.
    public static func droppedEvents(project: ProjectID, from: DayNumber, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT day, reason, category, quantity FROM client_reports
            WHERE project_id = \(binds.bind(project.rawValue)) AND day >= \(binds.bind(from.rawValue))
            ORDER BY day DESC, reason, category
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``droppedEvents(project:from:_:)``.
    public static func droppedEvent(_ row: some SQLRow) throws -> DroppedEvents {
        DroppedEvents(
            day: DayNumber(rawValue: try row.int(0)), reason: try row.text(1), category: try row.text(2),
            quantity: try row.int(3))
    }
}
