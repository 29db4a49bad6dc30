import FaultlineCore
import GRDB

/// The report's columns grouping reads, by position (GRDB lowercases a column name at every lookup by name; a
/// report's filing read ten of them).
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
    static let columns = "project_id, kind, occurred_at, release, user_key, session_id, issue_id, early, grouping_version"

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

/// Files a report under its issue inside the symbolication result's transaction: reads the state the decision
/// needs, asks `IssueFiling.decide` (pure, in FaultlineCore) what to do, and applies its actions — so new-issue
/// and regression alerts are recorded exactly once, because they commit with the decision.
enum Grouper {
    /// Applies the filing of `report` to the issues and their rollups; returns the report's issue and whether it came
    /// early in its session (1/0, nil when unknown), for the caller to write on the report's row with the rest of it.
    static func file(report: FiledReport, grouping input: GroupingInput, groupingJSON: String, now: Int64,
                     reads: BatchReads, _ db: Database) throws -> (issueID: Int64, early: Int?) {
        let project = report.project
        let occurredAt = report.occurredAt
        let release = report.release
        let oldIssue = report.issueID
        let g = input.grouping

        let current = try oldIssue.flatMap { try state(issueID: $0, db) }
        let target = try state(project: project, fingerprint: g.fingerprint, db)
        let seenInRelease = try target.map { target in
            try release.map { try seen(issue: target.id, inRelease: $0, db) } ?? true
        } ?? false
        let settings = try reads.alertSettings(project: project, db)
        let budget = try target == nil ? newIssueBudget(project: project, settings: settings, now: now, db) : nil
        let decision = IssueFiling.Input(
            grouping: g, current: current, reportGroupingVersion: report.groupingVersion ?? Grouping.version,
            target: target, targetSeenInRelease: seenInRelease, release: release,
            alertOnNewIssue: settings.alertOnNewIssue, alertOnRegression: settings.alertOnRegression, newIssues: budget)
        let actions = IssueFiling.decide(decision)

        var issueID = target?.id ?? oldIssue
        var contribution = IssueContribution(
            release: release, occurredAt: occurredAt,
            user: try RollupUserKeys.key(report.userKey, project: project, db), tags: input.tags,
            early: report.early.map { $0 == 1 })
        var muted = target?.status == .muted
        // An issue created here has the grouping's title: its alert need not read it back.
        var created = false
        for action in actions {
            switch action {
            case .createIssue(let statusFrom):
                let inherited = try statusFrom.flatMap { try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT status, regressed, status_changed_at, status_changed_by FROM issues WHERE id = ?"), arguments: [$0]) }
                issueID = try insertIssue(
                    project: project, grouping: g, groupingJSON: groupingJSON, report: report, now: now,
                    status: (inherited?["status"] as String?) ?? IssueStatus.open.rawValue, regressed: (inherited?["regressed"] as Int?) ?? 0,
                    statusChangedAt: inherited?["status_changed_at"] as Int64?, statusChangedBy: inherited?["status_changed_by"] as String?, db)
                created = true
                muted = (inherited?["status"] as String?) == IssueStatus.muted.rawValue
            case .holdInOverflow(let existing):
                if let existing {
                    issueID = existing
                    muted = budget?.overflow?.status == .muted
                } else {
                    let overflow = IssueFiling.overflowGrouping
                    issueID = try insertIssue(
                        project: project, grouping: overflow, groupingJSON: StoredJSON.encode(overflow), report: report, now: now,
                        status: IssueStatus.open.rawValue, regressed: 0, statusChangedAt: nil, statusChangedBy: nil, db)
                    muted = false
                }
            case .rekey(let issue):
                try db.cachedStatement(
                    sql: """
                        UPDATE issues SET fingerprint = ?, grouping = ?, title = ?, culprit = ?, title_rank = ?, kind = ?,
                            updated_at = ? WHERE id = ?
                        """
                ).execute(arguments: [
                    g.fingerprint.rawValue, groupingJSON, g.title, g.culprit, g.titleRank, report.kind, now, issue,
                ])
                issueID = issue
            case .retitle:
                guard let target else { break }
                try db.cachedStatement(
                    sql: "UPDATE issues SET grouping = ?, title = ?, culprit = ?, title_rank = ?, updated_at = ? WHERE id = ?"
                ).execute(arguments: [groupingJSON, g.title, g.culprit, g.titleRank, now, target.id])
            case .move(let from, let carryHistory):
                guard let to = issueID else { break }
                if let from {
                    if carryHistory {
                        // The old issue may empty and go: its alert history follows its events.
                        let left = try Int.fetchOne(db.cachedStatement(sql: "SELECT events FROM issues WHERE id = ?"), arguments: [from]) ?? 0
                        if left <= 1 {
                            try db.cachedStatement(sql: "UPDATE alerts SET issue_id = ? WHERE issue_id = ?").execute(arguments: [to, from])
                        }
                    }
                    try IssueRollup.remove(contribution, from: from, now: now, db)
                } else if let session = report.sessionID {
                    let started = try Int64.fetchOne(
                        db.cachedStatement(sql: "SELECT started_at FROM sessions WHERE project_id = ? AND session_id = ?"),
                        arguments: [project.rawValue, session])
                    contribution.early = started.map {
                        IssueSignals.isEarly(occurredAt: occurredAt, sessionStartedAt: $0)
                    }
                }
                try IssueRollup.add(contribution, to: to, now: now, db)
            case .reopenRegressed:
                guard let to = issueID else { break }
                try db.cachedStatement(
                    sql: "UPDATE issues SET status = 'open', regressed = 1, status_changed_at = ?, status_changed_by = NULL WHERE id = ?"
                ).execute(arguments: [now, to])
            case .alertNewIssue, .alertNewIssuesHeld, .alertRegression:
                guard let to = issueID, !muted else { break }
                let title = created || action == .alertNewIssuesHeld
                    ? g.title
                    : try String.fetchOne(db.cachedStatement(sql: "SELECT title FROM issues WHERE id = ?"), arguments: [to]) ?? g.title
                let context = IssueAlerts.Context(project: project, issue: to, title: title, release: release, occurredAt: occurredAt, now: now)
                if let draft = IssueAlerts.draft(action, context, settings: settings) { try AlertRecords.insert(draft, at: now, db) }
            }
        }
        guard let issueID else { throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "grouping decided no issue") }
        return (issueID, contribution.early.map { $0 ? 1 : 0 })
    }

    /// Inserts an issue of `report`'s project with `grouping`, created now (`created_at`, which the new-issue cap counts).
    static func insertIssue(project: ProjectID, grouping g: GroupingResult, groupingJSON: String, report: FiledReport, now: Int64,
                            status: String, regressed: Int, statusChangedAt: Int64?, statusChangedBy: String?, _ db: Database) throws -> Int64 {
        try db.cachedStatement(
            sql: """
                INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, title_rank, first_seen,
                    last_seen, first_release, last_release, updated_at, status, regressed, status_changed_at, status_changed_by, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            project.rawValue, g.fingerprint.rawValue, report.kind, groupingJSON, g.title, g.culprit, g.titleRank, report.occurredAt,
            report.occurredAt, report.release, report.release, now, status, regressed, statusChangedAt, statusChangedBy, now,
        ])
        return db.lastInsertedRowID
    }

    /// The project's new-issue budget in the window that holds `now`: the issues it created in it, counted in the
    /// index `issues_by_created (project_id, created_at)` and no further than the cap (so a read costs at most `cap`
    /// index entries, whatever the project's size), and its overflow issue once the cap is reached or may be by creating
    /// `more` issues (a batch's new fingerprints, `BatchGrouper`).
    static func newIssueBudget(project: ProjectID, settings: AlertSettings, now: Int64, more: Int = 0, _ db: Database) throws
        -> IssueFiling.NewIssueBudget
    {
        let window = IssueFiling.window(containing: now, minutes: settings.newIssueWindowMinutes)
        let created = try Int.fetchOne(
            db.cachedStatement(
                sql: "SELECT count(*) FROM (SELECT 1 FROM issues WHERE project_id = ? AND created_at >= ? AND created_at < ? LIMIT ?)"),
            arguments: [project.rawValue, window.lowerBound, window.upperBound, max(0, settings.newIssueCap)]) ?? 0
        var budget = IssueFiling.NewIssueBudget(cap: settings.newIssueCap, createdInWindow: created, overflow: nil)
        if created.addingReportingOverflow(more).partialValue >= budget.cap { budget.overflow = try state(project: project, fingerprint: IssueFiling.overflowFingerprint, db) }
        return budget
    }

    /// Whether `issue` was seen in `release`: a closed issue seen in a report's release does not regress by it.
    static func seen(issue: Int64, inRelease release: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(
            db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM issue_releases WHERE issue_id = ? AND release = ?)"),
            arguments: [issue, release]) ?? false
    }

    static func state(issueID: Int64, _ db: Database) throws -> IssueFiling.IssueState? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, status, fingerprint, title_rank FROM issues WHERE id = ?"), arguments: [issueID]
        ).map(state)
    }

    static func state(project: ProjectID, fingerprint: Fingerprint, _ db: Database) throws -> IssueFiling.IssueState? {
        try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, status, fingerprint, title_rank FROM issues WHERE project_id = ? AND fingerprint = ?"),
            arguments: [project.rawValue, fingerprint.rawValue]
        ).map(state)
    }

    static func state(_ row: Row) -> IssueFiling.IssueState {
        IssueFiling.IssueState(id: row["id"], status: row["status"], fingerprint: row["fingerprint"], titleRank: row["title_rank"])
    }
}
