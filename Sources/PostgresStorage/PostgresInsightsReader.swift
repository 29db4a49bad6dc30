import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issues, release health and alerts on PostgreSQL (the twin of `SQLiteInsightsReader`): reads rollup tables, or a
/// bounded window of recent reports (top issues of the last 24 hours or 7 days) from the covering `reports_by_time`
/// index, never everything stored; the issue-state changes of the dashboard, CLI and API; and the events SDKs dropped.
public struct PostgresInsightsReader: InsightsReader, IssueStateStore, ClientReportReader {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    // MARK: Health

    public func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws
        -> [DailyHealth]
    {
        try await database.rows(
            HealthSQL.days(project: project, release: release, from: from, through: through, .postgres), HealthSQL.day)
    }

    public func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow] {
        let logger = database.logger
        return try await database.read { connection in
            let counts = HealthSQL.ReleaseCounts(
                recentSessions: try await connection.rows(
                    HealthSQL.recentSessions(project: project, today: DayNumber(now), .postgres), logger: logger,
                    HealthSQL.releaseCount),
                newIssues: try await connection.rows(
                    HealthSQL.newIssues(project: project, .postgres), logger: logger, HealthSQL.releaseCount))
            return try await connection.rows(
                HealthSQL.releases(project: project, limit: limit, .postgres), logger: logger
            ) {
                try HealthSQL.release($0, counts)
            }
        }
    }

    // MARK: Issues

    public func topIssues(
        project: ProjectID, window: TopIssueWindow, category: IssueCategory?, now: Date, limit: Int
    ) async throws -> [TopIssue] {
        let logger = database.logger
        return try await database.read { connection in
            let top = try await connection.rows(
                IssueSQL.top(project: project, window: window, category: category, now: now, limit: limit, .postgres),
                logger: logger
            ) { try IssueSQL.topIssue($0, now: now) }
            // The window before, for the trend arrows: the ranked issues' reports of that window.
            guard let seconds = window.seconds, !top.isEmpty else { return top }
            let before = IssueSQL.windowBefore(
                project: project, issues: top.map(\.issue.id), seconds: seconds, now: now, .postgres)
            return IssueSQL.withPrevious(top, try await connection.rows(before, logger: logger, IssueSQL.windowCounts))
        }
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        try await database.rows(IssueSQL.page(query, .postgres)) { try IssueSQL.summary($0, now: now) }
    }

    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        try await database.rows(IssueSQL.page(query, idsOnly: true, .postgres)) { IssueID(try $0.integer(0)) }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        try await database.rows(IssueSQL.count(query, .postgres)) { try $0.int(0) }.first ?? 0
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        let logger = database.logger
        return try await database.read { connection -> IssueDetail? in
            func rows<Value>(_ statement: SQLStatement, _ map: (PostgresRowCells) throws -> Value?) async throws
                -> [Value]
            {
                try await connection.rows(statement, logger: logger, map)
            }
            guard
                var detail = try await rows(
                    IssueSQL.detail(id, project: project, .postgres), { try IssueSQL.detail($0, now: now) }
                ).first
            else { return nil }
            detail.releases = try await rows(IssueSQL.releases(of: id, .postgres), IssueSQL.release)
            detail.days = try await rows(IssueSQL.days(of: id, now: now, .postgres), IssueSQL.day)
            detail.hours = try await rows(
                IssueSQL.hours(of: id, project: detail.summary.project, now: now, .postgres), IssueSQL.hour)
            for key in IssueSQL.breakdownKeys {
                detail.breakdowns[key] = try await rows(
                    IssueSQL.breakdown(of: id, key: key, .postgres), IssueSQL.tagBreakdownEntry)
            }
            detail.breakdowns["user"] = try await rows(
                IssueSQL.userBreakdown(of: id, .postgres), IssueSQL.breakdownEntry)
            detail.samples = try await rows(ReportSQL.samples(of: id, .postgres), ReportSQL.summary)
            return detail
        }
    }

    public func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        try await versions([IssueSQL.versions(project: project, changedSince: since, .postgres)])
    }

    public func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        try await versions(IssueSQL.versions(of: ids, project: project, .postgres))
    }

    /// The versions `statements` read.
    private func versions(_ statements: [SQLStatement]) async throws -> [IssueID: IssueVersion] {
        let logger = database.logger
        let versions = try await database.read { connection in
            var versions: [(IssueID, IssueVersion)] = []
            for statement in statements {
                versions += try await connection.rows(statement, logger: logger, IssueSQL.idAndVersion)
            }
            return versions
        }
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        try await database.rows(IssueSQL.version(id, project: project, .postgres)) { try IssueSQL.version($0, at: 0) }
            .first
    }

    public func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] {
        try await database.rows(IssueSQL.changed(project: project, since: since, .postgres)) {
            IssueID(try $0.integer(0))
        }
    }

    public func alerts(project: ProjectID, limit: Int) async throws -> [Alert] {
        let logger = database.logger
        return try await database.read { connection in
            try await PostgresAlertRecords.alerts(
                connection.query(
                    """
                    SELECT \(unescaped: PostgresAlertRecords.columns) FROM alerts WHERE project_id = \(project.rawValue)
                    ORDER BY id DESC LIMIT \(Int64(PageRequest(limit: limit, bound: PageRequest.maxAlerts).limit))
                    """, logger: logger))
        }
    }

    public func issueCounts(project: ProjectID) async throws -> [IssueStatus: Int] {
        Dictionary(
            try await database.rows(IssueSQL.statusCounts(project: project, .postgres), IssueSQL.statusCount),
            uniquingKeysWith: +)
    }

    /// Sentry's client reports: what SDKs dropped before sending, per day, reason and category.
    public func droppedEvents(project: ProjectID, from: DayNumber) async throws -> [DroppedEvents] {
        try await database.rows(
            ReportSQL.droppedEvents(project: project, from: from, .postgres), ReportSQL.droppedEvent)
    }

    // MARK: State changes

    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String?, at date: Date)
        async throws -> IssueSummary?
    {
        var arguments = PostgresArguments()
        let now = Millis.from(date)
        var sql = """
            UPDATE issues i SET status = \(arguments.bind(status.rawValue)),
                regressed = CASE WHEN \(arguments.bind(status.rawValue)) = 'muted' THEN regressed ELSE false END,
                status_changed_at = \(arguments.bind(now)), status_changed_by = \(by.map { arguments.bind($0) } ?? "NULL"),
                updated_at = \(arguments.bind(now))
            WHERE i.id = \(arguments.bind(issue.rawValue))
            """
        if let project { sql += " AND i.project_id = \(arguments.bind(project.rawValue))" }
        sql += " RETURNING \(IssueSQL.columns)"
        let statement = arguments.query(sql)
        let logger = database.logger
        return try await database.write { connection in
            for try await row in try await connection.query(statement, logger: logger) {
                return try IssueSQL.summary(PostgresRowCells(row), now: date)
            }
            return nil
        }
    }

    public func setNote(_ note: String?, issue: IssueID, project: ProjectID?, at date: Date) async throws -> Bool {
        try await setText("note", note, issue: issue, project: project, at: date)
    }

    public func setTrackerURL(_ url: String?, issue: IssueID, project: ProjectID?, at date: Date) async throws -> Bool {
        try await setText("tracker_url", url, issue: issue, project: project, at: date)
    }

    /// Sets a text column the team writes (`note`, `tracker_url`) and the issue's change time; whether the issue (of
    /// `project`, when given) exists. `column` is one of ours, never input.
    private func setText(_ column: String, _ value: String?, issue: IssueID, project: ProjectID?, at date: Date)
        async throws -> Bool
    {
        var arguments = PostgresArguments()
        var sql = """
            UPDATE issues SET \(column) = \(value.map { arguments.bind($0) } ?? "NULL"), updated_at = \(arguments.bind(Millis.from(date)))
            WHERE id = \(arguments.bind(issue.rawValue))
            """
        if let project { sql += " AND project_id = \(arguments.bind(project.rawValue))" }
        sql += " RETURNING 1"
        let statement = arguments.query(sql)
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(connection.query(statement, logger: logger)) == 1
        }
    }
}
