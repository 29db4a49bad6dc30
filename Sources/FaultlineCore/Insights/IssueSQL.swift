#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The issue reads both storage engines run, and how their rows become issues: written once (see `SQLStatement`),
/// so the engines cannot drift apart in what a list holds, in its order, or in what a column means.
///
/// - Every statement limits the issues to one project (`i.project_id`): one project never reads another's.
/// - Every order is total (the id breaks every tie, as ``IssueOrder/precedes(_:_:)`` says), so pages cut from a
///   listing never repeat or skip an issue. Without a release filter an order is the prefix of one of the
///   `issues_list_by_*` indexes, so a page is read in index order, never sorted (SQLite's plans are pinned by
///   `IssueListQueryTests`).
/// - The recent windows (top issues of the last 24 hours or 7 days) are counted from the covering index
///   `reports_by_time (project_id, occurred_at, issue_id, user_key)` alone, never from the reports' rows.
public enum IssueSQL {
    /// The columns of an issue, in the order ``summary(_:now:)`` reads them.
    public static let columnNames = [
        "id", "project_id", "kind", "fingerprint", "title", "culprit", "status", "regressed", "first_seen", "last_seen",
        "first_release", "last_release", "events", "users", "repeat_users", "early_events", "timed_events", "grouping",
        "hang",
    ]
    /// ``columnNames`` of the issues table `i`, for a select.
    public static let columns = select(release: false)

    /// The issue's totals that a release filter replaces with those of the issue's row of that release (`ir`).
    static let releaseTotals: Set = ["last_seen", "events", "users"]

    /// The select of a listing's issues: with a release filter, the release's totals under the issue's names.
    static func select(release: Bool) -> String {
        columnNames.map { release && releaseTotals.contains($0) ? "ir.\($0) AS \($0)" : "i.\($0)" }
            .joined(separator: ", ")
    }

    // MARK: Listings

    /// The `FROM … WHERE …` of a listing, its values bound to `binds`. A release filter joins the issue's row of
    /// that release (whose totals then stand in for the issue's, see ``select(release:)``).
    static func listing(_ query: IssueQuery, _ binds: inout SQLBinds) -> String {
        var from = "issues i"
        if let release = query.release {
            from += " JOIN issue_releases ir ON ir.issue_id = i.id AND ir.release = \(binds.bind(release))"
        }
        var conditions = ["i.project_id = \(binds.bind(query.project.rawValue))"]
        if let status = query.status { conditions.append("i.status = \(binds.bind(status.rawValue))") }
        if let kind = query.kind { conditions.append("i.kind = \(binds.bind(kind.rawValue))") }
        if let category = query.category { conditions.append(of(category, &binds)) }
        if let regressed = query.regressed { conditions.append("i.regressed = \(binds.bind(regressed))") }
        return from + " WHERE " + conditions.joined(separator: " AND ")
    }

    /// The condition that keeps the issues of `category` (`i`): a hang by its stored mark, whatever kind the client
    /// sent it as; a crash or a non-fatal by its kind, hangs left out. The mark is written as a literal, so that the
    /// hangs' partial index (`issues_hangs`, whose condition is `hang = true`) serves a listing of hangs.
    static func of(_ category: IssueCategory, _ binds: inout SQLBinds) -> String {
        switch category {
        case .hang: "i.hang = true"
        case .crash: "i.kind = \(binds.bind(ReportKind.crash.rawValue)) AND i.hang = false"
        case .nonFatal: "i.kind = \(binds.bind(ReportKind.nonfatal.rawValue)) AND i.hang = false"
        }
    }

    /// The `ORDER BY` of `order`, on the release's totals (`ir`) when the listing has a release filter.
    static func orderBy(_ order: IssueOrder, release: Bool) -> String {
        let t = release ? "ir" : "i"
        switch order {
        case .lastSeen: return "\(t).last_seen DESC, i.id DESC"
        case .users: return "\(t).users DESC, \(t).events DESC, \(t).last_seen DESC, i.id DESC"
        case .events: return "\(t).events DESC, \(t).users DESC, \(t).last_seen DESC, i.id DESC"
        }
    }

    /// A page of a listing in its order: the issues (``summary(_:now:)`` reads each row), or with `idsOnly` their
    /// ids alone (with the default order and no release filter, read from `issues_list_by_last_seen` without
    /// touching the table).
    public static func page(_ query: IssueQuery, idsOnly: Bool = false, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let release = query.release != nil
        let from = listing(query, &binds)
        let sql = """
            SELECT \(idsOnly ? "i.id" : select(release: release)) FROM \(from)
            ORDER BY \(orderBy(query.order, release: release))
            LIMIT \(binds.bind(query.page.limit)) OFFSET \(binds.bind(query.page.offset))
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// How many issues a listing holds (its order and page do not count).
    public static func count(_ query: IssueQuery, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let from = listing(query, &binds)
        return SQLStatement(sql: "SELECT count(*) FROM \(from)", values: binds.values)
    }

    // MARK: Top issues

    /// The top issues of `window`, most users first, then events: each row the issue's columns, then its users and
    /// events in the window (``topIssue(_:now:)``). With `category`, only issues of that category are ranked.
    public static func top(
        project: ProjectID, window: TopIssueWindow, category: IssueCategory? = nil, now: Date, limit: Int,
        _ dialect: SQLDialect
    ) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let limit = PageRequest(limit: limit, bound: PageRequest.maxTopIssues).limit
        let sql: String
        switch window {
        case .release(let release):
            let ofKind = category.map { " AND " + of($0, &binds) } ?? ""
            sql = """
                SELECT \(columns), ir.users, ir.events
                FROM issue_releases ir JOIN issues i ON i.id = ir.issue_id
                WHERE ir.release = \(binds.bind(release)) AND i.project_id = \(binds.bind(project.rawValue))\(ofKind)
                ORDER BY ir.users DESC, ir.events DESC, i.id LIMIT \(binds.bind(limit))
                """
        case .last24Hours, .last7Days:
            let from = now.addingTimeInterval(-(window.seconds ?? 0))
            let counted = """
                SELECT issue_id, count(DISTINCT user_key) AS window_users, count(*) AS window_events
                    FROM reports WHERE project_id = \(binds.bind(project.rawValue))
                        AND occurred_at >= \(binds.bind(Millis.from(from)))
                        AND occurred_at <= \(binds.bind(Millis.from(now)))
                        AND issue_id IS NOT NULL
                    GROUP BY issue_id
                """
            if let category {
                // The window's issues are counted from the covering index as without a category; the category is
                // the issue's, so the ranking is cut after the join (one issue row read per issue of the window).
                sql = """
                    WITH w AS (\(counted))
                    SELECT \(columns), w.window_users, w.window_events FROM w JOIN issues i ON i.id = w.issue_id
                    WHERE \(of(category, &binds))
                    ORDER BY w.window_users DESC, w.window_events DESC, i.id LIMIT \(binds.bind(limit))
                    """
            } else {
                sql = """
                    WITH w AS (\(counted)
                        ORDER BY window_users DESC, window_events DESC, issue_id LIMIT \(binds.bind(limit)))
                    SELECT \(columns), w.window_users, w.window_events FROM w JOIN issues i ON i.id = w.issue_id
                    ORDER BY w.window_users DESC, w.window_events DESC, i.id
                    """
            }
        }
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``top(project:window:category:now:limit:_:)``; nil for an issue of a kind or status this build does not know.
    public static func topIssue(_ row: some SQLRow, now: Date) throws -> TopIssue? {
        let next = columnNames.count
        return try summary(row, now: now).map {
            TopIssue(issue: $0, users: try row.int(next), events: try row.int(next + 1))
        }
    }

    /// For the trend arrows of a recent window of `seconds`: the users and events of `issues` in the window before
    /// it. Rows: issue id, users, events.
    public static func windowBefore(
        project: ProjectID, issues: [IssueID], seconds: Double, now: Date, _ dialect: SQLDialect
    ) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT issue_id, count(DISTINCT user_key), count(*) FROM reports
            WHERE project_id = \(binds.bind(project.rawValue))
                AND occurred_at >= \(binds.bind(Millis.from(now.addingTimeInterval(-2 * seconds))))
                AND occurred_at < \(binds.bind(Millis.from(now.addingTimeInterval(-seconds))))
                AND issue_id IN (\(binds.bind(list: issues.map(\.rawValue))))
            GROUP BY issue_id
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``windowBefore(project:issues:seconds:now:_:)``: an issue and its counts in that window.
    public static func windowCounts(_ row: some SQLRow) throws -> (IssueID, TopIssue.Counts) {
        (IssueID(try row.integer(0)), TopIssue.Counts(users: try row.int(1), events: try row.int(2)))
    }

    /// `top` with the counts of the window before (`windowCounts` rows; an issue without reports then counts 0).
    public static func withPrevious(_ top: [TopIssue], _ before: [(IssueID, TopIssue.Counts)]) -> [TopIssue] {
        let counts = Dictionary(before, uniquingKeysWith: { first, _ in first })
        return top.map { issue in
            var issue = issue
            issue.previous = counts[issue.issue.id] ?? TopIssue.Counts(users: 0, events: 0)
            return issue
        }
    }

    // MARK: Versions

    /// The four columns of an issue's version (``IssueVersion``), read in the same statement as what it versions.
    public static func versionColumns(_ dialect: SQLDialect) -> String {
        "i.updated_at, i.events, i.status, coalesce(\(dialect.byteLength("i.note")), -1)"
    }

    /// The versions of the issues of `project` changed since `since` (rows: id, then the version's columns).
    public static func versions(project: ProjectID, changedSince since: Date, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT i.id, \(versionColumns(dialect)) FROM issues i
            WHERE i.project_id = \(binds.bind(project.rawValue)) AND i.updated_at >= \(binds.bind(Millis.from(since)))
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// The versions of the issues `ids` of `project`, ``idsPerStatement`` ids a statement (rows: id, then the
    /// version's columns).
    public static func versions(of ids: [IssueID], project: ProjectID, _ dialect: SQLDialect) -> [SQLStatement] {
        stride(from: 0, to: ids.count, by: idsPerStatement).map { start in
            var binds = SQLBinds(dialect)
            let chunk = ids[start..<min(ids.count, start + idsPerStatement)].map(\.rawValue)
            let sql = """
                SELECT i.id, \(versionColumns(dialect)) FROM issues i
                WHERE i.project_id = \(binds.bind(project.rawValue)) AND i.id IN (\(binds.bind(list: chunk)))
                """
            return SQLStatement(sql: sql, values: binds.values)
        }
    }

    /// Ids bound in one statement at most: far below the bound values either engine takes (SQLite's limit is
    /// 32,766 in recent versions, 999 in old ones; PostgreSQL's 65,535).
    public static let idsPerStatement = 500

    /// A row of ``versions(project:changedSince:_:)`` or ``versions(of:project:_:)``: an issue and its version.
    public static func idAndVersion(_ row: some SQLRow) throws -> (IssueID, IssueVersion) {
        (IssueID(try row.integer(0)), try version(row, at: 1))
    }

    /// The version of one issue of `project`.
    public static func version(_ id: IssueID, project: ProjectID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT \(versionColumns(dialect)) FROM issues i
            WHERE i.id = \(binds.bind(id.rawValue)) AND i.project_id = \(binds.bind(project.rawValue))
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    // MARK: Changes and counts

    /// The ids of `project`'s issues changed since `since`, in id order.
    public static func changed(project: ProjectID, since: Date, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT id FROM issues
            WHERE project_id = \(binds.bind(project.rawValue)) AND updated_at >= \(binds.bind(Millis.from(since)))
            ORDER BY id
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// How many issues of `project` have each status (``statusCount(_:)`` reads a row).
    public static func statusCounts(project: ProjectID, _ dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql =
            "SELECT status, count(*) FROM issues WHERE project_id = \(binds.bind(project.rawValue)) GROUP BY status"
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of ``statusCounts(project:_:)``; nil for a status this build does not know.
    public static func statusCount(_ row: some SQLRow) throws -> (IssueStatus, Int)? {
        try IssueStatus(rawValue: row.text(0)).map { ($0, try row.int(1)) }
    }

    // MARK: Rows

    /// An issue from a row whose select starts with ``columns`` (or a listing's ``select(release:)``). Nil for a
    /// kind, status or fingerprint this build cannot read (a row written by a newer version).
    public static func summary(_ row: some SQLRow, now: Date) throws -> IssueSummary? {
        guard let kind = ReportKind(rawValue: try row.text(2)), let status = IssueStatus(rawValue: try row.text(6)),
            let fingerprint = Fingerprint(try row.text(3))
        else { return nil }
        let firstSeen = try row.date(8)
        var summary = IssueSummary(
            id: IssueID(try row.integer(0)), project: ProjectID(try row.integer(1)), kind: kind,
            fingerprint: fingerprint,
            title: try row.text(4), culprit: try row.textOrNull(5), status: status,
            signals: IssueSignals.compute(
                firstSeen: firstSeen, regressed: try row.bool(7), repeatUsers: try row.int(14),
                earlyEvents: try row.int(15),
                timedEvents: try row.int(16), now: now),
            firstSeen: firstSeen, lastSeen: try row.date(9), firstRelease: try row.textOrNull(10),
            lastRelease: try row.textOrNull(11), events: try row.int(12), users: try row.int(13))
        summary.errorCode = try row.textOrNull(17).flatMap(errorCode(grouping:))
        summary.hang = try row.bool(18)
        return summary
    }

    /// The error code of a stored grouping (``GroupingResult/errorCode``); only a grouping that names a code is
    /// decoded, so a list of crashes pays a substring search a row.
    static func errorCode(grouping json: String) -> String? {
        guard json.contains("\"" + GroupingResult.codePrefix) else { return nil }
        return (try? JSONDecoder().decode(GroupingResult.self, from: Data(json.utf8)))?.errorCode
    }

    /// An issue's version from the four ``versionColumns(_:)`` starting at column `start`.
    public static func version(_ row: some SQLRow, at start: Int) throws -> IssueVersion {
        IssueVersion(
            changedAt: try row.integer(start), events: try row.integer(start + 1), status: try row.text(start + 2),
            noteBytes: try row.integer(start + 3))
    }
}

extension TopIssueWindow {
    /// The length of a recent window (and of the window before it, for the trend arrows); nil for a release.
    public var seconds: Double? {
        switch self {
        case .last24Hours: 86_400
        case .last7Days: 7 * 86_400
        case .release: nil
        }
    }
}
