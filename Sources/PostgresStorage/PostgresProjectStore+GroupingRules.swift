import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fingerprint rules, their versions and the background regroup on PostgreSQL (`pg17-fingerprint-rules`; the SQLite
/// twin: `SQLiteProjectStore+GroupingRules.swift`, the same statements).
extension PostgresProjectStore: GroupingRulesStore {
    public func groupingRules(project: ProjectID) async throws -> [GroupingRulesVersion] {
        let logger = database.logger
        return try await database.read { connection in
            var versions: [GroupingRulesVersion] = []
            for try await (version, rules, created, by) in try await connection.query(
                """
                SELECT version, rules, created_at, created_by FROM grouping_rules
                WHERE project_id = \(project.rawValue) ORDER BY version DESC
                """, logger: logger
            ).decode((Int64, String, Int64, String?).self) {
                versions.append(
                    GroupingRulesVersion(
                        version: Int(version), rules: rules, createdAt: Millis.date(created), createdBy: by))
            }
            return versions
        }
    }

    public func setGroupingRules(_ rules: String, project: ProjectID, by: String?, at date: Date) async throws -> Int {
        let logger = database.logger
        let now = Millis.from(date)
        return try await database.write { connection in
            // The project's row locked: two changes at once get consecutive versions, not a conflict.
            try await connection.query(
                "SELECT 1 FROM projects WHERE id = \(project.rawValue) FOR UPDATE", logger: logger)
            var version: Int64 = 1
            for try await next in try await connection.query(
                "SELECT coalesce(max(version), 0) + 1 FROM grouping_rules WHERE project_id = \(project.rawValue)",
                logger: logger
            ).decode(Int64.self) {
                version = next
            }
            try await connection.query(
                """
                INSERT INTO grouping_rules (project_id, version, rules, created_at, created_by)
                VALUES (\(project.rawValue), \(version), \(rules), \(now), \(by))
                """, logger: logger)
            var last: Int64 = 0
            var total: Int64 = 0
            for try await (max, count) in try await connection.query(
                "SELECT coalesce(max(id), 0), count(*) FROM reports WHERE project_id = \(project.rawValue)",
                logger: logger
            ).decode((Int64, Int64).self) {
                (last, total) = (max, count)
            }
            try await connection.query(
                """
                INSERT INTO regroups (project_id, rules_version, cursor, last_id, total, requeued, started_at, finished_at)
                VALUES (\(project.rawValue), \(version), 0, \(last), \(total), 0, \(now), NULL)
                ON CONFLICT (project_id) DO UPDATE SET rules_version = excluded.rules_version, cursor = 0,
                    last_id = excluded.last_id, total = excluded.total, requeued = 0, started_at = excluded.started_at,
                    finished_at = NULL
                """, logger: logger)
            return Int(version)
        }
    }

    public func groupingRows(
        project: ProjectID, since: Date, batch: Int, _ body: @Sendable ([StoredGroupingRow]) throws -> Void
    ) async throws {
        let logger = database.logger
        let size = max(1, batch)
        try await database.read { connection in
            var rows: [StoredGroupingRow] = []
            rows.reserveCapacity(size)
            for try await (event, issue, user, facts) in try await connection.query(
                """
                SELECT event_id, issue_id, user_key, grouping_facts FROM reports
                WHERE project_id = \(project.rawValue) AND received_at >= \(Millis.from(since)) ORDER BY id
                """, logger: logger
            ).decode((String, Int64?, String?, String?).self) {
                rows.append(
                    StoredGroupingRow(eventID: event, issue: issue.map { IssueID($0) }, user: user, facts: facts))
                if rows.count == size {
                    try body(rows)
                    rows.removeAll(keepingCapacity: true)
                }
            }
            if !rows.isEmpty { try body(rows) }
        }
    }

    public func groupingTargets(project: ProjectID) async throws -> GroupingTargets {
        let logger = database.logger
        return try await database.read { connection in
            var targets = GroupingTargets()
            for try await (fingerprint, id) in try await connection.query(
                "SELECT fingerprint, id FROM issues WHERE project_id = \(project.rawValue)", logger: logger
            ).decode((String, Int64).self) {
                targets.issues[fingerprint] = IssueID(id)
            }
            for try await (fingerprint, id) in try await connection.query(
                "SELECT fingerprint, issue_id FROM issue_aliases WHERE project_id = \(project.rawValue)", logger: logger
            ).decode((String, Int64).self) {
                targets.aliases[fingerprint] = IssueID(id)
            }
            return targets
        }
    }

    public func regroupStep(limit: Int, at date: Date) async throws -> Int {
        let logger = database.logger
        let now = Millis.from(date)
        return try await database.write { connection in
            var open: [(Int64, Int64, Int64)] = []
            // Claimed: two nodes never queue the same range twice.
            for try await row in try await connection.query(
                """
                SELECT project_id, cursor, last_id FROM regroups WHERE finished_at IS NULL
                ORDER BY project_id FOR UPDATE SKIP LOCKED
                """, logger: logger
            ).decode((Int64, Int64, Int64).self) {
                open.append(row)
            }
            var queued = 0
            for (project, cursor, last) in open where queued < limit {
                var ids: [Int64] = []
                for try await id in try await connection.query(
                    """
                    SELECT id FROM reports WHERE project_id = \(project) AND id > \(cursor) AND id <= \(last)
                    ORDER BY id LIMIT \(Int64(max(1, limit - queued)))
                    """, logger: logger
                ).decode(Int64.self) {
                    ids.append(id)
                }
                if let next = ids.last {
                    try await connection.query(
                        """
                        UPDATE reports SET symbolication = 'pending', claimed_until = NULL
                        WHERE project_id = \(project) AND id > \(cursor) AND id <= \(next) AND symbolication != 'pending'
                        """, logger: logger)
                    try await connection.query(
                        """
                        UPDATE regroups SET cursor = \(next), requeued = requeued + \(Int64(ids.count))
                        WHERE project_id = \(project)
                        """, logger: logger)
                    queued += ids.count
                } else {
                    try await connection.query(
                        "UPDATE regroups SET finished_at = \(now), cursor = last_id WHERE project_id = \(project)",
                        logger: logger)
                }
            }
            return queued
        }
    }

    public func regroupProgress(project: ProjectID) async throws -> RegroupProgress? {
        let logger = database.logger
        return try await database.read { connection in
            for try await (version, total, requeued, started, finished, waiting) in try await connection.query(
                """
                SELECT g.rules_version, g.total, g.requeued, g.started_at, g.finished_at,
                    (SELECT count(*) FROM reports r WHERE r.symbolication = 'pending' AND r.project_id = g.project_id)
                FROM regroups g WHERE g.project_id = \(project.rawValue)
                """, logger: logger
            ).decode((Int64, Int64, Int64, Int64, Int64?, Int64).self) {
                return RegroupProgress(
                    rulesVersion: Int(version), total: Int(total), requeued: Int(requeued), waiting: Int(waiting),
                    startedAt: Millis.date(started), finishedAt: finished.map(Millis.date))
            }
            return nil
        }
    }
}
