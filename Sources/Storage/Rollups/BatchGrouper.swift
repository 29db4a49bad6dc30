import FaultlineCore
import GRDB

/// Files many reports under their issues at once, for reports never filed before (every new crash): the twin of
/// `PostgresBatchGrouper`. Reads the state a filing plan needs (`readFilingState`), asks `FilingPlanner.plan` (pure, in
/// FaultlineCore), and writes the plan (`write`): each row of each table once per batch, the counters summed in memory,
/// where filing one report at a time wrote an issue's row, its release, day and user rows again for every report.
///
/// A report filed before (moving between issues after late symbols, or migrating to a new grouping version) is not
/// given here: `SQLiteSymbolicationStore.saveAll` writes the plan of the reports before it and files it alone
/// (`Grouper.file`), in its place in the batch's order, so every decision sees what the reports before it did.
enum BatchGrouper {
    struct Filing {
        var id: Int64
        var report: FiledReport
        var input: GroupingInput
        var groupingJSON: String
    }

    /// Files `filings` (in the batch's order, none filed before) in the caller's transaction; each report's issue and
    /// early flag (1/0, nil when unknown), by report id.
    static func file(_ filings: [Filing], now: Int64, reads: BatchReads, _ db: Database) throws -> [Int64: (
        issueID: Int64, early: Int?
    )] {
        guard !filings.isEmpty else { return [:] }
        let users = RollupUserKeys.Keyer()
        let reports = try filings.map { filing in
            let report = filing.report
            return FilingPlanner.Report(
                id: filing.id, project: report.project, kind: report.kind, occurredAt: report.occurredAt,
                release: report.release,
                user: try users.key(report.userKey, project: report.project, db), sessionID: report.sessionID,
                issueID: report.issueID, early: report.early.map { $0 == 1 },
                groupingVersion: report.groupingVersion ?? Grouping.version,
                grouping: filing.input.grouping, groupingJSON: filing.groupingJSON,
                tags: filing.input.tags.map { (key: $0.key, value: $0.value) })
        }
        let state = try readFilingState(for: reports, now: now, reads: reads, db)
        let plan = try FilingPlanner.plan(reports, state: state, now: now)
        return try write(plan, db)
    }

    /// Reads what planning `reports` needs: their issues, the releases closed ones were seen in, the alert settings of
    /// their projects, the new-issue budget of those with a new fingerprint (and the overflow issue of those that may
    /// reach their cap), the start of their sessions.
    static func readFilingState(for reports: [FilingPlanner.Report], now: Int64, reads: BatchReads, _ db: Database)
        throws
        -> FilingPlanner.State
    {
        let needs = FilingPlanner.Needs(reports)
        var state = FilingPlanner.State()
        for key in needs.keys {
            state.issues[key] = try issue(
                sql: "\(issueColumns) WHERE project_id = ? AND fingerprint = ?",
                arguments: [key.project, key.fingerprint], db)
        }
        // Whether a closed issue was seen in a report's release decides a regression.
        for (key, issue) in state.issues where issue.state.status == .closed {
            for release in needs.releases where try Grouper.seen(issue: issue.state.id, inRelease: release, db) {
                state.issues[key]?.releases.insert(release)
            }
        }
        for project in needs.projects {
            state.settings[project] = try reads.alertSettings(project: ProjectID(project), db)
        }
        for (project, more) in needs.creating(given: state.issues) {
            let budget = try Grouper.newIssueBudget(
                project: ProjectID(project), settings: state.settings[project] ?? AlertSettings(), now: now, more: more,
                db)
            state.budgets[project] = budget
            if let overflow = budget.overflow {
                state.issues[.overflow(project: project)] = try issue(
                    sql: "\(issueColumns) WHERE id = ?", arguments: [overflow.id], db)
            }
        }
        for session in needs.sessions {
            state.sessions[session] = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT started_at FROM sessions WHERE project_id = ? AND session_id = ?"),
                arguments: [session.project, session.session])
        }
        return state
    }

    static let issueColumns =
        "SELECT id, status, fingerprint, title_rank, title, first_seen, last_seen, first_release, last_release FROM issues"

    static func issue(sql: String, arguments: StatementArguments, _ db: Database) throws -> FilingPlanner.Issue? {
        try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments).map { row in
            FilingPlanner.Issue(
                state: IssueFiling.IssueState(id: row[0], status: row[1], fingerprint: row[2], titleRank: row[3]),
                title: row[4],
                span: IssueSpan(firstSeen: row[5], lastSeen: row[6], firstRelease: row[7], lastRelease: row[8]))
        }
    }

    /// Writes `plan` in the caller's transaction: its new issues, then each rollup row once (the per-user rows first:
    /// how their counts cross 0 and 1 moves the distinct-user counters above them), each issue once, its alerts. Each
    /// report's issue and early flag, its plan id resolved.
    static func write(_ plan: FilingPlan, _ db: Database) throws -> [Int64: (issueID: Int64, early: Int?)] {
        let now = plan.now
        var created: [Int64] = []
        created.reserveCapacity(plan.newIssues.count)
        for issue in plan.newIssues {
            try db.cachedStatement(
                sql: """
                    INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen,
                        last_seen, first_release, last_release, updated_at, created_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?9, ?10, ?10)
                    """
            ).execute(arguments: [
                issue.key.project, issue.key.fingerprint, issue.kind, issue.grouping, issue.title, issue.culprit,
                issue.titleRank,
                issue.occurredAt, issue.release, now,
            ])
            created.append(db.lastInsertedRowID)
        }
        func id(_ planID: Int64) throws -> Int64 {
            if planID > 0 { return planID }
            let index = Int(-(planID + 1))
            guard created.indices.contains(index) else {
                throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "a new issue of the batch was not created")
            }
            return created[index]
        }
        let d = plan.deltas
        var issues: [Int64: IssueRollupDeltas.Counts] = [:]
        for (issue, counts) in d.issues { issues[try id(issue)] = counts }
        var releases: [IssueRollupDeltas.ReleaseKey: IssueRollupDeltas.ReleaseCounts] = [:]
        for (key, counts) in d.releases {
            releases[IssueRollupDeltas.ReleaseKey(issue: try id(key.issue), release: key.release)] = counts
        }
        var days: [IssueRollupDeltas.DayKey: IssueRollupDeltas.DayCounts] = [:]
        for (key, counts) in d.days { days[IssueRollupDeltas.DayKey(issue: try id(key.issue), day: key.day)] = counts }

        for (key, delta) in d.users {
            let issue = try id(key.issue)
            let (before, after) = try CountedRow.bumpValues(
                IssueRollup.Shapes.users, values: [issue, key.user.text], by: [Int(delta)], db)
            issues[issue, default: .init()].users &+= Int64(
                CounterDeltas.crossing(0, before: before[0], after: after[0]))
            issues[issue, default: .init()].repeatUsers &+= Int64(
                CounterDeltas.crossing(1, before: before[0], after: after[0]))
        }
        for (key, delta) in d.releaseUsers {
            let issue = try id(key.issue)
            let (appeared, _) = try CountedRow.bump(
                IssueRollup.Shapes.releaseUsers, values: [issue, key.release.text, key.user.text], by: [Int(delta)], db)
            releases[IssueRollupDeltas.ReleaseKey(issue: issue, release: key.release)]?.users &+= Int64(appeared)
        }
        for (key, delta) in d.dayUsers {
            let issue = try id(key.issue)
            let (appeared, _) = try CountedRow.bump(
                IssueRollup.Shapes.dayUsers, values: [issue, key.day, key.user.text], by: [Int(delta)], db)
            days[IssueRollupDeltas.DayKey(issue: issue, day: key.day)]?.users &+= Int64(appeared)
        }
        for (key, counts) in releases {
            try db.cachedStatement(
                sql: """
                    INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                    ON CONFLICT (issue_id, release) DO UPDATE SET events = events + excluded.events, users = users + excluded.users,
                        first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
                    """
            ).execute(arguments: [
                key.issue, key.release.text, counts.events, counts.users, counts.firstSeen, counts.lastSeen,
            ])
        }
        for (key, counts) in days {
            try db.cachedStatement(
                sql: """
                    INSERT INTO issue_days (issue_id, day, events, users) VALUES (?1, ?2, ?3, ?4)
                    ON CONFLICT (issue_id, day) DO UPDATE SET events = events + excluded.events, users = users + excluded.users
                    """
            ).execute(arguments: [key.issue, key.day, counts.events, counts.users])
        }
        let tags = try d.tags.map {
            (
                key: IssueRollupDeltas.TagKey(issue: try id($0.key.issue), key: $0.key.key, value: $0.key.value),
                events: $0.value
            )
        }
        try MultiRowInsert.run(
            tags, into: "issue_tags", columns: ["issue_id", "key", "value", "events"],
            perStatement: IssueRollup.tagsPerInsert,
            onConflict: "(issue_id, key, value) DO UPDATE SET events = events + excluded.events", db
        ) { tag in [tag.key.issue, tag.key.key.text, tag.key.value.text, tag.events] }
        try writeIssues(issues, plan: plan, resolving: id, db)
        for draft in try plan.drafts(resolving: id) { try AlertRecords.insert(draft, at: now, db) }
        return try plan.filed.mapValues { (issueID: try id($0.issue), early: $0.early.map { $0 ? 1 : 0 }) }
    }

    /// Each counted issue once: its counters by their deltas; first and last events and releases as the plan computed
    /// them (the write transaction holds the database); title and reopening as decided.
    static func writeIssues(
        _ issues: [Int64: IssueRollupDeltas.Counts], plan: FilingPlan, resolving id: (Int64) throws -> Int64,
        _ db: Database
    ) throws {
        for planned in plan.issuesByKey.values {
            let issue = try id(planned.state.id)
            let counts = issues[issue] ?? .init()
            let span = planned.span
            try db.cachedStatement(
                sql: """
                    UPDATE issues SET events = events + ?1, early_events = early_events + ?2, timed_events = timed_events + ?3,
                        users = users + ?4, repeat_users = repeat_users + ?5, first_seen = ?6, last_seen = ?7,
                        first_release = ?8, last_release = ?9, updated_at = ?10
                    WHERE id = ?11
                    """
            ).execute(arguments: [
                counts.events, counts.early, counts.timed, counts.users, counts.repeatUsers, span.firstSeen,
                span.lastSeen,
                span.firstRelease, span.lastRelease, plan.now, issue,
            ])
            if let retitle = planned.retitle {
                try db.cachedStatement(
                    sql: "UPDATE issues SET grouping = ?, title = ?, culprit = ?, title_rank = ? WHERE id = ?"
                )
                .execute(arguments: [retitle.grouping, retitle.title, retitle.culprit, retitle.rank, issue])
            }
            if planned.reopened {
                try db.cachedStatement(
                    sql:
                        "UPDATE issues SET status = 'open', regressed = 1, status_changed_at = ?, status_changed_by = NULL WHERE id = ?"
                ).execute(arguments: [plan.now, issue])
            }
        }
    }
}
