#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Merging issues into one and splitting a fingerprint back out, written once for both storage engines (decision
/// record 0060).
///
/// **Merge.** The survivor keeps its id, title, kind, category (its hang mark: ``IssueCategory``), status and notes;
/// each other issue's reports, rollup rows and alerts move to it in one transaction (`statements`), and the other
/// issue is deleted. Two tables remember the merge:
/// - `issue_aliases (project_id, fingerprint) → issue_id`: the merged issue's fingerprint now files into the survivor.
///   `FilingPlanner` looks a fingerprint with no issue of its own up here, so future events land in the survivor; a
///   grouping-version migration carries the alias forward to the new fingerprint (`FilingPlanner.State.survivors`).
/// - `issues_replaced (issue_id) → survivor_id`: the merged issue's number answers with the survivor (a redirect on
///   the API, a page that links to it on the dashboard).
///
/// Merging moves whole issues, so the rollups add up without reading a report: counters are summed, per-user rows are
/// summed per user, and the distinct-user counters are recounted from the per-user rows (one row per user, so the
/// recount is exact). Nothing is decided about alerts or status: a merge raises no alert, a closed survivor stays
/// closed, a muted issue merged into an open one leaves it open.
///
/// **Unmerge.** The alias goes, and the survivor's reports are queued again (the late-symbols path): filed again,
/// those of the fingerprint find no issue, create one (no new-issue alert: they were filed before) and move to it with
/// their exact contributions (`FilingPlanner`'s move machinery), the rest stay.
public enum IssueMerge {
    /// Most issues one merge takes into its survivor.
    public static let maxOthers = 100

    /// An issue as a merge reads it (in the merge's transaction).
    public struct Candidate: Sendable, Equatable {
        public var id: Int64
        public var project: Int64
        public var fingerprint: String
        public var events: Int64
        public var earlyEvents: Int64
        public var timedEvents: Int64
        public var span: IssueSpan

        public init(
            id: Int64, project: Int64, fingerprint: String, events: Int64, earlyEvents: Int64, timedEvents: Int64,
            span: IssueSpan
        ) {
            self.id = id
            self.project = project
            self.fingerprint = fingerprint
            self.events = events
            self.earlyEvents = earlyEvents
            self.timedEvents = timedEvents
            self.span = span
        }

        public var isOverflow: Bool { fingerprint == IssueFiling.overflowFingerprint.rawValue }
    }

    /// The columns `candidate(_:)` reads, from `issues` (no alias).
    static let candidateColumns =
        "id, project_id, fingerprint, events, early_events, timed_events, first_seen, last_seen, first_release, last_release"

    /// A candidate from a row of `candidateColumns`.
    public static func candidate(_ row: some SQLRow) throws -> Candidate {
        Candidate(
            id: try row.integer(0), project: try row.integer(1), fingerprint: try row.text(2),
            events: try row.integer(3), earlyEvents: try row.integer(4), timedEvents: try row.integer(5),
            span: IssueSpan(
                firstSeen: try row.integer(6), lastSeen: try row.integer(7), firstRelease: try row.textOrNull(8),
                lastRelease: try row.textOrNull(9)))
    }

    /// The ids a merge reads (the survivor's and the others', each once), or why it is refused before any read.
    public static func ids(survivor: IssueID, others: [IssueID]) throws(IssueMergeError) -> [Int64] {
        guard !others.isEmpty else { throw .nothingToMerge }
        let unique = Set(others.map(\.rawValue))
        guard unique.count <= maxOthers else { throw .tooMany(unique.count) }
        return unique.union([survivor.rawValue]).sorted()
    }

    /// The issues to merge into `survivor`, in the order asked, each once, or why the merge is refused. `found` holds
    /// the candidates read by id (an id absent from it does not exist); `project` is the project the request acts for
    /// (nil: the admin, who acts for the survivor's project).
    public static func check(
        survivor: IssueID, others: [IssueID], found: [Int64: Candidate], project: ProjectID?
    ) throws(IssueMergeError) -> (survivor: Candidate, others: [Candidate]) {
        guard !others.isEmpty else { throw .nothingToMerge }
        var unique: [IssueID] = []
        for id in others where !unique.contains(id) { unique.append(id) }
        guard unique.count <= maxOthers else { throw .tooMany(unique.count) }
        guard let kept = found[survivor.rawValue], project.map({ $0.rawValue == kept.project }) ?? true else {
            throw .noSuchIssue(survivor)
        }
        var merged: [Candidate] = []
        for id in unique {
            guard id != survivor else { throw .intoItself(id) }
            guard let other = found[id.rawValue] else { throw .noSuchIssue(id) }
            // Another project's issue is refused: one project never changes (nor sees) another's issues.
            guard other.project == kept.project else { throw project == nil ? .otherProject(id) : .noSuchIssue(id) }
            merged.append(other)
        }
        if kept.isOverflow { throw .overflow(survivor) }
        if let held = merged.first(where: \.isOverflow) { throw .overflow(IssueID(held.id)) }
        return (kept, merged)
    }

    /// The survivor's first and last events and their releases once `other`'s events are its too (as `IssueSpan.add`
    /// would move them one event at a time: a release-less end keeps the other's release).
    public static func span(_ survivor: IssueSpan, merging other: IssueSpan) -> IssueSpan {
        var span = survivor
        if other.firstSeen < survivor.firstSeen {
            span.firstSeen = other.firstSeen
            span.firstRelease = other.firstRelease ?? survivor.firstRelease
        } else if span.firstRelease == nil {
            span.firstRelease = other.firstRelease
        }
        if other.lastSeen >= survivor.lastSeen {
            span.lastSeen = other.lastSeen
            span.lastRelease = other.lastRelease ?? survivor.lastRelease
        } else if span.lastRelease == nil {
            span.lastRelease = other.lastRelease
        }
        return span
    }

    /// The per-user rollups, summed per user (their key columns beside `issue_id`).
    static let perUser: [(table: String, keys: [String])] = [
        ("issue_users", ["user_key"]), ("issue_release_users", ["release", "user_key"]),
        ("issue_day_users", ["day", "user_key"]), ("issue_tag_users", ["key", "value", "user_key"]),
    ]

    /// The statements that merge `others` into `survivor`, one after the other, in order, for `dialect` (the
    /// survivor's span widening with each, `span(_:merging:)`). Run in one transaction after `check`.
    public static func statements(
        merging others: [Candidate], into survivor: Candidate, now: Int64, by: String?, dialect: SQLDialect
    ) -> [SQLStatement] {
        var span = survivor.span
        return others.flatMap { other in
            span = Self.span(span, merging: other.span)
            return statements(merging: other, into: survivor, span: span, now: now, by: by, dialect: dialect)
        }
    }

    /// The statements that merge `other` into `survivor` (the survivor's span already `span(_:merging:)` of the
    /// two), in order, for `dialect`: the same text on both engines but for placeholders.
    public static func statements(
        merging other: Candidate, into survivor: Candidate, span: IssueSpan, now: Int64, by: String?,
        dialect: SQLDialect
    ) -> [SQLStatement] {
        let (s, o) = (survivor.id, other.id)
        var statements: [SQLStatement] = []
        func add(_ make: (inout SQLBinds) -> String) {
            var binds = SQLBinds(dialect)
            let sql = make(&binds)
            statements.append(SQLStatement(sql: sql, values: binds.values))
        }
        add { "UPDATE reports SET issue_id = \($0.bind(s)) WHERE issue_id = \($0.bind(o))" }
        for (table, keys) in perUser {
            let columns = keys.joined(separator: ", ")
            add {
                """
                INSERT INTO \(table) (issue_id, \(columns), events)
                SELECT \($0.bind(s)), \(columns), events FROM \(table) WHERE issue_id = \($0.bind(o))
                ON CONFLICT (issue_id, \(columns)) DO UPDATE SET events = \(table).events + excluded.events
                """
            }
        }
        add {
            """
            INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen)
            SELECT \($0.bind(s)), release, events, 0, first_seen, last_seen FROM issue_releases WHERE issue_id = \($0.bind(o))
            ON CONFLICT (issue_id, release) DO UPDATE SET events = issue_releases.events + excluded.events,
                first_seen = CASE WHEN excluded.first_seen < issue_releases.first_seen
                    THEN excluded.first_seen ELSE issue_releases.first_seen END,
                last_seen = CASE WHEN excluded.last_seen > issue_releases.last_seen
                    THEN excluded.last_seen ELSE issue_releases.last_seen END
            """
        }
        add {
            """
            INSERT INTO issue_days (issue_id, day, events, users)
            SELECT \($0.bind(s)), day, events, 0 FROM issue_days WHERE issue_id = \($0.bind(o))
            ON CONFLICT (issue_id, day) DO UPDATE SET events = issue_days.events + excluded.events
            """
        }
        add {
            """
            INSERT INTO issue_tags (issue_id, key, value, events)
            SELECT \($0.bind(s)), key, value, events FROM issue_tags WHERE issue_id = \($0.bind(o))
            ON CONFLICT (issue_id, key, value) DO UPDATE SET events = issue_tags.events + excluded.events
            """
        }
        // The distinct-user counters, recounted from the per-user rows (one row per user: exact).
        add {
            """
            UPDATE issue_releases SET users = (SELECT count(*) FROM issue_release_users u
                WHERE u.issue_id = issue_releases.issue_id AND u.release = issue_releases.release)
            WHERE issue_id = \($0.bind(s))
            """
        }
        add {
            """
            UPDATE issue_days SET users = (SELECT count(*) FROM issue_day_users u
                WHERE u.issue_id = issue_days.issue_id AND u.day = issue_days.day)
            WHERE issue_id = \($0.bind(s))
            """
        }
        add {
            """
            UPDATE issue_tags SET users = (SELECT count(*) FROM issue_tag_users u
                WHERE u.issue_id = issue_tags.issue_id AND u.key = issue_tags.key AND u.value = issue_tags.value)
            WHERE issue_id = \($0.bind(s))
            """
        }
        add {
            let id = $0.bind(s)
            return """
                UPDATE issues SET events = events + \($0.bind(other.events)),
                    early_events = early_events + \($0.bind(other.earlyEvents)),
                    timed_events = timed_events + \($0.bind(other.timedEvents)),
                    users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = \(id)),
                    repeat_users = (SELECT count(*) FROM issue_users u WHERE u.issue_id = \(id) AND u.events > 1),
                    first_seen = \($0.bind(span.firstSeen)), last_seen = \($0.bind(span.lastSeen)),
                    first_release = \(optional(span.firstRelease, &$0)), last_release = \(optional(span.lastRelease, &$0)),
                    note = coalesce(note, (SELECT note FROM issues o WHERE o.id = \($0.bind(o)))),
                    updated_at = \($0.bind(now))
                WHERE id = \(id)
                """
        }
        // Its alert history follows its events; what was merged into it before now names the survivor.
        add { "UPDATE alerts SET issue_id = \($0.bind(s)) WHERE issue_id = \($0.bind(o))" }
        add { "UPDATE issue_aliases SET issue_id = \($0.bind(s)) WHERE issue_id = \($0.bind(o))" }
        add { "UPDATE issues_replaced SET survivor_id = \($0.bind(s)) WHERE survivor_id = \($0.bind(o))" }
        add {
            """
            INSERT INTO issue_aliases (project_id, fingerprint, issue_id, created_at)
            VALUES (\($0.bind(other.project)), \($0.bind(other.fingerprint)), \($0.bind(s)), \($0.bind(now)))
            ON CONFLICT (project_id, fingerprint) DO UPDATE SET issue_id = excluded.issue_id
            """
        }
        add {
            """
            INSERT INTO issues_replaced (issue_id, project_id, survivor_id, fingerprint, replaced_at, replaced_by)
            VALUES (\($0.bind(o)), \($0.bind(other.project)), \($0.bind(s)), \($0.bind(other.fingerprint)),
                \($0.bind(now)), \(optional(by, &$0)))
            ON CONFLICT (issue_id) DO UPDATE SET survivor_id = excluded.survivor_id
            """
        }
        // Its rollup rows go with it (ON DELETE CASCADE); they were added to the survivor's above.
        add { "DELETE FROM issues WHERE id = \($0.bind(o))" }
        return statements
    }

    /// The statements that split `fingerprint` out of `survivor` (of `project`): the alias and the replaced issue
    /// that had it go (the engine then queues the survivor's reports to be filed again). Run after `checkUnmerge`.
    public static func unmergeStatements(
        fingerprint: String, survivor: Int64, project: Int64, dialect: SQLDialect
    ) -> [SQLStatement] {
        var statements: [SQLStatement] = []
        var binds = SQLBinds(dialect)
        var sql =
            "DELETE FROM issue_aliases WHERE project_id = \(binds.bind(project)) AND fingerprint = \(binds.bind(fingerprint))"
        statements.append(SQLStatement(sql: sql, values: binds.values))
        binds = SQLBinds(dialect)
        sql =
            "DELETE FROM issues_replaced WHERE survivor_id = \(binds.bind(survivor)) AND fingerprint = \(binds.bind(fingerprint))"
        statements.append(SQLStatement(sql: sql, values: binds.values))
        return statements
    }

    /// What an unmerge of `fingerprint` out of `survivor` checks (at most one row: the survivor's `project_id`, and
    /// the issue `fingerprint` is an alias of in that project or NULL), for `dialect`; `checkUnmerge` reads it.
    public static func unmergeTarget(fingerprint: String, survivor: Int64, dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = """
            SELECT i.project_id, (SELECT a.issue_id FROM issue_aliases a
                WHERE a.project_id = i.project_id AND a.fingerprint = \(binds.bind(fingerprint)))
            FROM issues i WHERE i.id = \(binds.bind(survivor))
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// The survivor's project, from the row of `unmergeTarget` (nil: no such issue), or why the unmerge is refused:
    /// the survivor is not of `project` (the project the request acts for; nil: the admin), or `fingerprint` is not
    /// merged into it.
    public static func checkUnmerge(
        _ row: (project: Int64, aliasOf: Int64?)?, fingerprint: String, survivor: IssueID, project: ProjectID?
    ) throws(IssueMergeError) -> Int64 {
        guard let row, project.map({ $0.rawValue == row.project }) ?? true else { throw .noSuchIssue(survivor) }
        guard row.aliasOf == survivor.rawValue else { throw .notMerged(fingerprint: fingerprint, issue: survivor) }
        return row.project
    }

    /// The fingerprints merged into `issue` (rows: fingerprint, created_at, the merged issue's number or NULL),
    /// oldest first, for `dialect`.
    public static func mergedFingerprints(of issue: Int64, dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let id = binds.bind(issue)
        let sql = """
            SELECT a.fingerprint, a.created_at,
                (SELECT min(r.issue_id) FROM issues_replaced r WHERE r.survivor_id = a.issue_id AND r.fingerprint = a.fingerprint)
            FROM issue_aliases a WHERE a.issue_id = \(id) ORDER BY a.created_at, a.fingerprint
            """
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// A row of `mergedFingerprints(of:dialect:)`.
    public static func mergedFingerprint(_ row: some SQLRow) throws -> MergedFingerprint {
        MergedFingerprint(
            fingerprint: try row.text(0), mergedAt: try row.date(1),
            formerIssue: try row.integerOrNull(2).map { IssueID($0) })
    }

    /// The issue `issue` was merged into (one row: `survivor_id`), in `project` when given, for `dialect`.
    public static func replacement(of issue: Int64, project: Int64?, dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        var sql = "SELECT survivor_id FROM issues_replaced WHERE issue_id = \(binds.bind(issue))"
        if let project { sql += " AND project_id = \(binds.bind(project))" }
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// The candidates of `ids` (rows of `candidateColumns`), for `dialect`.
    public static func candidates(_ ids: [Int64], dialect: SQLDialect) -> SQLStatement {
        var binds = SQLBinds(dialect)
        let sql = "SELECT \(candidateColumns) FROM issues WHERE id IN (\(binds.bind(list: ids))) ORDER BY id"
        return SQLStatement(sql: sql, values: binds.values)
    }

    /// `value` bound, or NULL.
    static func optional(_ value: String?, _ binds: inout SQLBinds) -> String {
        value.map { binds.bind($0) } ?? "NULL"
    }
}

/// A fingerprint merged into an issue: future events of it file into the issue.
public struct MergedFingerprint: Sendable, Equatable {
    public var fingerprint: String
    public var mergedAt: Date
    /// The issue that had it before the merge (nil: unknown).
    public var formerIssue: IssueID?

    public init(fingerprint: String, mergedAt: Date, formerIssue: IssueID?) {
        self.fingerprint = fingerprint
        self.mergedAt = mergedAt
        self.formerIssue = formerIssue
    }
}

/// What a merge did.
public struct IssueMergeResult: Sendable, Equatable {
    public var survivor: IssueID
    public var project: ProjectID
    /// The issues merged into it, in the order asked.
    public var merged: [IssueID]

    public init(survivor: IssueID, project: ProjectID, merged: [IssueID]) {
        self.survivor = survivor
        self.project = project
        self.merged = merged
    }
}

/// What an unmerge did: the reports queued to be filed again.
public struct IssueUnmergeResult: Sendable, Equatable {
    public var survivor: IssueID
    public var fingerprint: String
    public var requeued: Int

    public init(survivor: IssueID, fingerprint: String, requeued: Int) {
        self.survivor = survivor
        self.fingerprint = fingerprint
        self.requeued = requeued
    }
}

/// Why a merge or an unmerge was refused.
public enum IssueMergeError: Error, Equatable, CustomStringConvertible {
    case nothingToMerge
    case tooMany(Int)
    /// No such issue (in the project the request acts for).
    case noSuchIssue(IssueID)
    /// The issue belongs to another project than the survivor's.
    case otherProject(IssueID)
    case intoItself(IssueID)
    /// The project's overflow issue (new issues past the cap) neither merges nor takes merges.
    case overflow(IssueID)
    /// The fingerprint is not one merged into the issue.
    case notMerged(fingerprint: String, issue: IssueID)

    public var description: String {
        switch self {
        case .nothingToMerge: "name at least one issue to merge into the survivor"
        case .tooMany(let count): "\(count) issues: a merge takes at most \(IssueMerge.maxOthers)"
        case .noSuchIssue(let id): "no issue \(id.rawValue) in this project"
        case .otherProject(let id):
            "issue \(id.rawValue) belongs to another project: issues merge only within one project"
        case .intoItself(let id): "issue \(id.rawValue) cannot be merged into itself"
        case .overflow(let id):
            "issue \(id.rawValue) holds new issues past the project's cap: it cannot be merged"
        case .notMerged(let fingerprint, let issue):
            "fingerprint \(fingerprint) was not merged into issue \(issue.rawValue)"
        }
    }

    /// The request field the refusal is about: the fingerprint an unmerge named, else the issues a merge named.
    public var field: String {
        if case .notMerged = self { return "fingerprint" }
        return "issues"
    }

    /// The request named an issue that does not exist (404), rather than a merge that cannot be (400).
    public var isNotFound: Bool {
        switch self {
        case .noSuchIssue, .notMerged: true
        default: false
        }
    }
}
