#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An issue's detail page: its row (``detail(_:project:_:)``), then one statement for each part (releases, days,
/// breakdowns, samples).
extension IssueSQL {
    /// The head of an issue's detail: the issue, then its grouping, status change, note, tracker issue and version
    /// (``detail(_:now:)``). With `project`, an issue of another project is not found.
    public static func detail(_ id: IssueID, project: ProjectID?, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        var sql = """
            SELECT \(columns), i.grouping, i.status_changed_at, i.status_changed_by, i.note, i.tracker_url,
                \(versionColumns(dialect))
            FROM issues i WHERE i.id = \(binds.bind(id.rawValue))
            """
        if let project { sql += " AND i.project_id = \(binds.bind(project.rawValue))" }
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``detail(_:project:_:)``: the detail without the parts read by other statements (releases, days,
    /// breakdowns, samples). Nil when the issue's kind, status or grouping cannot be read.
    public static func detail(_ row: some SQLRow, now: Date) throws -> IssueDetail? {
        let next = columnNames.count
        guard let summary = try summary(row, now: now),
            let grouping = try? JSONDecoder().decode(GroupingResult.self, from: Data(try row.text(next).utf8))
        else { return nil }
        var detail = IssueDetail(
            summary: summary, grouping: grouping, releases: [], days: [], breakdowns: [:],
            repeatUsers: try row.int(14) /* repeat_users */,
            samples: [],
            statusChange: try row.integerOrNull(next + 1).map {
                IssueStatusChange(at: Millis.date($0), by: try row.textOrNull(next + 2))
            },
            note: try row.textOrNull(next + 3), version: try version(row, at: next + 5))
        detail.trackerURL = try row.textOrNull(next + 4)
        return detail
    }

    /// The releases the issue was seen in, most recently seen first.
    public static func releases(of id: IssueID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT release, events, users, first_seen, last_seen FROM issue_releases
            WHERE issue_id = \(binds.bind(id.rawValue)) ORDER BY last_seen DESC
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``releases(of:_:)``.
    public static func release(_ row: some SQLRow) throws -> IssueReleaseRow {
        IssueReleaseRow(
            release: try row.text(0), events: try row.int(1), users: try row.int(2), firstSeen: try row.date(3),
            lastSeen: try row.date(4))
    }

    /// The issue's events and users per day over the 90 days through `now`'s.
    public static func days(of id: IssueID, now: Date, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT day, events, users FROM issue_days
            WHERE issue_id = \(binds.bind(id.rawValue)) AND day >= \(binds.bind(DayNumber(now).adding(-89).rawValue))
            ORDER BY day
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``days(of:now:_:)``.
    public static func day(_ row: some SQLRow) throws -> IssueDay {
        IssueDay(day: DayNumber(rawValue: try row.int(0)), events: try row.int(1), users: try row.int(2))
    }

    /// The tags an issue is broken down by, besides its users (``userBreakdown(of:_:)``).
    public static let breakdownKeys = ["device", "os", "environment", "build"]

    /// The top 10 values of tag `key` among the issue's events, with their distinct users (ties in the database's
    /// order of text: PostgreSQL's collation, SQLite's bytes).
    public static func breakdown(of id: IssueID, key: String, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT value, events, users FROM issue_tags
            WHERE issue_id = \(binds.bind(id.rawValue)) AND key = \(binds.bind(key))
            ORDER BY events DESC, value LIMIT 10
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// The top 10 users among the issue's newest `RollupUser.breakdownReports` reports: from the retained reports,
    /// never the rollups, which hold keyed hashes and outlive the reports (`RollupUser`).
    public static func userBreakdown(of id: IssueID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT user_key, count(*) AS events FROM (
                SELECT user_key FROM reports WHERE issue_id = \(binds.bind(id.rawValue))
                ORDER BY occurred_at DESC LIMIT \(binds.bind(RollupUser.breakdownReports))) r
            WHERE user_key IS NOT NULL GROUP BY user_key ORDER BY events DESC, \(dialect.bytewise("user_key")) LIMIT 10
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``breakdown(of:key:_:)``.
    public static func tagBreakdownEntry(_ row: some SQLRow) throws -> BreakdownEntry {
        BreakdownEntry(value: try row.text(0), events: try row.int(1), users: try row.int(2))
    }

    /// A row of ``userBreakdown(of:_:)``.
    public static func breakdownEntry(_ row: some SQLRow) throws -> BreakdownEntry {
        BreakdownEntry(value: try row.text(0), events: try row.int(1))
    }
}
