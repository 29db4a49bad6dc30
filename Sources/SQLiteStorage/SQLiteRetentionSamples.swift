import FaultlineCore
import GRDB

/// Retention samples on SQLite (`RetentionSamples`): the reports each issue keeps past the retention period are marked
/// in `reports.sample` (1 an anchor, 2 a release's), and the prune leaves them, their payload, result, search entry and
/// attachments in place.
enum SQLiteRetentionSamples {
    /// Chooses the samples of `issues` again, inside the prune's transaction: each issue's own samples are cleared and
    /// its choice (`RetentionSamples.choose`) marked, as far as its project's cap admits (`RetentionSamples.admit`,
    /// which may take the places of other issues' release samples, oldest first). Returns how many reports became
    /// samples that were none.
    static func refresh(_ db: Database, issues: [Int64], policy: RetentionSamplePolicy) throws -> Int {
        guard policy.keepsSamples, !issues.isEmpty else { return 0 }
        var byProject: [Int64: [Int64]] = [:]
        for row in try Row.fetchAll(
            db, sql: "SELECT id, project_id FROM issues WHERE id IN (\(databaseQuestionMarks(count: issues.count)))",
            arguments: StatementArguments(issues))
        {
            byProject[row[1], default: []].append(row[0])
        }
        var newly = 0
        for (project, ids) in byProject.sorted(by: { $0.key < $1.key }) {
            newly += try refresh(db, project: project, issues: ids.sorted(), policy: policy)
        }
        return newly
    }

    /// `refresh` for the issues of one project.
    static func refresh(_ db: Database, project: Int64, issues: [Int64], policy: RetentionSamplePolicy) throws -> Int {
        let list = databaseQuestionMarks(count: issues.count)
        let ids = StatementArguments(issues)
        var spans: [Int64: [ReleaseSpan]] = [:]
        for row in try Row.fetchAll(
            db,
            sql:
                "SELECT issue_id, release, min(id), max(id) FROM reports WHERE issue_id IN (\(list)) GROUP BY issue_id, release",
            arguments: ids)
        {
            spans[row[0], default: []].append(ReleaseSpan(release: row[1], first: row[2], latest: row[3]))
        }
        let wanted = issues.map { RetentionSamples.choose(spans[$0] ?? [], limit: policy.perIssue) }
        let before = Set(
            try Int64.fetchAll(
                db, sql: "SELECT id FROM reports WHERE issue_id IN (\(list)) AND sample IS NOT NULL", arguments: ids))
        let all =
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM reports WHERE project_id = ? AND sample IS NOT NULL",
                arguments: [project])
            ?? 0
        let others = "project_id = ? AND sample = 2 AND (issue_id IS NULL OR issue_id NOT IN (\(list)))"
        let evictable =
            try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE \(others)", arguments: [project] + ids) ?? 0
        let admission = RetentionSamples.admit(
            wanted, room: policy.perProject - max(0, all - before.count), evictable: evictable)
        if admission.evicted > 0 {
            try db.execute(
                sql:
                    "UPDATE reports SET sample = NULL WHERE id IN (SELECT id FROM reports WHERE \(others) ORDER BY id LIMIT ?)",
                arguments: [project] + ids + [admission.evicted])
        }
        try db.execute(
            sql: "UPDATE reports SET sample = NULL WHERE issue_id IN (\(list)) AND sample IS NOT NULL", arguments: ids)
        var newly = 0
        for pick in admission.kept {
            try db.execute(
                sql: "UPDATE reports SET sample = ? WHERE id = ?", arguments: [pick.tier.rawValue, pick.report])
            if !before.contains(pick.report) { newly += 1 }
        }
        return newly
    }
}
