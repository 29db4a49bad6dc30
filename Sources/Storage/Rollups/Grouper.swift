import FaultlineCore
import GRDB

/// Files a report under its issue inside the symbolication result's transaction: creates the issue, moves the
/// report when its fingerprint changed, reopens a closed issue that regressed, and records the alerts that
/// decisions made here imply (new issue, regression) — exactly once, because they commit with the decision.
enum Grouper {
    static func file(report: Row, reportID: Int64, grouping input: GroupingInput, groupingJSON: String, now: Int64,
                     _ db: Database) throws -> IssueID {
        let project = ProjectID(report["project_id"] as Int64)
        let occurredAt: Int64 = report["occurred_at"]
        let release: String? = report["release"]
        let oldIssue: Int64? = report["issue_id"]
        let g = input.grouping
        try db.cachedStatement(
            sql: """
                INSERT INTO issues (project_id, fingerprint, kind, grouping, title, culprit, first_seen, last_seen,
                    first_release, last_release, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, fingerprint) DO NOTHING
                """
        ).execute(arguments: [
            project.rawValue, g.fingerprint.rawValue, report["kind"] as String, groupingJSON, g.title, g.culprit, occurredAt,
            occurredAt, release, release, now,
        ])
        let created = db.changesCount == 1
        guard let issue = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT id, status, title FROM issues WHERE project_id = ? AND fingerprint = ?"),
            arguments: [project.rawValue, g.fingerprint.rawValue])
        else { throw DatabaseError(resultCode: .SQLITE_INTERNAL, message: "issue vanished in its own transaction") }
        let issueID: Int64 = issue["id"]
        if oldIssue == issueID { return IssueID(issueID) }

        var contribution = IssueContribution(
            release: release ?? "", day: DayNumber(Millis.date(occurredAt)), occurredAt: occurredAt, user: report["user_key"],
            tags: input.tags.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) },
            early: (report["early"] as Int?).map { $0 == 1 })
        if let oldIssue {
            try IssueRollup.remove(contribution, from: oldIssue, now: now, db)
        } else if let session: String = report["session_id"] {
            let started = try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT started_at FROM sessions WHERE project_id = ? AND session_id = ?"),
                arguments: [project.rawValue, session])
            contribution.early = started.map { IssueSignals.isEarly(secondsIntoSession: Double(occurredAt - $0) / 1000) }
        }

        let status = IssueStatus(rawValue: issue["status"]) ?? .open
        let seenInRelease = try release.map {
            try Bool.fetchOne(
                db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM issue_releases WHERE issue_id = ? AND release = ?)"),
                arguments: [issueID, $0]) ?? false
        } ?? true
        let regressed = AlertRules.regresses(status: status, release: release, seenInRelease: seenInRelease)
        if regressed {
            try db.cachedStatement(
                sql: "UPDATE issues SET status = 'open', regressed = 1, status_changed_at = ? WHERE id = ?"
            ).execute(arguments: [now, issueID])
        }
        try IssueRollup.add(contribution, to: issueID, now: now, db)
        try db.cachedStatement(sql: "UPDATE reports SET issue_id = ?, early = ? WHERE id = ?")
            .execute(arguments: [issueID, contribution.early.map { $0 ? 1 : 0 }, reportID])

        guard status != .muted else { return IssueID(issueID) }
        let settings = try AlertRecords.settings(project: project, db)
        let title: String = issue["title"]
        if created && oldIssue == nil && settings.alertOnNewIssue {
            try AlertRecords.insert(
                AlertDraft(
                    project: project, kind: .newIssue, dedupeKey: "new:\(issueID)", issue: IssueID(issueID), release: release,
                    title: title, reason: ["events": 1]),
                at: now, db)
        }
        if regressed && settings.alertOnRegression {
            try AlertRecords.insert(
                AlertDraft(
                    project: project, kind: .regression, dedupeKey: "regression:\(issueID):\(release ?? "")",
                    issue: IssueID(issueID), release: release, title: title, reason: ["first_event_in_release_at_ms": Double(occurredAt)]),
                at: now, db)
        }
        return IssueID(issueID)
    }
}
