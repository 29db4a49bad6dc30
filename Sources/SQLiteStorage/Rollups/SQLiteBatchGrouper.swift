import FaultlineCore
import GRDB

/// The report's columns filing reads, by position: GRDB lowercases a column name at every lookup by name, nine a
/// report here. The SQLite row of what `FilingPlanner.Report` is made from (PostgreSQL's also carries the partition
/// key, and stores `early` as a boolean).
struct FiledReport {
    var project: ProjectID
    var kind: String
    var occurredAt: Int64
    var release: String?
    var userKey: String?
    var sessionID: String?
    var issueID: Int64?
    var early: Int?
    var groupingVersion: Int?

    /// The columns `init(_:)` reads, in its order.
    static let columns =
        "project_id, kind, occurred_at, release, user_key, session_id, issue_id, early, grouping_version"

    init(_ row: Row) {
        project = ProjectID(row[0] as Int64)
        kind = row[1]
        occurredAt = row[2]
        release = row[3]
        userKey = row[4]
        sessionID = row[5]
        issueID = row[6]
        early = row[7]
        groupingVersion = row[8]
    }
}

/// Files a batch of reports under their issues inside the symbolication result's transaction: the twin of
/// `PostgresBatchGrouper`. Reads the state a filing plan needs (`readFilingState`), asks `FilingPlanner.plan` (pure, in
/// FaultlineCore) what to do, and writes the plan (`write`): each row of each table once per batch, the counters summed
/// in memory, where filing one report at a time wrote an issue's row, its release, day and user rows again for every
/// report. New-issue and regression alerts are recorded exactly once, because they commit with the decision.
///
/// Reports filed before (moving between issues after late symbols, or migrating to a new grouping version) are in the
/// same plan, in the batch's order: `FilingPlanner` takes them off their old issues and deletes an issue they empty.
enum SQLiteBatchGrouper {
    struct Filing {
        var id: Int64
        var report: FiledReport
        var input: GroupingInput
        var groupingJSON: String
    }

    /// Files `filings` (in the batch's order, each report once) in the caller's transaction; each report's issue and
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
                tags: filing.input.tags.map { (key: $0.key, value: $0.value) }, hang: filing.input.hang)
        }
        let state = try readFilingState(for: reports, now: now, reads: reads, db)
        let plan = try FilingPlanner.plan(reports, state: state, now: now)
        return try write(plan, db)
    }

    /// Reads what planning `reports` needs: their issues, else the issues their fingerprints were merged into, the
    /// issues reports filed before are under (and whether others were merged into them), the releases closed ones
    /// and those reports move out of were seen in, the alert settings of their projects, the new-issue budget of
    /// those that may create an issue (and the overflow issue of those that may reach their cap), the start of their
    /// sessions.
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
        // A fingerprint with no issue of its own may have been merged into one (`IssueMerge`).
        for key in needs.keys where state.issues[key] == nil {
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(
                        sql:
                            "\(issueColumns) WHERE id = (SELECT issue_id FROM issue_aliases WHERE project_id = ? AND fingerprint = ?)"
                    ), arguments: [key.project, key.fingerprint])
            else { continue }
            let survivor = issue(row)
            state.issues[FilingPlanner.IssueKey(project: key.project, fingerprint: row[2])] = survivor
            state.aliases[key] = survivor.state.id
        }
        for id in needs.current {
            guard let (key, issue) = try current(id, db) else { continue }
            state.issues[key] = issue
            if try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM issue_aliases WHERE issue_id = ?)"),
                arguments: [id]) == true
            {
                state.survivors.insert(id)
            }
        }
        // Whether a closed issue was seen in a report's release decides a regression; the events of the rows reports
        // move out of tell when a move empties one (`FilingPlanner.Issue.releaseEvents`).
        let moving = Set(needs.current)
        for (key, issue) in state.issues where issue.state.status == .closed || moving.contains(issue.state.id) {
            for release in needs.releases {
                guard let events = try events(issue: issue.state.id, inRelease: release, db) else { continue }
                state.issues[key]?.releases.insert(release)
                state.issues[key]?.releaseEvents[release] = events
            }
        }
        for project in needs.projects {
            state.settings[project] = try reads.alertSettings(project: ProjectID(project), db)
        }
        for (project, more) in needs.creating(given: state.issues, aliases: state.aliases) {
            let (budget, overflow) = try newIssueBudget(
                project: ProjectID(project), settings: state.settings[project] ?? AlertSettings(), now: now, more: more,
                beyond: needs.moving[project] ?? 0, db)
            state.budgets[project] = budget
            if let overflow, state.issues[.overflow(project: project)] == nil {
                state.issues[.overflow(project: project)] = overflow
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
        try Row.fetchOne(db.cachedStatement(sql: sql), arguments: arguments).map(issue)
    }

    static func issue(_ row: Row) -> FilingPlanner.Issue {
        FilingPlanner.Issue(
            state: IssueFiling.IssueState(id: row[0], status: row[1], fingerprint: row[2], titleRank: row[3]),
            title: row[4],
            span: IssueSpan(firstSeen: row[5], lastSeen: row[6], firstRelease: row[7], lastRelease: row[8]))
    }

    /// An issue a report moves out of, by id, with what only moves need: its events (emptied, it goes), its status
    /// marks (a split keeps them) and when it was created (deleted, it gives back its place in the window).
    static func current(_ id: Int64, _ db: Database) throws -> (FilingPlanner.IssueKey, FilingPlanner.Issue)? {
        guard
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        SELECT id, status, fingerprint, title_rank, title, first_seen, last_seen, first_release, last_release,
                            project_id, events, regressed, status_changed_at, status_changed_by, created_at
                        FROM issues WHERE id = ?
                        """), arguments: [id])
        else { return nil }
        var issue = issue(row)
        issue.events = row[10]
        (issue.regressed, issue.statusChangedAt, issue.statusChangedBy, issue.createdAt) = (
            (row[11] as Int) != 0, row[12], row[13], row[14]
        )
        return (FilingPlanner.IssueKey(project: row[9], fingerprint: row[2]), issue)
    }

    /// The project's new-issue budget in the window that holds `now`: the issues it created in it, counted in the
    /// index `issues_by_created (project_id, created_at)` and no further than the cap and `beyond` more (so a read
    /// costs at most that many index entries, whatever the project's size; `beyond` is how many issues the batch may
    /// delete), and its overflow issue once the cap is reached or may be by creating `more` issues.
    static func newIssueBudget(
        project: ProjectID, settings: AlertSettings, now: Int64, more: Int = 0, beyond: Int = 0, _ db: Database
    ) throws -> (IssueFiling.NewIssueBudget, overflow: FilingPlanner.Issue?) {
        let window = IssueFiling.window(containing: now, minutes: settings.newIssueWindowMinutes)
        let limit = max(0, settings.newIssueCap).addingReportingOverflow(max(0, beyond))
        let created =
            try Int.fetchOne(
                db.cachedStatement(
                    sql:
                        "SELECT count(*) FROM (SELECT 1 FROM issues WHERE project_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)"
                ),
                arguments: [
                    project.rawValue, window.lowerBound, window.upperBound,
                    limit.overflow ? Int.max : limit.partialValue,
                ]) ?? 0
        var budget = IssueFiling.NewIssueBudget(cap: settings.newIssueCap, createdInWindow: created, overflow: nil)
        guard created.addingReportingOverflow(more).partialValue >= budget.cap else { return (budget, nil) }
        let overflow = try issue(
            sql: "\(issueColumns) WHERE project_id = ? AND fingerprint = ?",
            arguments: [project.rawValue, IssueFiling.overflowFingerprint.rawValue], db)
        budget.overflow = overflow?.state
        return (budget, overflow)
    }

    /// The events of `issue` in `release` (nil: never seen in it): a closed issue seen in a report's release does not
    /// regress by it.
    static func events(issue: Int64, inRelease release: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT events FROM issue_releases WHERE issue_id = ? AND release = ?"),
            arguments: [issue, release])
    }

    /// Writes `plan` in the caller's transaction: its new issues and deletions in their order, then each rollup row
    /// once (the per-user rows first: how their counts cross 0 and 1 moves the distinct-user counters above them), each
    /// issue once, its alerts. Each report's issue and early flag, its plan id resolved.
    static func write(_ plan: FilingPlan, _ db: Database) throws -> [Int64: (issueID: Int64, early: Int?)] {
        let created = try writeIssuesAndDeletions(plan, db)
        func id(_ planID: Int64) throws -> Int64 {
            if planID > 0 { return planID }
            let index = Int(-(planID + 1))
            guard created.indices.contains(index) else {
                throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "a new issue of the batch was not created")
            }
            return created[index]
        }
        for alias in plan.newAliases {
            try db.cachedStatement(
                sql: """
                    INSERT INTO issue_aliases (project_id, fingerprint, issue_id, created_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (project_id, fingerprint) DO UPDATE SET issue_id = excluded.issue_id
                    """
            ).execute(arguments: [alias.key.project, alias.key.fingerprint, try id(alias.issue), plan.now])
        }
        let issues = try writeRollups(plan.deltas, resolving: id, db)
        try writeIssues(issues, plan: plan, resolving: id, db)
        for draft in try plan.drafts(resolving: id) { try AlertRecords.insert(draft, at: plan.now, db) }
        return try plan.filed.mapValues { (issueID: try id($0.issue), early: $0.early.map { $0 ? 1 : 0 }) }
    }

    /// Inserts the plan's new issues and deletes the issues it empties, in the plan's order (a deleted issue's
    /// fingerprint may be created again after it); the ids of the new issues, in order.
    static func writeIssuesAndDeletions(_ plan: FilingPlan, _ db: Database) throws -> [Int64] {
        var created: [Int64] = []
        created.reserveCapacity(plan.newIssues.count)
        func insert(upTo end: Int) throws {
            while created.count < min(end, plan.newIssues.count) {
                let issue = plan.newIssues[created.count]
                guard
                    issue.status != .open || issue.regressed || issue.statusChangedAt != nil
                        || issue.statusChangedBy != nil
                else {
                    // Open, as almost every new issue is: the columns' defaults.
                    try db.cachedStatement(
                        sql: """
                            INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen,
                                last_seen, first_release, last_release, updated_at, created_at, hang)
                            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?9, ?10, ?10, ?11)
                            """
                    ).execute(arguments: [
                        issue.key.project, issue.key.fingerprint, issue.kind, issue.grouping, issue.title,
                        issue.culprit,
                        issue.titleRank, issue.occurredAt, issue.release, plan.now, issue.hang ? 1 : 0,
                    ])
                    created.append(db.lastInsertedRowID)
                    continue
                }
                // Split from an issue by a migration: with its status.
                try db.cachedStatement(
                    sql: """
                        INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen,
                            last_seen, first_release, last_release, updated_at, created_at, status, regressed,
                            status_changed_at, status_changed_by, hang)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8, ?9, ?9, ?10, ?10, ?11, ?12, ?13, ?14, ?15)
                        """
                ).execute(arguments: [
                    issue.key.project, issue.key.fingerprint, issue.kind, issue.grouping, issue.title, issue.culprit,
                    issue.titleRank, issue.occurredAt, issue.release, plan.now, issue.status.rawValue,
                    issue.regressed ? 1 : 0, issue.statusChangedAt, issue.statusChangedBy, issue.hang ? 1 : 0,
                ])
                created.append(db.lastInsertedRowID)
            }
        }
        for deletion in plan.deletions {
            try insert(upTo: deletion.afterNewIssues)
            if let to = deletion.alertsTo {
                let target = to > 0 ? to : created[Int(-(to + 1))]
                try db.cachedStatement(sql: "UPDATE alerts SET issue_id = ? WHERE issue_id = ?")
                    .execute(arguments: [target, deletion.issue])
            }
            // Its rollup rows go with it (ON DELETE CASCADE).
            try db.cachedStatement(sql: "DELETE FROM issues WHERE id = ?").execute(arguments: [deletion.issue])
        }
        try insert(upTo: plan.newIssues.count)
        return created
    }

    /// The per-user tables' statements, written once.
    enum UserShapes {
        static let users = CountedRow.Shape(table: "issue_users", keys: ["issue_id", "user_key"], counters: ["events"])
        static let releaseUsers = CountedRow.Shape(
            table: "issue_release_users", keys: ["issue_id", "release", "user_key"], counters: ["events"])
        static let dayUsers = CountedRow.Shape(
            table: "issue_day_users", keys: ["issue_id", "day", "user_key"], counters: ["events"])
        static let tagUsers = CountedRow.Shape(
            table: "issue_tag_users", keys: ["issue_id", "key", "value", "user_key"], counters: ["events"])
    }

    /// Tags an upsert writes at most (a report has a handful: device, OS, environment).
    static let tagsPerInsert = 16

    /// Writes each rollup row once, the per-user rows first; the issues' counter deltas with the distinct-user
    /// counters their rows moved, by issue id.
    ///
    /// The rollups are the counters on `issues` and the per-release, per-day, per-user and per-tag tables (the tags'
    /// distinct users from `issue_tag_users`). A report's contribution is added and taken off by exactly inverse
    /// deltas, which is what lets a report move between issues (late symbols) and keeps every counter equal to a
    /// recount from the reports (`GroupingConformanceTests` recounts). A contribution's user is already its rollup key
    /// (`RollupUserKeys`): the per-user tables never hold a user id.
    static func writeRollups(_ d: IssueRollupDeltas, resolving id: (Int64) throws -> Int64, _ db: Database) throws
        -> [Int64: IssueRollupDeltas.Counts]
    {
        var issues: [Int64: IssueRollupDeltas.Counts] = [:]
        for (issue, counts) in d.issues { issues[try id(issue)] = counts }
        var releases: [IssueRollupDeltas.ReleaseKey: IssueRollupDeltas.ReleaseCounts] = [:]
        for (key, counts) in d.releases {
            releases[IssueRollupDeltas.ReleaseKey(issue: try id(key.issue), release: key.release)] = counts
        }
        var days: [IssueRollupDeltas.DayKey: IssueRollupDeltas.DayCounts] = [:]
        for (key, counts) in d.days { days[IssueRollupDeltas.DayKey(issue: try id(key.issue), day: key.day)] = counts }

        for (key, delta) in d.users where delta != 0 {
            let issue = try id(key.issue)
            let (before, after) = try CountedRow.bumpValues(
                UserShapes.users, values: [issue, key.user.text], by: [Int(delta)], db)
            issues[issue, default: .init()].users &+= Int64(
                CounterDeltas.crossing(0, before: before[0], after: after[0]))
            issues[issue, default: .init()].repeatUsers &+= Int64(
                CounterDeltas.crossing(1, before: before[0], after: after[0]))
        }
        for (key, delta) in d.releaseUsers where delta != 0 {
            let issue = try id(key.issue)
            let (appeared, _) = try CountedRow.bump(
                UserShapes.releaseUsers, values: [issue, key.release.text, key.user.text], by: [Int(delta)], db)
            releases[IssueRollupDeltas.ReleaseKey(issue: issue, release: key.release)]?.users &+= Int64(appeared)
        }
        for (key, delta) in d.dayUsers where delta != 0 {
            let issue = try id(key.issue)
            let (appeared, _) = try CountedRow.bump(
                UserShapes.dayUsers, values: [issue, key.day, key.user.text], by: [Int(delta)], db)
            days[IssueRollupDeltas.DayKey(issue: issue, day: key.day)]?.users &+= Int64(appeared)
        }
        var tagUsers: [IssueRollupDeltas.TagKey: Int64] = [:]
        for (key, delta) in d.tagUsers where delta != 0 {
            let issue = try id(key.issue)
            let (appeared, _) = try CountedRow.bump(
                UserShapes.tagUsers, values: [issue, key.key.text, key.value.text, key.user.text], by: [Int(delta)], db)
            if appeared != 0 {
                tagUsers[IssueRollupDeltas.TagKey(issue: issue, key: key.key, value: key.value), default: 0] &+= Int64(
                    appeared)
            }
        }
        for (key, counts) in releases {
            if counts.events > 0 {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                        ON CONFLICT (issue_id, release) DO UPDATE SET events = events + excluded.events, users = users + excluded.users,
                            first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen)
                        """
                ).execute(arguments: [
                    key.issue, key.release.text, counts.events, counts.users, counts.firstSeen, counts.lastSeen,
                ])
                continue
            }
            // A row losing events (reports moved out of its issue) goes at 0 (its CHECK keeps a row above it), else
            // keeps its bounds.
            try db.cachedStatement(
                sql: "DELETE FROM issue_releases WHERE issue_id = ? AND release = ? AND events + ? <= 0"
            ).execute(arguments: [key.issue, key.release.text, counts.events])
            try db.cachedStatement(
                sql: """
                    UPDATE issue_releases SET events = events + ?3, users = max(users + ?4, 0),
                        first_seen = min(first_seen, ?5), last_seen = max(last_seen, ?6)
                    WHERE issue_id = ?1 AND release = ?2
                    """
            ).execute(arguments: [
                key.issue, key.release.text, counts.events, counts.users, counts.firstSeen, counts.lastSeen,
            ])
        }
        // A row a move emptied and later reports filled again: its bounds are theirs alone.
        for (key, counts) in releases where counts.replacesBounds {
            try db.cachedStatement(
                sql: "UPDATE issue_releases SET first_seen = ?, last_seen = ? WHERE issue_id = ? AND release = ?"
            ).execute(arguments: [counts.firstSeen, counts.lastSeen, key.issue, key.release.text])
        }
        for (key, counts) in days {
            if counts.events > 0 {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO issue_days (issue_id, day, events, users) VALUES (?1, ?2, ?3, ?4)
                        ON CONFLICT (issue_id, day) DO UPDATE SET events = events + excluded.events, users = users + excluded.users
                        """
                ).execute(arguments: [key.issue, key.day, counts.events, counts.users])
                continue
            }
            try db.cachedStatement(sql: "DELETE FROM issue_days WHERE issue_id = ? AND day = ? AND events + ? <= 0")
                .execute(arguments: [key.issue, key.day, counts.events])
            try db.cachedStatement(
                sql: """
                    UPDATE issue_days SET events = events + ?3, users = max(users + ?4, 0)
                    WHERE issue_id = ?1 AND day = ?2
                    """
            ).execute(arguments: [key.issue, key.day, counts.events, counts.users])
        }
        var added: [(key: IssueRollupDeltas.TagKey, events: Int64)] = []
        for (key, events) in d.tags where events != 0 {
            let tag = IssueRollupDeltas.TagKey(issue: try id(key.issue), key: key.key, value: key.value)
            if events > 0 {
                added.append((tag, events))
                continue
            }
            try db.cachedStatement(
                sql: "DELETE FROM issue_tags WHERE issue_id = ? AND key = ? AND value = ? AND events + ? <= 0"
            ).execute(arguments: [tag.issue, tag.key.text, tag.value.text, events])
            try db.cachedStatement(
                sql: "UPDATE issue_tags SET events = events + ? WHERE issue_id = ? AND key = ? AND value = ?"
            ).execute(arguments: [events, tag.issue, tag.key.text, tag.value.text])
        }
        try MultiRowInsert.run(
            added, into: "issue_tags", columns: ["issue_id", "key", "value", "events"],
            perStatement: tagsPerInsert,
            onConflict: "(issue_id, key, value) DO UPDATE SET events = events + excluded.events", db
        ) { tag in [tag.key.issue, tag.key.key.text, tag.key.value.text, tag.events] }
        // The tags' distinct users, once their rows exist (a row the batch emptied is gone: nothing to move).
        for (tag, users) in tagUsers where users != 0 {
            try db.cachedStatement(
                sql: "UPDATE issue_tags SET users = max(users + ?, 0) WHERE issue_id = ? AND key = ? AND value = ?"
            ).execute(arguments: [users, tag.issue, tag.key.text, tag.value.text])
        }
        return issues
    }

    /// Each changed issue once: its counters by their deltas (a removal never below 0); first and last events and
    /// releases as the plan computed them (the write transaction holds the database); rekey, title and reopening as
    /// decided.
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
                    UPDATE issues SET events = max(events + ?1, 0), early_events = max(early_events + ?2, 0),
                        timed_events = max(timed_events + ?3, 0), users = users + ?4, repeat_users = repeat_users + ?5,
                        first_seen = ?6, last_seen = ?7, first_release = ?8, last_release = ?9, updated_at = ?10
                    WHERE id = ?11
                    """
            ).execute(arguments: [
                counts.events, counts.early, counts.timed, counts.users, counts.repeatUsers, span.firstSeen,
                span.lastSeen,
                span.firstRelease, span.lastRelease, plan.now, issue,
            ])
            if let rekey = planned.rekey {
                try db.cachedStatement(
                    sql:
                        "UPDATE issues SET fingerprint = ?, grouping = ?, title = ?, culprit = ?, title_rank = ?, kind = ?, hang = ? WHERE id = ?"
                ).execute(arguments: [
                    rekey.fingerprint, rekey.grouping, rekey.title, rekey.culprit, rekey.rank, rekey.kind,
                    rekey.hang ? 1 : 0, issue,
                ])
            }
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
