#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The release-health reads both storage engines run (see `SQLStatement`): the session rollups `health_days` (one
/// row per project, release and day; the release ``allReleases`` counts them all) and `health_releases` (one row
/// per release, with when it was first and last seen).
public enum HealthSQL {
    /// The release under which `health_days` counts every release together: the empty name, which no release has.
    public static let allReleases = ""

    /// The six counts of a health row, in the order ``health(_:at:)`` reads them.
    public static let countColumns = "sessions, crashed, abnormal, errored, users, crashed_users"

    /// The health of `project` (one release, or all together when nil) per day from `from` through `through`.
    public static func days(
        project: ProjectID, release: String?, from: DayNumber, through: DayNumber, _ dialect: SQLDialect
    ) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT day, \(countColumns) FROM health_days
            WHERE project_id = \(binds.bind(project.rawValue)) AND release = \(binds.bind(release ?? allReleases))
                AND day BETWEEN \(binds.bind(from.rawValue)) AND \(binds.bind(through.rawValue)) ORDER BY day
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``days(project:release:from:through:_:)``.
    public static func day(_ row: some SQLRow) throws -> DailyHealth {
        DailyHealth(day: DayNumber(rawValue: try row.int(0)), health: try health(row, at: 1))
    }

    /// Each release's sessions in the last 7 days (`today` and the 6 before), for adoption. Rows: release, sessions.
    public static func recentSessions(project: ProjectID, today: DayNumber, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT release, CAST(sum(sessions) AS bigint) FROM health_days
            WHERE project_id = \(binds.bind(project.rawValue)) AND day >= \(binds.bind(today.adding(-6).rawValue))
            GROUP BY release
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// How many issues each release was the first release of. Rows: release, issues.
    public static func newIssues(project: ProjectID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT first_release, count(*) FROM issues
            WHERE project_id = \(binds.bind(project.rawValue)) AND first_release IS NOT NULL GROUP BY first_release
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``recentSessions(project:today:_:)`` or ``newIssues(project:_:)``: a release and its number.
    public static func releaseCount(_ row: some SQLRow) throws -> (String, Int) {
        (try row.text(0), try row.int(1))
    }

    /// The releases of `project`, newest first: those with sessions, and those with events but no sessions (every
    /// release of an SDK that tracks no sessions), whose counts are 0, so their rates are "no data", never 100 %.
    /// A release without sessions is first and last seen when its issues' events were (`issue_releases`).
    public static func releases(project: ProjectID, limit: Int, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let id = binds.bind(project.rawValue)
        let sql = """
            SELECT release, first_seen, last_seen, \(countColumns) FROM (
                SELECT release, first_seen, last_seen, \(countColumns) FROM health_releases WHERE project_id = \(id)
                UNION ALL
                SELECT ir.release, min(ir.first_seen), max(ir.last_seen), 0, 0, 0, 0, 0, 0
                FROM issue_releases ir JOIN issues i ON i.id = ir.issue_id
                WHERE i.project_id = \(id) AND ir.release <> \(binds.bind(allReleases))
                    AND NOT EXISTS (SELECT 1 FROM health_releases h WHERE h.project_id = \(id) AND h.release = ir.release)
                GROUP BY ir.release
            ) releases
            ORDER BY first_seen DESC, release LIMIT \(binds.bind(PageRequest(limit: limit).limit))
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// What completes a row of ``releases(project:limit:_:)``: the rows of ``recentSessions(project:today:_:)`` and
    /// ``newIssues(project:_:)``, by release.
    public struct ReleaseCounts: Sendable {
        var recentSessions: [String: Int]
        var newIssues: [String: Int]

        public init(recentSessions: [(String, Int)], newIssues: [(String, Int)]) {
            self.recentSessions = Dictionary(recentSessions, uniquingKeysWith: +)
            self.newIssues = Dictionary(newIssues, uniquingKeysWith: +)
        }
    }

    /// A row of ``releases(project:limit:_:)``: its adoption is its share of the last 7 days' sessions (nil without
    /// any).
    public static func release(_ row: some SQLRow, _ counts: ReleaseCounts) throws -> ReleaseRow {
        let release = try row.text(0)
        let total = counts.recentSessions[allReleases] ?? 0
        let sessions = counts.recentSessions[release] ?? 0
        return ReleaseRow(
            release: release, firstSeen: try row.date(1), lastSeen: try row.date(2), health: try health(row, at: 3),
            adoption: total > 0 ? Double(sessions) / Double(total) : nil, recentSessions: sessions,
            newIssues: counts.newIssues[release] ?? 0)
    }

    /// A release's health from the six ``countColumns`` starting at column `start`.
    public static func health(_ row: some SQLRow, at start: Int) throws -> ReleaseHealth {
        ReleaseHealth(
            sessions: try row.int(start), crashedSessions: try row.int(start + 1),
            abnormalSessions: try row.int(start + 2),
            erroredSessions: try row.int(start + 3), users: try row.int(start + 4), crashedUsers: try row.int(start + 5)
        )
    }
}
