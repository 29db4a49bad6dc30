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
                arguments: [project.rawValue, max(1, limit)]
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

    /// The columns of an issue in a select, in order: `summary` reads them by position.
    static let issueColumnNames = [
        "id", "project_id", "kind", "fingerprint", "title", "culprit", "status", "regressed", "first_seen", "last_seen",
        "first_release", "last_release", "events", "users", "repeat_users", "early_events", "timed_events",
    ]
    /// `issueColumnNames` of the issues table `i`, for a select.
    static let issueColumns = issueColumnNames.map { "i.\($0)" }.joined(separator: ", ")

    /// An issue from a row whose select starts with `issueColumns` (or the same names, as a release listing's).
    ///
    /// Read by position, not by name: GRDB's lookup by name lowercases the name on every call, which was ~3 % of the
    /// worker's CPU and of every issue list read. Debug builds (the tests) check the names at each call.
    static func summary(_ row: Row, now: Date) -> IssueSummary? {
        assert(Array(row.columnNames.prefix(issueColumnNames.count)) == issueColumnNames, "a select without issueColumns first")
        guard let kind = ReportKind(rawValue: row[2]), let status = IssueStatus(rawValue: row[6]),
              let fingerprint = Fingerprint(row[3] as String) else { return nil }
        let firstSeen = Millis.date(row[8])
        let regressed: Bool = row[7]
        return IssueSummary(
            id: IssueID(row[0] as Int64), project: ProjectID(row[1] as Int64), kind: kind, fingerprint: fingerprint,
            title: row[4], culprit: row[5], status: status,
            signals: IssueSignals.compute(
                firstSeen: firstSeen, regressed: regressed, repeatUsers: row[14], earlyEvents: row[15], timedEvents: row[16],
                now: now),
            firstSeen: firstSeen, lastSeen: Millis.date(row[9]), firstRelease: row[10], lastRelease: row[11], events: row[12],
            users: row[13])
    }

    public func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws -> [TopIssue] {
        let limit = max(1, min(limit, 500))
        // The length of a recent window (and of the window before it, for the trend arrows).
        let seconds: Double = window == .last24Hours ? 86_400 : 7 * 86_400
        return try await database.pool.read { db in
            let rows: [Row]
            switch window {
            case .release(let release):
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT \(Self.issueColumns), ir.users AS window_users, ir.events AS window_events
                        FROM issue_releases ir JOIN issues i ON i.id = ir.issue_id
                        WHERE ir.release = ? AND i.project_id = ?
                        ORDER BY ir.users DESC, ir.events DESC, i.id LIMIT ?
                        """,
                    arguments: [release, project.rawValue, limit])
            case .last24Hours, .last7Days:
                rows = try Row.fetchAll(
                    db, sql: Self.recentTopIssuesSQL,
                    arguments: [project.rawValue, Millis.from(now.addingTimeInterval(-seconds)), Millis.from(now), limit])
            }
            var top = rows.compactMap { row in
                Self.summary(row, now: now).map { TopIssue(issue: $0, users: row["window_users"], events: row["window_events"]) }
            }
            if window != .last24Hours && window != .last7Days { return top }
            // The window before, for the trend arrows: the ranked issues' reports of that window, read from the
            // covering `reports_by_time` like the window itself (looking each up in the table through
            // `reports_by_issue` took 35 ms for the 7 days before at 1 M stored, this 13 ms).
            guard !top.isEmpty else { return top }
            let from = Millis.from(now.addingTimeInterval(-2 * seconds))
            let to = Millis.from(now.addingTimeInterval(-seconds))
            var arguments: StatementArguments = [project.rawValue, from, to]
            for issue in top { arguments += [issue.issue.id.rawValue] }
            var before: [Int64: TopIssue.Counts] = [:]
            for row in try Row.fetchAll(db, sql: Self.windowBeforeSQL(issues: top.count), arguments: arguments) {
                before[row[0]] = TopIssue.Counts(users: row[1], events: row[2])
            }
            for index in top.indices {
                top[index].previous = before[top[index].issue.id.rawValue] ?? TopIssue.Counts(users: 0, events: 0)
            }
            return top
        }
    }

    /// The top issues of a recent window (arguments: project, from, through, limit): each issue's distinct users and
    /// reports in it, counted from the covering index `reports_by_time (project_id, occurred_at, issue_id, user_key)`
    /// alone, never from the table's rows.
    static let recentTopIssuesSQL = """
        WITH w AS (
            SELECT issue_id, count(DISTINCT user_key) AS window_users, count(*) AS window_events
            FROM reports WHERE project_id = ? AND occurred_at >= ? AND occurred_at <= ? AND issue_id IS NOT NULL
            GROUP BY issue_id
            ORDER BY window_users DESC, window_events DESC, issue_id LIMIT ?)
        SELECT \(issueColumns), w.window_users, w.window_events FROM w JOIN issues i ON i.id = w.issue_id
        ORDER BY w.window_users DESC, w.window_events DESC, i.id
        """

    /// Distinct users and reports of `issues` ids in a window (arguments: project, from, before, then the ids), from
    /// the covering index `reports_by_time` alone.
    static func windowBeforeSQL(issues: Int) -> String {
        let marks = Array(repeating: "?", count: max(1, issues)).joined(separator: ", ")
        return """
            SELECT issue_id, count(DISTINCT user_key), count(*) FROM reports
            WHERE project_id = ? AND occurred_at >= ? AND occurred_at < ? AND issue_id IN (\(marks))
            GROUP BY issue_id
            """
    }

    /// The `FROM … WHERE …` of an issue listing and its arguments. A release filter joins the issue's row of that
    /// release, whose events, users and last seen then stand in for the issue's totals (columns `events`, `users`,
    /// `last_seen` of the select); `project_id` always limits the issues, so one project never lists another's.
    static func listing(_ query: IssueQuery) -> (columns: String, from: String, arguments: [(any DatabaseValueConvertible)?]) {
        var columns = issueColumns
        var from = "issues i"
        var conditions = ["i.project_id = ?"]
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let release = query.release {
            from += " JOIN issue_releases ir ON ir.issue_id = i.id AND ir.release = ?"
            arguments.append(release)
            columns = """
                i.id, i.project_id, i.kind, i.fingerprint, i.title, i.culprit, i.status, i.regressed, i.first_seen,
                ir.last_seen AS last_seen, i.first_release, i.last_release, ir.events AS events, ir.users AS users,
                i.repeat_users, i.early_events, i.timed_events
                """
        }
        arguments.append(query.project.rawValue)
        if let status = query.status {
            conditions.append("i.status = ?")
            arguments.append(status.rawValue)
        }
        if let kind = query.kind {
            conditions.append("i.kind = ?")
            arguments.append(kind.rawValue)
        }
        if let regressed = query.regressed {
            conditions.append("i.regressed = ?")
            arguments.append(regressed ? 1 : 0)
        }
        return (columns, from + " WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    /// The `ORDER BY` of `order`: total (the id breaks every tie), and for a list without a release filter the
    /// prefix of one of the `issues_list_by_*` indexes (v17), so a page is read in index order, never sorted.
    static func orderBy(_ order: IssueOrder, release: Bool) -> String {
        let t = release ? "ir" : "i"
        switch order {
        case .lastSeen: return "\(t).last_seen DESC, i.id DESC"
        case .users: return "\(t).users DESC, \(t).events DESC, \(t).last_seen DESC, i.id DESC"
        case .events: return "\(t).events DESC, \(t).users DESC, \(t).last_seen DESC, i.id DESC"
        }
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        let listing = Self.listing(query)
        let sql = "SELECT \(listing.columns) FROM \(listing.from) ORDER BY \(Self.orderBy(query.order, release: query.release != nil)) LIMIT ? OFFSET ?"
        let args = StatementArguments(listing.arguments + [max(1, min(query.limit, 10_000)), max(0, query.offset)])
        return try await database.pool.read { db in
            try Row.fetchAll(db, sql: sql, arguments: args).compactMap { Self.summary($0, now: now) }
        }
    }

    /// The ids alone: with the default order and no release filter, read from `issues_list_by_last_seen` without
    /// touching the table (the summary pages' render read 5,000 whole rows at 1 M reports stored to know which issues
    /// it lists).
    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        let listing = Self.listing(query)
        let sql = "SELECT i.id FROM \(listing.from) ORDER BY \(Self.orderBy(query.order, release: query.release != nil)) LIMIT ? OFFSET ?"
        let args = StatementArguments(listing.arguments + [max(1, min(query.limit, 10_000)), max(0, query.offset)])
        return try await database.pool.read { db in
            try Int64.fetchAll(db, sql: sql, arguments: args).map(IssueID.init(rawValue:))
        }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        let listing = Self.listing(query)
        let sql = "SELECT count(*) FROM \(listing.from)"
        let args = StatementArguments(listing.arguments)
        return try await database.pool.read { db in try Int.fetchOne(db, sql: sql, arguments: args) ?? 0 }
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        try await database.pool.read { db in
            var sql = """
                SELECT \(Self.issueColumns), i.grouping, i.status_changed_at, i.status_changed_by, i.note,
                    \(Self.versionColumns)
                FROM issues i WHERE i.id = ?
                """
            var arguments: StatementArguments = [id.rawValue]
            if let project {
                sql += " AND i.project_id = ?"
                arguments += [project.rawValue]
            }
            guard let row = try Row.fetchOne(db, sql: sql, arguments: arguments), let summary = Self.summary(row, now: now),
                  let grouping = try? JSONDecoder().decode(GroupingResult.self, from: Data((row["grouping"] as String).utf8))
            else { return nil }
            let releases = try Row.fetchAll(
                db, sql: "SELECT release, events, users, first_seen, last_seen FROM issue_releases WHERE issue_id = ? ORDER BY last_seen DESC",
                arguments: [id.rawValue]
            ).map {
                IssueReleaseRow(
                    release: $0["release"], events: $0["events"], users: $0["users"], firstSeen: Millis.date($0["first_seen"]),
                    lastSeen: Millis.date($0["last_seen"]))
            }
            let days = try Row.fetchAll(
                db, sql: "SELECT day, events, users FROM issue_days WHERE issue_id = ? AND day >= ? ORDER BY day",
                arguments: [id.rawValue, DayNumber(now).adding(-89).rawValue]
            ).map { IssueDay(day: DayNumber(rawValue: $0["day"]), events: $0["events"], users: $0["users"]) }
            var breakdowns: [String: [BreakdownEntry]] = [:]
            for key in ["device", "os", "environment"] {
                breakdowns[key] = try Row.fetchAll(
                    db, sql: "SELECT value, events FROM issue_tags WHERE issue_id = ? AND key = ? ORDER BY events DESC, value LIMIT 10",
                    arguments: [id.rawValue, key]
                ).map { BreakdownEntry(value: $0["value"], events: $0["events"]) }
            }
            // From the retained reports, never the rollups: those hold keyed hashes, and outlive the reports (RollupUser).
            breakdowns["user"] = try Row.fetchAll(
                db,
                sql: """
                    SELECT user_key, count(*) AS events FROM (
                        SELECT user_key FROM reports WHERE issue_id = ? ORDER BY occurred_at DESC LIMIT ?)
                    WHERE user_key IS NOT NULL GROUP BY user_key ORDER BY events DESC, user_key LIMIT 10
                    """,
                arguments: [id.rawValue, RollupUser.breakdownReports]
            ).map { BreakdownEntry(value: $0["user_key"], events: $0["events"]) }
            let samples = try Row.fetchAll(
                db,
                sql: "SELECT \(SQLiteReportReader.summaryColumns) FROM reports r WHERE r.issue_id = ? ORDER BY r.occurred_at DESC, r.id DESC LIMIT 10",
                arguments: [id.rawValue]
            ).compactMap(SQLiteReportReader.summary)
            return IssueDetail(
                summary: summary, grouping: grouping, releases: releases, days: days, breakdowns: breakdowns,
                repeatUsers: row["repeat_users"], samples: samples,
                statusChange: (row["status_changed_at"] as Int64?).map { IssueStatusChange(at: Millis.date($0), by: row["status_changed_by"]) },
                note: row["note"], version: Self.version(row))
        }
    }

    /// An issue's version (``IssueVersion``), read in the same statement as what it versions.
    static let versionColumns = """
        i.updated_at AS v_changed, i.events AS v_events, i.status AS v_status,
        coalesce(length(CAST(i.note AS BLOB)), -1) AS v_note
        """

    static func version(_ row: Row) -> IssueVersion {
        IssueVersion(changedAt: row["v_changed"], events: row["v_events"], status: row["v_status"], noteBytes: row["v_note"])
    }

    public func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        try await database.pool.read { db in
            var versions: [IssueID: IssueVersion] = [:]
            let rows = try Row.fetchCursor(
                db, sql: "SELECT i.id, \(Self.versionColumns) FROM issues i WHERE i.project_id = ? AND i.updated_at >= ?",
                arguments: [project.rawValue, Millis.from(since)])
            while let row = try rows.next() { versions[IssueID(row["id"])] = Self.version(row) }
            return versions
        }
    }

    public func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        try await database.pool.read { db in
            var versions: [IssueID: IssueVersion] = [:]
            // 500 ids a statement (SQLite's limit on bound values is 32,766 in recent versions, 999 in old ones).
            for start in stride(from: 0, to: ids.count, by: 500) {
                let chunk = ids[start..<min(ids.count, start + 500)]
                let marks = chunk.map { _ in "?" }.joined(separator: ", ")
                let rows = try Row.fetchCursor(
                    db, sql: "SELECT i.id, \(Self.versionColumns) FROM issues i WHERE i.project_id = ? AND i.id IN (\(marks))",
                    arguments: StatementArguments([project.rawValue] + chunk.map(\.rawValue)))
                while let row = try rows.next() { versions[IssueID(row["id"])] = Self.version(row) }
            }
            return versions
        }
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        try await database.pool.read { db in
            try Row.fetchOne(
                db, sql: "SELECT \(Self.versionColumns) FROM issues i WHERE i.id = ? AND i.project_id = ?",
                arguments: [id.rawValue, project.rawValue]
            ).map(Self.version)
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
                arguments: [project.rawValue, max(1, min(limit, 1000))]
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
            return try Row.fetchOne(db, sql: "SELECT \(Self.issueColumns) FROM issues i WHERE i.id = ?", arguments: [issue.rawValue])
                .flatMap { Self.summary($0, now: date) }
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
