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

    typealias HealthColumns = (Int, Int, Int, Int, Int, Int)

    static func health(_ c: HealthColumns) -> ReleaseHealth {
        ReleaseHealth(sessions: c.0, crashedSessions: c.1, abnormalSessions: c.2, erroredSessions: c.3, users: c.4, crashedUsers: c.5)
    }

    public func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws -> [DailyHealth] {
        let logger = database.logger
        return try await database.read { connection in
            var days: [DailyHealth] = []
            for try await (day, s, c, a, e, u, cu) in try await connection.query(
                """
                SELECT day, sessions, crashed, abnormal, errored, users, crashed_users FROM health_days
                WHERE project_id = \(project.rawValue) AND release = \(release ?? PostgresHealthRollup.allReleases)
                    AND day BETWEEN \(from.rawValue) AND \(through.rawValue) ORDER BY day
                """, logger: logger
            ).decode((Int, Int, Int, Int, Int, Int, Int).self) {
                days.append(DailyHealth(day: DayNumber(rawValue: day), health: Self.health((s, c, a, e, u, cu))))
            }
            return days
        }
    }

    public func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow] {
        let today = DayNumber(now)
        let logger = database.logger
        return try await database.read { connection in
            var recent: [String: Int] = [:]
            for try await (release, sessions) in try await connection.query(
                """
                SELECT release, sum(sessions)::bigint FROM health_days WHERE project_id = \(project.rawValue)
                    AND day >= \(today.adding(-6).rawValue) GROUP BY release
                """, logger: logger
            ).decode((String, Int).self) {
                recent[release] = sessions
            }
            let total = recent[PostgresHealthRollup.allReleases] ?? 0
            var newIssues: [String: Int] = [:]
            for try await (release, count) in try await connection.query(
                """
                SELECT first_release, count(*) FROM issues WHERE project_id = \(project.rawValue) AND first_release IS NOT NULL
                GROUP BY first_release
                """, logger: logger
            ).decode((String, Int).self) {
                newIssues[release] = count
            }
            var rows: [ReleaseRow] = []
            for try await (release, first, last, s, c, a, e, u, cu) in try await connection.query(
                """
                SELECT release, first_seen, last_seen, sessions, crashed, abnormal, errored, users, crashed_users
                FROM health_releases WHERE project_id = \(project.rawValue) ORDER BY first_seen DESC LIMIT \(Int64(PageRequest(limit: limit).limit))
                """, logger: logger
            ).decode((String, Int64, Int64, Int, Int, Int, Int, Int, Int).self) {
                let sessions = recent[release] ?? 0
                rows.append(ReleaseRow(
                    release: release, firstSeen: Millis.date(first), lastSeen: Millis.date(last), health: Self.health((s, c, a, e, u, cu)),
                    adoption: total > 0 ? Double(sessions) / Double(total) : nil, recentSessions: sessions,
                    newIssues: newIssues[release] ?? 0))
            }
            return rows
        }
    }

    // MARK: Issues

    public func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws -> [TopIssue] {
        let logger = database.logger
        return try await database.read { connection in
            let top = try await connection.rows(
                IssueSQL.top(project: project, window: window, now: now, limit: limit, .postgres), logger: logger
            ) { try IssueSQL.topIssue($0, now: now) }
            // The window before, for the trend arrows: the ranked issues' reports of that window.
            guard let seconds = window.seconds, !top.isEmpty else { return top }
            let before = IssueSQL.windowBefore(project: project, issues: top.map(\.issue.id), seconds: seconds, now: now, .postgres)
            return IssueSQL.withPrevious(top, try await connection.rows(before, logger: logger, IssueSQL.windowCounts))
        }
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        let logger = database.logger
        return try await database.read { connection in
            try await connection.rows(IssueSQL.page(query, .postgres), logger: logger) { try IssueSQL.summary($0, now: now) }
        }
    }

    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        let logger = database.logger
        return try await database.read { connection in
            try await connection.rows(IssueSQL.page(query, idsOnly: true, .postgres), logger: logger) { IssueID(try $0.integer(0)) }
        }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        let logger = database.logger
        return try await database.read { connection in
            try await connection.rows(IssueSQL.count(query, .postgres), logger: logger) { try $0.int(0) }.first ?? 0
        }
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        let logger = database.logger
        return try await database.read { connection -> IssueDetail? in
            guard var detail = try await connection.rows(
                IssueSQL.detail(id, project: project, .postgres), logger: logger, { try IssueSQL.detail($0, now: now) }
            ).first else { return nil }
            for try await (release, events, users, first, last) in try await connection.query(
                "SELECT release, events, users, first_seen, last_seen FROM issue_releases WHERE issue_id = \(id.rawValue) ORDER BY last_seen DESC",
                logger: logger
            ).decode((String, Int, Int, Int64, Int64).self) {
                detail.releases.append(
                    IssueReleaseRow(release: release, events: events, users: users, firstSeen: Millis.date(first), lastSeen: Millis.date(last)))
            }
            for try await (day, events, users) in try await connection.query(
                """
                SELECT day, events, users FROM issue_days WHERE issue_id = \(id.rawValue) AND day >= \(DayNumber(now).adding(-89).rawValue)
                ORDER BY day
                """, logger: logger
            ).decode((Int, Int, Int).self) {
                detail.days.append(IssueDay(day: DayNumber(rawValue: day), events: events, users: users))
            }
            for key in ["device", "os", "environment"] {
                var entries: [BreakdownEntry] = []
                for try await (value, events) in try await connection.query(
                    """
                    SELECT value, events FROM issue_tags WHERE issue_id = \(id.rawValue) AND key = \(key) ORDER BY events DESC, value LIMIT 10
                    """, logger: logger
                ).decode((String, Int).self) {
                    entries.append(BreakdownEntry(value: value, events: events))
                }
                detail.breakdowns[key] = entries
            }
            var users: [BreakdownEntry] = []
            // From the retained reports, never the rollups: those hold keyed hashes, and outlive the reports (RollupUser).
            for try await (user, events) in try await connection.query(
                """
                SELECT user_key, count(*) AS events FROM (
                    SELECT user_key FROM reports WHERE issue_id = \(id.rawValue) ORDER BY occurred_at DESC LIMIT \(RollupUser.breakdownReports)) r
                WHERE user_key IS NOT NULL GROUP BY user_key ORDER BY events DESC, user_key COLLATE "C" LIMIT 10
                """,
                logger: logger
            ).decode((String, Int).self) {
                users.append(BreakdownEntry(value: user, events: events))
            }
            detail.breakdowns["user"] = users
            detail.samples = try await connection.rows(ReportSQL.samples(of: id, .postgres), logger: logger, ReportSQL.summary)
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
            for statement in statements { versions += try await connection.rows(statement, logger: logger, IssueSQL.idAndVersion) }
            return versions
        }
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        let logger = database.logger
        return try await database.read { connection in
            try await connection.rows(IssueSQL.version(id, project: project, .postgres), logger: logger) { try IssueSQL.version($0, at: 0) }
                .first
        }
    }

    public func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] {
        let logger = database.logger
        return try await database.read { connection in
            var ids: [IssueID] = []
            for try await id in try await connection.query(
                "SELECT id FROM issues WHERE project_id = \(project.rawValue) AND updated_at >= \(Millis.from(since)) ORDER BY id",
                logger: logger
            ).decode(Int64.self) {
                ids.append(IssueID(id))
            }
            return ids
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
        let logger = database.logger
        return try await database.read { connection in
            var counts: [IssueStatus: Int] = [:]
            for try await (status, count) in try await connection.query(
                "SELECT status, count(*) FROM issues WHERE project_id = \(project.rawValue) GROUP BY status", logger: logger
            ).decode((String, Int).self) {
                if let status = IssueStatus(rawValue: status) { counts[status] = count }
            }
            return counts
        }
    }

    /// Sentry's client reports: what SDKs dropped before sending, per day, reason and category.
    public func droppedEvents(project: ProjectID, from: DayNumber) async throws -> [DroppedEvents] {
        let logger = database.logger
        return try await database.read { connection in
            var out: [DroppedEvents] = []
            for try await (day, reason, category, quantity) in try await connection.query(
                """
                SELECT day, reason, category, quantity FROM client_reports WHERE project_id = \(project.rawValue) AND day >= \(from.rawValue)
                ORDER BY day DESC, reason, category
                """, logger: logger
            ).decode((Int, String, String, Int).self) {
                out.append(DroppedEvents(day: DayNumber(rawValue: day), reason: reason, category: category, quantity: quantity))
            }
            return out
        }
    }

    // MARK: State changes

    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String?, at date: Date) async throws -> IssueSummary? {
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
        var arguments = PostgresArguments()
        var sql = """
            UPDATE issues SET note = \(note.map { arguments.bind($0) } ?? "NULL"), updated_at = \(arguments.bind(Millis.from(date)))
            WHERE id = \(arguments.bind(issue.rawValue))
            """
        if let project { sql += " AND project_id = \(arguments.bind(project.rawValue))" }
        sql += " RETURNING 1"
        let statement = arguments.query(sql)
        let logger = database.logger
        return try await database.write { connection in try await PostgresRows.count(connection.query(statement, logger: logger)) == 1 }
    }
}
