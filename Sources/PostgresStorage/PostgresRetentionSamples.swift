import FaultlineCore
import PostgresNIO

/// Retention samples on PostgreSQL (`RetentionSamples`), as on SQLite (`SQLiteRetentionSamples`): the reports each
/// issue keeps past the retention period are marked in `reports.sample` (1 an anchor, 2 a release's). A partition that
/// retention drops first gives its samples' rows to the DEFAULT partitions (`PostgresRetentionStore`).
enum PostgresRetentionSamples {
    /// Chooses the samples of `issues` again, inside the prune's transaction: each issue's own samples are cleared and
    /// its choice marked, as far as its project's cap admits (`RetentionSamples.admit`). Returns how many reports
    /// became samples that were none.
    static func refresh(
        _ connection: PostgresConnection, _ logger: Logger, issues: [Int64], policy: RetentionSamplePolicy
    ) async throws -> Int {
        guard policy.keepsSamples, !issues.isEmpty else { return 0 }
        var byProject: [Int64: [Int64]] = [:]
        for try await (id, project) in try await connection.query(
            "SELECT id, project_id FROM issues WHERE id = ANY(\(issues))", logger: logger
        ).decode((Int64, Int64).self) {
            byProject[project, default: []].append(id)
        }
        var newly = 0
        for (project, ids) in byProject.sorted(by: { $0.key < $1.key }) {
            newly += try await refresh(connection, logger, project: project, issues: ids.sorted(), policy: policy)
        }
        return newly
    }

    /// `refresh` for the issues of one project.
    static func refresh(
        _ connection: PostgresConnection, _ logger: Logger, project: Int64, issues: [Int64],
        policy: RetentionSamplePolicy
    ) async throws -> Int {
        var spans: [Int64: [ReleaseSpan]] = [:]
        for try await (issue, release, first, latest) in try await connection.query(
            """
            SELECT issue_id, release, min(id), max(id) FROM reports WHERE issue_id = ANY(\(issues))
            GROUP BY issue_id, release
            """, logger: logger
        ).decode((Int64, String?, Int64, Int64).self) {
            spans[issue, default: []].append(ReleaseSpan(release: release, first: first, latest: latest))
        }
        let wanted = issues.map { RetentionSamples.choose(spans[$0] ?? [], limit: policy.perIssue) }
        var before: Set<Int64> = []
        for try await id in try await connection.query(
            "SELECT id FROM reports WHERE issue_id = ANY(\(issues)) AND sample IS NOT NULL", logger: logger
        ).decode(Int64.self) {
            before.insert(id)
        }
        var all = 0
        for try await n in try await connection.query(
            "SELECT count(*) FROM reports WHERE project_id = \(project) AND sample IS NOT NULL", logger: logger
        ).decode(Int.self) {
            all = n
        }
        var evictable = 0
        for try await n in try await connection.query(
            """
            SELECT count(*) FROM reports WHERE project_id = \(project) AND sample = 2
                AND (issue_id IS NULL OR NOT (issue_id = ANY(\(issues))))
            """, logger: logger
        ).decode(Int.self) {
            evictable = n
        }
        let admission = RetentionSamples.admit(
            wanted, room: policy.perProject - max(0, all - before.count), evictable: evictable)
        if admission.evicted > 0 {
            try await connection.query(
                """
                UPDATE reports SET sample = NULL WHERE (id, received_at) IN (
                    SELECT id, received_at FROM reports WHERE project_id = \(project) AND sample = 2
                        AND (issue_id IS NULL OR NOT (issue_id = ANY(\(issues))))
                    ORDER BY id LIMIT \(admission.evicted))
                """, logger: logger)
        }
        try await connection.query(
            "UPDATE reports SET sample = NULL WHERE issue_id = ANY(\(issues)) AND sample IS NOT NULL", logger: logger)
        var newly = 0
        for tier in [SampleTier.anchor, .release] {
            let ids = admission.kept.filter { $0.tier == tier }.map(\.report)
            if ids.isEmpty { continue }
            try await connection.query(
                "UPDATE reports SET sample = \(Int16(tier.rawValue)) WHERE id = ANY(\(ids))", logger: logger)
            newly += ids.filter { !before.contains($0) }.count
        }
        return newly
    }
}
