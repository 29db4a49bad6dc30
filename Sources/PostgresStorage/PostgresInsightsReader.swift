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
                FROM health_releases WHERE project_id = \(project.rawValue) ORDER BY first_seen DESC LIMIT \(Int64(max(1, limit)))
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

    /// The columns of an issue in a select, in order: `summary` reads them by position.
    static let issueColumnNames = [
        "id", "project_id", "kind", "fingerprint", "title", "culprit", "status", "regressed", "first_seen", "last_seen",
        "first_release", "last_release", "events", "users", "repeat_users", "early_events", "timed_events",
    ]
    static let issueColumns = issueColumnNames.map { "i.\($0)" }.joined(separator: ", ")

    /// An issue from a row whose select starts with `issueColumns` (or the same values, as a release listing's).
    static func summary(_ cells: PostgresRandomAccessRow, now: Date) throws -> IssueSummary? {
        guard let kind = ReportKind(rawValue: try cells[2].decode(String.self)),
              let status = IssueStatus(rawValue: try cells[6].decode(String.self)),
              let fingerprint = Fingerprint(try cells[3].decode(String.self))
        else { return nil }
        let firstSeen = Millis.date(try cells[8].decode(Int64.self))
        return IssueSummary(
            id: IssueID(try cells[0].decode(Int64.self)), project: ProjectID(try cells[1].decode(Int64.self)), kind: kind,
            fingerprint: fingerprint, title: try cells[4].decode(String.self), culprit: try cells[5].decode(String?.self), status: status,
            signals: IssueSignals.compute(
                firstSeen: firstSeen, regressed: try cells[7].decode(Bool.self), repeatUsers: try cells[14].decode(Int.self),
                earlyEvents: try cells[15].decode(Int.self), timedEvents: try cells[16].decode(Int.self), now: now),
            firstSeen: firstSeen, lastSeen: Millis.date(try cells[9].decode(Int64.self)), firstRelease: try cells[10].decode(String?.self),
            lastRelease: try cells[11].decode(String?.self), events: try cells[12].decode(Int.self), users: try cells[13].decode(Int.self))
    }

    public func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws -> [TopIssue] {
        let limit = Int64(max(1, min(limit, 500)))
        let seconds: Double = window == .last24Hours ? 86_400 : 7 * 86_400
        let logger = database.logger
        var arguments = PostgresArguments()
        let sql: String
        switch window {
        case .release(let release):
            sql = """
                SELECT \(Self.issueColumns), ir.users, ir.events
                FROM issue_releases ir JOIN issues i ON i.id = ir.issue_id
                WHERE ir.release = \(arguments.bind(release)) AND i.project_id = \(arguments.bind(project.rawValue))
                ORDER BY ir.users DESC, ir.events DESC, i.id LIMIT \(arguments.bind(limit))
                """
        case .last24Hours, .last7Days:
            // Each issue's distinct users and reports in the window, from the covering index alone.
            sql = """
                WITH w AS (
                    SELECT issue_id, count(DISTINCT user_key) AS window_users, count(*) AS window_events
                    FROM reports WHERE project_id = \(arguments.bind(project.rawValue))
                        AND occurred_at >= \(arguments.bind(Millis.from(now.addingTimeInterval(-seconds))))
                        AND occurred_at <= \(arguments.bind(Millis.from(now))) AND issue_id IS NOT NULL
                    GROUP BY issue_id
                    ORDER BY window_users DESC, window_events DESC, issue_id LIMIT \(arguments.bind(limit)))
                SELECT \(Self.issueColumns), w.window_users, w.window_events FROM w JOIN issues i ON i.id = w.issue_id
                ORDER BY w.window_users DESC, w.window_events DESC, i.id
                """
        }
        let query = arguments.query(sql)
        let count = Self.issueColumnNames.count
        return try await database.read { connection in
            var top: [TopIssue] = []
            for try await row in try await connection.query(query, logger: logger) {
                let cells = row.makeRandomAccess()
                guard let summary = try Self.summary(cells, now: now) else { continue }
                top.append(TopIssue(issue: summary, users: try cells[count].decode(Int.self), events: try cells[count + 1].decode(Int.self)))
            }
            guard window == .last24Hours || window == .last7Days, !top.isEmpty else { return top }
            // The window before, for the trend arrows: the ranked issues' reports of that window.
            let ids = top.map(\.issue.id.rawValue)
            var before: [Int64: TopIssue.Counts] = [:]
            for try await (issue, users, events) in try await connection.query(
                """
                SELECT issue_id, count(DISTINCT user_key), count(*) FROM reports
                WHERE project_id = \(project.rawValue) AND occurred_at >= \(Millis.from(now.addingTimeInterval(-2 * seconds)))
                    AND occurred_at < \(Millis.from(now.addingTimeInterval(-seconds))) AND issue_id = ANY(\(ids))
                GROUP BY issue_id
                """, logger: logger
            ).decode((Int64, Int, Int).self) {
                before[issue] = TopIssue.Counts(users: users, events: events)
            }
            for index in top.indices {
                top[index].previous = before[top[index].issue.id.rawValue] ?? TopIssue.Counts(users: 0, events: 0)
            }
            return top
        }
    }

    /// The `FROM … WHERE …` of an issue listing and the columns of its select. A release filter joins the issue's row
    /// of that release, whose events, users and last seen stand in for the issue's totals; `project_id` always limits
    /// the issues, so one project never lists another's.
    static func listing(_ query: IssueQuery, _ arguments: inout PostgresArguments) -> (columns: String, from: String) {
        var columns = issueColumns
        var from = "issues i"
        if let release = query.release {
            from += " JOIN issue_releases ir ON ir.issue_id = i.id AND ir.release = \(arguments.bind(release))"
            columns = """
                i.id, i.project_id, i.kind, i.fingerprint, i.title, i.culprit, i.status, i.regressed, i.first_seen,
                ir.last_seen, i.first_release, i.last_release, ir.events, ir.users, i.repeat_users, i.early_events, i.timed_events
                """
        }
        var conditions = ["i.project_id = \(arguments.bind(query.project.rawValue))"]
        if let status = query.status { conditions.append("i.status = \(arguments.bind(status.rawValue))") }
        if let kind = query.kind { conditions.append("i.kind = \(arguments.bind(kind.rawValue))") }
        if let regressed = query.regressed { conditions.append("i.regressed = \(arguments.bind(regressed))") }
        return (columns, from + " WHERE " + conditions.joined(separator: " AND "))
    }

    /// The `ORDER BY` of `order`: total (the id breaks every tie), the prefix of an `issues_list_by_*` index.
    static func orderBy(_ order: IssueOrder, release: Bool) -> String {
        let t = release ? "ir" : "i"
        switch order {
        case .lastSeen: return "\(t).last_seen DESC, i.id DESC"
        case .users: return "\(t).users DESC, \(t).events DESC, \(t).last_seen DESC, i.id DESC"
        case .events: return "\(t).events DESC, \(t).users DESC, \(t).last_seen DESC, i.id DESC"
        }
    }

    /// A page of a listing: `select` of `listing` in the order asked for.
    private func page(_ query: IssueQuery, select: (String) -> String) -> PostgresQuery {
        var arguments = PostgresArguments()
        let listing = Self.listing(query, &arguments)
        let limit = arguments.bind(Int64(max(1, min(query.limit, 10_000))))
        let offset = arguments.bind(Int64(max(0, query.offset)))
        return arguments.query(
            "SELECT \(select(listing.columns)) FROM \(listing.from) ORDER BY \(Self.orderBy(query.order, release: query.release != nil)) LIMIT \(limit) OFFSET \(offset)")
    }

    public func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        let statement = page(query) { $0 }
        let logger = database.logger
        return try await database.read { connection in
            var issues: [IssueSummary] = []
            for try await row in try await connection.query(statement, logger: logger) {
                if let issue = try Self.summary(row.makeRandomAccess(), now: now) { issues.append(issue) }
            }
            return issues
        }
    }

    public func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        let statement = page(query) { _ in "i.id" }
        let logger = database.logger
        return try await database.read { connection in
            var ids: [IssueID] = []
            for try await id in try await connection.query(statement, logger: logger).decode(Int64.self) { ids.append(IssueID(id)) }
            return ids
        }
    }

    public func issueCount(matching query: IssueQuery) async throws -> Int {
        var arguments = PostgresArguments()
        let listing = Self.listing(query, &arguments)
        let statement = arguments.query("SELECT count(*) FROM \(listing.from)")
        let logger = database.logger
        return try await database.read { connection in
            for try await count in try await connection.query(statement, logger: logger).decode(Int.self) { return count }
            return 0
        }
    }

    /// An issue's version (`IssueVersion`), read in the same statement as what it versions.
    static let versionColumns = "i.updated_at, i.events, i.status, coalesce(octet_length(i.note), -1)::bigint"

    static func version(_ cells: PostgresRandomAccessRow, from start: Int) throws -> IssueVersion {
        IssueVersion(
            changedAt: try cells[start].decode(Int64.self), events: try cells[start + 1].decode(Int64.self),
            status: try cells[start + 2].decode(String.self), noteBytes: try cells[start + 3].decode(Int64.self))
    }

    public func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        var arguments = PostgresArguments()
        var sql = """
            SELECT \(Self.issueColumns), i.grouping, i.status_changed_at, i.status_changed_by, i.note, \(Self.versionColumns)
            FROM issues i WHERE i.id = \(arguments.bind(id.rawValue))
            """
        if let project { sql += " AND i.project_id = \(arguments.bind(project.rawValue))" }
        let statement = arguments.query(sql)
        let logger = database.logger
        let count = Self.issueColumnNames.count
        return try await database.read { connection -> IssueDetail? in
            var found: (IssueSummary, GroupingResult, Int64?, String?, String?, IssueVersion, Int)?
            for try await row in try await connection.query(statement, logger: logger) {
                let cells = row.makeRandomAccess()
                guard let summary = try Self.summary(cells, now: now),
                      let grouping = try? JSONDecoder().decode(GroupingResult.self, from: Data(try cells[count].decode(String.self).utf8))
                else { return nil }
                found = (
                    summary, grouping, try cells[count + 1].decode(Int64?.self), try cells[count + 2].decode(String?.self),
                    try cells[count + 3].decode(String?.self), try Self.version(cells, from: count + 4), try cells[14].decode(Int.self))
            }
            guard let (summary, grouping, changedAt, changedBy, note, version, repeatUsers) = found else { return nil }
            var releases: [IssueReleaseRow] = []
            for try await (release, events, users, first, last) in try await connection.query(
                "SELECT release, events, users, first_seen, last_seen FROM issue_releases WHERE issue_id = \(id.rawValue) ORDER BY last_seen DESC",
                logger: logger
            ).decode((String, Int, Int, Int64, Int64).self) {
                releases.append(IssueReleaseRow(release: release, events: events, users: users, firstSeen: Millis.date(first), lastSeen: Millis.date(last)))
            }
            var days: [IssueDay] = []
            for try await (day, events, users) in try await connection.query(
                """
                SELECT day, events, users FROM issue_days WHERE issue_id = \(id.rawValue) AND day >= \(DayNumber(now).adding(-89).rawValue)
                ORDER BY day
                """, logger: logger
            ).decode((Int, Int, Int).self) {
                days.append(IssueDay(day: DayNumber(rawValue: day), events: events, users: users))
            }
            var breakdowns: [String: [BreakdownEntry]] = [:]
            for key in ["device", "os", "environment"] {
                var entries: [BreakdownEntry] = []
                for try await (value, events) in try await connection.query(
                    """
                    SELECT value, events FROM issue_tags WHERE issue_id = \(id.rawValue) AND key = \(key) ORDER BY events DESC, value LIMIT 10
                    """, logger: logger
                ).decode((String, Int).self) {
                    entries.append(BreakdownEntry(value: value, events: events))
                }
                breakdowns[key] = entries
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
            breakdowns["user"] = users
            var samples: [ReportSummary] = []
            for try await row in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(PostgresReportReader.summaryColumns) FROM reports r WHERE r.issue_id = $1 ORDER BY r.occurred_at DESC, r.id DESC LIMIT 10",
                    binds: PostgresBindings(values: [id.rawValue])),
                logger: logger
            ) {
                if let sample = try PostgresReportReader.summary(row.makeRandomAccess()) { samples.append(sample) }
            }
            return IssueDetail(
                summary: summary, grouping: grouping, releases: releases, days: days, breakdowns: breakdowns, repeatUsers: repeatUsers,
                samples: samples, statusChange: changedAt.map { IssueStatusChange(at: Millis.date($0), by: changedBy) }, note: note,
                version: version)
        }
    }

    public func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        try await versions(where: "i.updated_at >= $2", project: project, Millis.from(since))
    }

    public func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        guard !ids.isEmpty else { return [:] }
        return try await versions(where: "i.id = ANY($2)", project: project, ids.map(\.rawValue))
    }

    /// The versions of the issues of `project` (`$1`) that `condition` (on `i`, with `value` as `$2`) picks.
    private func versions(
        where condition: String, project: ProjectID, _ value: some PostgresNonThrowingEncodable
    ) async throws -> [IssueID: IssueVersion] {
        let logger = database.logger
        return try await database.read { connection in
            var versions: [IssueID: IssueVersion] = [:]
            for try await row in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT i.id, \(Self.versionColumns) FROM issues i WHERE i.project_id = $1 AND \(condition)",
                    binds: PostgresBindings(values: [project.rawValue, value])),
                logger: logger
            ) {
                let cells = row.makeRandomAccess()
                versions[IssueID(try cells[0].decode(Int64.self))] = try Self.version(cells, from: 1)
            }
            return versions
        }
    }

    public func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        let logger = database.logger
        return try await database.read { connection in
            for try await row in try await connection.query(
                PostgresQuery(
                    unsafeSQL: "SELECT \(Self.versionColumns) FROM issues i WHERE i.id = $1 AND i.project_id = $2",
                    binds: PostgresBindings(values: [id.rawValue, project.rawValue])),
                logger: logger
            ) {
                return try Self.version(row.makeRandomAccess(), from: 0)
            }
            return nil
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
                    ORDER BY id DESC LIMIT \(Int64(max(1, min(limit, 1000))))
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
        sql += " RETURNING \(Self.issueColumns)"
        let statement = arguments.query(sql)
        let logger = database.logger
        return try await database.write { connection in
            for try await row in try await connection.query(statement, logger: logger) {
                return try Self.summary(row.makeRandomAccess(), now: date)
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
