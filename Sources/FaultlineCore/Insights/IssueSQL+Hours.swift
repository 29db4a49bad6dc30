#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An issue's events and users in one hour (UTC), for the issue page's chart of its recent hours.
public struct IssueHour: Sendable, Equatable {
    /// Whole hours since 1970-01-01T00:00Z.
    public var hour: Int64
    public var events: Int
    public var users: Int
    public init(hour: Int64, events: Int, users: Int) {
        self.hour = hour
        self.events = events
        self.users = users
    }

    /// The hour that holds `date`.
    public static func number(of date: Date) -> Int64 { Millis.from(date) / millisPerHour }

    /// The first instant of hour `hour`.
    public static func start(of hour: Int64) -> Date {
        Date(timeIntervalSince1970: Double(hour) * Double(millisPerHour) / 1000)
    }

    static let millisPerHour: Int64 = 3_600_000
}

extension IssueSQL {
    /// Hours an issue page charts hour by hour: two days, where a one-hour spike is a bar of its own (a day's bar
    /// would hide it among the day's other 23 hours).
    public static let chartedHours = 48

    /// The issue's events and distinct users per hour over the ``chartedHours`` ending with the hour of `now`, counted
    /// from its reports (the daily rollups have no hours; these reports are younger than any retention). Read from
    /// the covering index `reports_by_time (project_id, occurred_at, issue_id, user_key)`: the project's reports of the
    /// two days, never their rows. Rows: hour, events, users; hours without events are absent.
    public static func hours(of id: IssueID, project: ProjectID, now: Date, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let last = IssueHour.number(of: now)
        let from = (last - Int64(chartedHours - 1)) * IssueHour.millisPerHour
        let to = (last + 1) * IssueHour.millisPerHour
        let sql = """
            SELECT occurred_at / \(IssueHour.millisPerHour) AS hour, count(*), count(DISTINCT user_key) FROM reports
            WHERE project_id = \(binds.bind(project.rawValue)) AND occurred_at >= \(binds.bind(from))
                AND occurred_at < \(binds.bind(to)) AND issue_id = \(binds.bind(id.rawValue))
            GROUP BY occurred_at / \(IssueHour.millisPerHour) ORDER BY hour
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``hours(of:project:now:_:)``.
    public static func hour(_ row: some SQLRow) throws -> IssueHour {
        IssueHour(hour: try row.integer(0), events: try row.int(1), users: try row.int(2))
    }
}
