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
    let database: FaultlineDatabase

    public init(database: FaultlineDatabase) {
        self.database = database
    }

    // MARK: Health

    public func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws -> [DailyHealth] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT day, sessions, crashed, abnormal, errored, users, crashed_users FROM health_days
                    WHERE project_id = ? AND release = ? AND day BETWEEN ? AND ? ORDER BY day
                    """,
                arguments: [project.rawValue, release ?? HealthRollup.allReleases, from.rawValue, through.rawValue]
            ).map { DailyHealth(day: DayNumber(rawValue: $0["day"]), health: Self.health($0)) }
        }
    }

    static func health(_ row: Row) -> ReleaseHealth {
        ReleaseHealth(
            sessions: row["sessions"], crashedSessions: row["crashed"], abnormalSessions: row["abnormal"],
            erroredSessions: row["errored"], users: row["users"], crashedUsers: row["crashed_users"])
    }

    public func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow] {
        let today = DayNumber(now)
        return try await database.pool.read { db in
            var recent: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT release, sum(sessions) AS s FROM health_days WHERE project_id = ? AND day >= ? GROUP BY release",
                arguments: [project.rawValue, today.adding(-6).rawValue])
            {
                recent[row["release"]] = row["s"]
            }
            let total = recent[HealthRollup.allReleases] ?? 0
            var newIssues: [String: Int] = [:]
            for row in try Row.fetchAll(
                db,
                sql: "SELECT first_release, count(*) AS n FROM issues WHERE project_id = ? AND first_release IS NOT NULL GROUP BY first_release",
                arguments: [project.rawValue])
            {
                newIssues[row["first_release"]] = row["n"]
            }
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT release, first_seen, last_seen, sessions, crashed, abnormal, errored, users, crashed_users
                    FROM health_releases WHERE project_id = ? ORDER BY first_seen DESC LIMIT ?
                    """,
                arguments: [project.rawValue, PageRequest(limit: limit).limit]
            ).map { row in
                let release: String = row["release"]
                let sessions = recent[release] ?? 0
                return ReleaseRow(
                    release: release, firstSeen: Millis.date(row["first_seen"]), lastSeen: Millis.date(row["last_seen"]),
                    health: Self.health(row), adoption: total > 0 ? Double(sessions) / Double(total) : nil,
                    recentSessions: sessions, newIssues: newIssues[release] ?? 0)
            }
        }
    }

    // MARK: Issues

    public func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws -> [TopIssue] {
        try await database.pool.read { db in
            let top = try db.rows(IssueSQL.top(project: project, window: window, now: now, limit: limit, .sqlite)) {
                try IssueSQL.topIssue($0, now: now)
            }
            // The window before, for the trend arrows: the ranked issues' reports of that window, read from the
            // covering `reports_by_time` like the window itself (looking each up in the table through
            // `reports_by_issue` took 35 ms for the 7 days before at 1 M stored, this 13 ms).
            guard let seconds = window.seconds, !top.isEmpty else { return top }
            let before = IssueSQL.windowBefore(project: project, issues: top.map(\.issue.id), seconds: seconds, now: now, .sqlite)
            return IssueSQL.withPrevious(top, try db.rows(before, IssueSQL.windowCounts))
        }
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        try await database.pool.read { db in
            try db.rows(IssueSQL.page(query, .sqlite)) { try IssueSQL.summary($0, now: now) }
        }
    }

    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        try await database.pool.read { db in
            try db.rows(IssueSQL.page(query, idsOnly: true, .sqlite)) { IssueID(try $0.integer(0)) }
        }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        try await database.pool.read { db in
            try db.rows(IssueSQL.count(query, .sqlite)) { try $0.int(0) }.first ?? 0
        }
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        try await database.pool.read { db in
            guard var detail = try db.rows(IssueSQL.detail(id, project: project, .sqlite), { try IssueSQL.detail($0, now: now) }).first
            else { return nil }
            detail.releases = try Row.fetchAll(
                db, sql: "SELECT release, events, users, first_seen, last_seen FROM issue_releases WHERE issue_id = ? ORDER BY last_seen DESC",
                arguments: [id.rawValue]
            ).map {
                IssueReleaseRow(
                    release: $0["release"], events: $0["events"], users: $0["users"], firstSeen: Millis.date($0["first_seen"]),
                    lastSeen: Millis.date($0["last_seen"]))
            }
            detail.days = try Row.fetchAll(
                db, sql: "SELECT day, events, users FROM issue_days WHERE issue_id = ? AND day >= ? ORDER BY day",
                arguments: [id.rawValue, DayNumber(now).adding(-89).rawValue]
            ).map { IssueDay(day: DayNumber(rawValue: $0["day"]), events: $0["events"], users: $0["users"]) }
            for key in ["device", "os", "environment"] {
                detail.breakdowns[key] = try Row.fetchAll(
                    db, sql: "SELECT value, events FROM issue_tags WHERE issue_id = ? AND key = ? ORDER BY events DESC, value LIMIT 10",
                    arguments: [id.rawValue, key]
                ).map { BreakdownEntry(value: $0["value"], events: $0["events"]) }
            }
            // From the retained reports, never the rollups: those hold keyed hashes, and outlive the reports (RollupUser).
            detail.breakdowns["user"] = try Row.fetchAll(
                db,
                sql: """
                    SELECT user_key, count(*) AS events FROM (
                        SELECT user_key FROM reports WHERE issue_id = ? ORDER BY occurred_at DESC LIMIT ?)
                    WHERE user_key IS NOT NULL GROUP BY user_key ORDER BY events DESC, user_key LIMIT 10
                    """,
                arguments: [id.rawValue, RollupUser.breakdownReports]
            ).map { BreakdownEntry(value: $0["user_key"], events: $0["events"]) }
            detail.samples = try db.rows(ReportSQL.samples(of: id, .sqlite), ReportSQL.summary)
            return detail
        }
    }

    public func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        let statement = IssueSQL.versions(project: project, changedSince: since, .sqlite)
        let versions = try await database.pool.read { db in try db.rows(statement, IssueSQL.idAndVersion) }
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        let statements = IssueSQL.versions(of: ids, project: project, .sqlite)
        let versions = try await database.pool.read { db in try statements.flatMap { try db.rows($0, IssueSQL.idAndVersion) } }
        return Dictionary(versions, uniquingKeysWith: { first, _ in first })
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        try await database.pool.read { db in
            try db.rows(IssueSQL.version(id, project: project, .sqlite)) { try IssueSQL.version($0, at: 0) }.first
        }
    }

    public func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] {
        try await database.pool.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT id FROM issues WHERE project_id = ? AND updated_at >= ? ORDER BY id",
                arguments: [project.rawValue, Millis.from(since)]
            ).map { IssueID($0) }
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
        try await database.pool.read { db in
            var counts: [IssueStatus: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT status, count(*) AS n FROM issues WHERE project_id = ? GROUP BY status", arguments: [project.rawValue])
            {
                if let status = IssueStatus(rawValue: row["status"]) { counts[status] = row["n"] }
            }
            return counts
        }
    }

    public func droppedEvents(project: ProjectID, from: DayNumber) async throws -> [DroppedEvents] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT day, reason, category, quantity FROM client_reports WHERE project_id = ? AND day >= ?
                    ORDER BY day DESC, reason, category
                    """,
                arguments: [project.rawValue, from.rawValue]
            ).map {
                DroppedEvents(day: DayNumber(rawValue: $0["day"]), reason: $0["reason"], category: $0["category"], quantity: $0["quantity"])
            }
        }
    }

    // MARK: State changes

    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String?, at date: Date) async throws -> IssueSummary? {
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
            let select = SQLStatement(sql: "SELECT \(IssueSQL.columns) FROM issues i WHERE i.id = ?1", values: [.integer(issue.rawValue)])
            return try db.rows(select) { try IssueSQL.summary($0, now: date) }.first
        }
    }

    public func setNote(_ note: String?, issue: IssueID, project: ProjectID?, at date: Date) async throws -> Bool {
        try await database.pool.write { db in
            var sql = "UPDATE issues SET note = ?, updated_at = ? WHERE id = ?"
            var arguments: StatementArguments = [note, Millis.from(date), issue.rawValue]
            if let project {
                sql += " AND project_id = ?"
                arguments += [project.rawValue]
            }
            try db.execute(sql: sql, arguments: arguments)
            return db.changesCount == 1
        }
    }
}
