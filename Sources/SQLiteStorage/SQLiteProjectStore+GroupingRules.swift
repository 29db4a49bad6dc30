import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Fingerprint rules, their versions and the background regroup on SQLite (`v32-fingerprint-rules`; the PostgreSQL
/// twin: `PostgresProjectStore+GroupingRules.swift`, the same statements).
extension SQLiteProjectStore: GroupingRulesStore {
    public func groupingRules(project: ProjectID) async throws -> [GroupingRulesVersion] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT version, rules, created_at, created_by FROM grouping_rules
                    WHERE project_id = ? ORDER BY version DESC
                    """, arguments: [project.rawValue]
            ).map { row in
                GroupingRulesVersion(
                    version: row[0], rules: row[1], createdAt: Millis.date(row[2]), createdBy: row[3])
            }
        }
    }

    public func setGroupingRules(_ rules: String, project: ProjectID, by: String?, at date: Date) async throws -> Int {
        try await database.pool.write { db in
            let version =
                try Int.fetchOne(
                    db, sql: "SELECT coalesce(max(version), 0) + 1 FROM grouping_rules WHERE project_id = ?",
                    arguments: [project.rawValue]) ?? 1
            let now = Millis.from(date)
            try db.execute(
                sql:
                    "INSERT INTO grouping_rules (project_id, version, rules, created_at, created_by) VALUES (?, ?, ?, ?, ?)",
                arguments: [project.rawValue, version, rules, now, by])
            // The regroup covers the reports stored now; later ones are grouped with the new rules when filed.
            let last =
                try Int64.fetchOne(
                    db, sql: "SELECT coalesce(max(id), 0) FROM reports WHERE project_id = ?",
                    arguments: [project.rawValue]) ?? 0
            let total =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM reports WHERE project_id = ?", arguments: [project.rawValue]) ?? 0
            try db.execute(
                sql: """
                    INSERT INTO regroups (project_id, rules_version, cursor, last_id, total, requeued, started_at, finished_at)
                    VALUES (?1, ?2, 0, ?3, ?4, 0, ?5, NULL)
                    ON CONFLICT (project_id) DO UPDATE SET rules_version = ?2, cursor = 0, last_id = ?3, total = ?4,
                        requeued = 0, started_at = ?5, finished_at = NULL
                    """, arguments: [project.rawValue, version, last, total, now])
            return version
        }
    }

    public func groupingRows(
        project: ProjectID, since: Date, batch: Int, _ body: @Sendable ([StoredGroupingRow]) throws -> Void
    ) async throws {
        let size = max(1, batch)
        try await database.pool.read { db in
            // One snapshot, read in id order through `reports_by_project` (project_id, id).
            let statement = try db.makeStatement(
                sql: """
                    SELECT event_id, issue_id, user_key, grouping_facts FROM reports
                    WHERE project_id = ? AND received_at >= ? ORDER BY id
                    """)
            let cursor = try Row.fetchCursor(statement, arguments: [project.rawValue, Millis.from(since)])
            var rows: [StoredGroupingRow] = []
            rows.reserveCapacity(size)
            while let row = try cursor.next() {
                let issue: Int64? = row[1]
                rows.append(
                    StoredGroupingRow(eventID: row[0], issue: issue.map { IssueID($0) }, user: row[2], facts: row[3]))
                if rows.count == size {
                    try body(rows)
                    rows.removeAll(keepingCapacity: true)
                }
            }
            if !rows.isEmpty { try body(rows) }
        }
    }

    public func groupingTargets(project: ProjectID) async throws -> GroupingTargets {
        try await database.pool.read { db in
            var targets = GroupingTargets()
            for row in try Row.fetchAll(
                db, sql: "SELECT fingerprint, id FROM issues WHERE project_id = ?", arguments: [project.rawValue])
            {
                targets.issues[row[0]] = IssueID(row[1] as Int64)
            }
            for row in try Row.fetchAll(
                db, sql: "SELECT fingerprint, issue_id FROM issue_aliases WHERE project_id = ?",
                arguments: [project.rawValue])
            {
                targets.aliases[row[0]] = IssueID(row[1] as Int64)
            }
            return targets
        }
    }

    public func regroupStep(limit: Int, at date: Date) async throws -> Int {
        try await database.pool.write { db in
            var queued = 0
            let open = try Row.fetchAll(
                db,
                sql: "SELECT project_id, cursor, last_id FROM regroups WHERE finished_at IS NULL ORDER BY project_id")
            for row in open where queued < limit {
                let project: Int64 = row[0]
                let cursor: Int64 = row[1]
                let last: Int64 = row[2]
                let ids = try Int64.fetchAll(
                    db,
                    sql: "SELECT id FROM reports WHERE project_id = ? AND id > ? AND id <= ? ORDER BY id LIMIT ?",
                    arguments: [project, cursor, last, max(1, limit - queued)])
                if let next = ids.last {
                    try db.execute(
                        sql: """
                            UPDATE reports SET symbolication = 'pending'
                            WHERE project_id = ? AND id > ? AND id <= ? AND symbolication != 'pending'
                            """, arguments: [project, cursor, next])
                    try db.execute(
                        sql: "UPDATE regroups SET cursor = ?, requeued = requeued + ? WHERE project_id = ?",
                        arguments: [next, ids.count, project])
                    queued += ids.count
                } else {
                    try db.execute(
                        sql: "UPDATE regroups SET finished_at = ?, cursor = last_id WHERE project_id = ?",
                        arguments: [Millis.from(date), project])
                }
            }
            return queued
        }
    }

    public func regroupProgress(project: ProjectID) async throws -> RegroupProgress? {
        try await database.pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT g.rules_version, g.total, g.requeued, g.started_at, g.finished_at,
                            (SELECT count(*) FROM reports r WHERE r.symbolication = 'pending' AND r.project_id = g.project_id)
                        FROM regroups g WHERE g.project_id = ?
                        """, arguments: [project.rawValue])
            else { return nil }
            let finished: Int64? = row[4]
            return RegroupProgress(
                rulesVersion: row[0], total: row[1], requeued: row[2], waiting: row[5], startedAt: Millis.date(row[3]),
                finishedAt: finished.map(Millis.date))
        }
    }
}
