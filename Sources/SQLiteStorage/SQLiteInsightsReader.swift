import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issues, release health and alerts on SQLite. Reads rollup tables, or a bounded window of recent reports
/// (top issues of the last 24 h / 7 days) from the covering `reports_by_time` index — never everything stored.
public struct SQLiteInsightsReader: InsightsReader, IssueStateStore, ClientReportReader {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    // MARK: Health

    public func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws
        -> [DailyHealth]
    {
        try await database.rows(
            HealthSQL.days(project: project, release: release, from: from, through: through, .sqlite), HealthSQL.day)
    }

    public func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow] {
        try await database.pool.read { db in
            let counts = HealthSQL.ReleaseCounts(
                recentSessions: try db.rows(
                    HealthSQL.recentSessions(project: project, today: DayNumber(now), .sqlite), HealthSQL.releaseCount),
                newIssues: try db.rows(HealthSQL.newIssues(project: project, .sqlite), HealthSQL.releaseCount))
            return try db.rows(HealthSQL.releases(project: project, limit: limit, .sqlite)) {
                try HealthSQL.release($0, counts)
            }
        }
    }

    // MARK: Issues

    public func topIssues(
        project: ProjectID, window: TopIssueWindow, category: IssueCategory?, now: Date, limit: Int
    ) async throws -> [TopIssue] {
        try await database.pool.read { db in
            let top = try db.rows(
                IssueSQL.top(project: project, window: window, category: category, now: now, limit: limit, .sqlite)
            ) {
                try IssueSQL.topIssue($0, now: now)
            }
            // The window before, for the trend arrows: the ranked issues' reports of that window, read from the
            // covering `reports_by_time` like the window itself (looking each up in the table through
            // `reports_by_issue` took 35 ms for the 7 days before at 1 M stored, this 13 ms).
            guard let seconds = window.seconds, !top.isEmpty else { return top }
            let before = IssueSQL.windowBefore(
                project: project, issues: top.map(\.issue.id), seconds: seconds, now: now, .sqlite)
            return IssueSQL.withPrevious(top, try db.rows(before, IssueSQL.windowCounts))
        }
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        try await database.rows(IssueSQL.page(query, .sqlite)) { try IssueSQL.summary($0, now: now) }
    }

    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        try await database.rows(IssueSQL.page(query, idsOnly: true, .sqlite)) { IssueID(try $0.integer(0)) }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        try await database.rows(IssueSQL.count(query, .sqlite)) { try $0.int(0) }.first ?? 0
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        try await database.pool.read { db in
            guard
                var detail = try db.rows(
                    IssueSQL.detail(id, project: project, .sqlite), { try IssueSQL.detail($0, now: now) }
                ).first
            else { return nil }
            detail.releases = try db.rows(IssueSQL.releases(of: id, .sqlite), IssueSQL.release)
            detail.days = try db.rows(IssueSQL.days(of: id, now: now, .sqlite), IssueSQL.day)
            detail.hours = try db.rows(
                IssueSQL.hours(of: id, project: detail.summary.project, now: now, .sqlite), IssueSQL.hour)
            for key in IssueSQL.breakdownKeys {
                detail.breakdowns[key] = try db.rows(
                    IssueSQL.breakdown(of: id, key: key, .sqlite), IssueSQL.tagBreakdownEntry)
            }
            detail.breakdowns["user"] = try db.rows(IssueSQL.userBreakdown(of: id, .sqlite), IssueSQL.breakdownEntry)
            detail.samples = try db.rows(ReportSQL.samples(of: id, .sqlite), ReportSQL.summary)
            return detail
        }
    }

    public func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        let versions = try await database.rows(
            IssueSQL.versions(project: project, changedSince: since, .sqlite), IssueSQL.idAndVersion)
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        let statements = IssueSQL.versions(of: ids, project: project, .sqlite)
        let versions = try await database.pool.read { db in
            try statements.flatMap { try db.rows($0, IssueSQL.idAndVersion) }
        }
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        try await database.rows(IssueSQL.version(id, project: project, .sqlite)) { try IssueSQL.version($0, at: 0) }
            .first
    }

    public func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] {
        try await database.rows(IssueSQL.changed(project: project, since: since, .sqlite)) {
            IssueID(try $0.integer(0))
        }
    }

    public func alerts(project: ProjectID, limit: Int) async throws -> [Alert] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM alerts WHERE project_id = ? ORDER BY id DESC LIMIT ?",
                arguments: [project.rawValue, PageRequest(limit: limit, bound: PageRequest.maxAlerts).limit]
            ).compactMap(AlertRecords.alert)
        }
    }

    public func issueCounts(project: ProjectID) async throws -> [IssueStatus: Int] {
        Dictionary(
            try await database.rows(IssueSQL.statusCounts(project: project, .sqlite), IssueSQL.statusCount),
            uniquingKeysWith: +)
    }

    public func droppedEvents(project: ProjectID, from: DayNumber) async throws -> [DroppedEvents] {
        try await database.rows(ReportSQL.droppedEvents(project: project, from: from, .sqlite), ReportSQL.droppedEvent)
    }

    // MARK: State changes

    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String?, at date: Date)
        async throws -> IssueSummary?
    {
        try await database.pool.write { db in
            var sql = """
                UPDATE issues SET status = ?, regressed = CASE WHEN ? = 'muted' THEN regressed ELSE 0 END,
                    status_changed_at = ?, status_changed_by = ?, updated_at = ? WHERE id = ?
                """
            var arguments: StatementArguments = [
                status.rawValue, status.rawValue, Millis.from(date), by, Millis.from(date), issue.rawValue,
            ]
            if let project {
                sql += " AND project_id = ?"
                arguments += [project.rawValue]
            }
            try db.execute(sql: sql, arguments: arguments)
            guard db.changesCount == 1 else { return nil }
            let select = SQLStatement(
                sql: "SELECT \(IssueSQL.columns) FROM issues i WHERE i.id = ?1", values: [.integer(issue.rawValue)])
            return try db.rows(select) { try IssueSQL.summary($0, now: date) }.first
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
        try await database.pool.write { db in
            var sql = "UPDATE issues SET \(column) = ?, updated_at = ? WHERE id = ?"
            var arguments: StatementArguments = [value, Millis.from(date), issue.rawValue]
            if let project {
                sql += " AND project_id = ?"
                arguments += [project.rawValue]
            }
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount == 1
        }
    }
}
