import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retention on SQLite: deleting a payload deletes its reports, their symbols and missing-file rows (foreign
/// keys cascade). Small batches keep each write transaction short, so ingest never waits long behind a prune.
public struct SQLiteRetentionStore: RetentionStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    /// The bounds at which one prune transaction stops taking payloads (the payload that reaches one still goes, so
    /// one payload always goes however big): payload bytes, and reports, whose symbols, modules and search entries go
    /// with them (about 4 KiB a symbolicated report). The WAL holds what a transaction changed until it commits: on a
    /// nearly full disk it must be a small part of the floor.
    static let batchBytes = 1 << 20
    static let batchReports = 200

    public func prune(before cutoff: Date, limit: Int, now: Date) async throws -> PruneResult {
        let cut = Millis.from(cutoff)
        let changedAt = Millis.from(now)
        return try await database.pool.write { db in
            // Debian builds SQLite with SECURE_DELETE: every freed page would be zeroed through the WAL, so that a
            // prune would write as much as it deletes, and on a full disk the relief valve would fill the disk it is
            // to relieve. FAST zeroes what is rewritten anyway; freed pages go to the end of the file and are cut off
            // by `releaseFreeSpace` right after the prune (auto-vacuum), so their old bytes do not linger.
            let secure = try Int.fetchOne(db, sql: "PRAGMA secure_delete") ?? 1
            try db.execute(sql: "PRAGMA secure_delete = FAST")
            defer { try? db.execute(sql: "PRAGMA secure_delete = \(secure)") }
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT id, length(bytes) AS size FROM payloads WHERE received_at < ? ORDER BY received_at LIMIT ?",
                arguments: [cut, limit])
            var bytes = 0
            var reports = 0
            for row in rows {
                if bytes >= Self.batchBytes || reports >= Self.batchReports { break }
                let id: Int64 = row["id"]
                bytes &+= row["size"] ?? 0
                reports &+=
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE payload_id = ?", arguments: [id]) ?? 0
                // Their issues' pages may show these reports as samples: marked changed, they are rendered again.
                try db.execute(
                    sql: """
                        UPDATE issues SET updated_at = max(updated_at, ?)
                        WHERE id IN (SELECT issue_id FROM reports WHERE payload_id = ? AND issue_id IS NOT NULL)
                        """,
                    arguments: [changedAt, id])
                try db.execute(sql: "DELETE FROM payloads WHERE id = ?", arguments: [id])
            }
            try db.execute(
                sql: """
                    DELETE FROM sessions WHERE (project_id, session_id) IN
                        (SELECT project_id, session_id FROM sessions WHERE updated_at < ? LIMIT ?)
                    """,
                arguments: [cut, limit])
            let sessions = db.changesCount
            // Attachments go by their own time (an event's files are kept as long as the event's payload).
            try db.execute(
                sql:
                    "DELETE FROM attachments WHERE id IN (SELECT id FROM attachments WHERE received_at < ? ORDER BY received_at LIMIT ?)",
                arguments: [cut, limit])
            let attachments = db.changesCount
            try db.execute(
                sql:
                    "DELETE FROM webhook_deliveries WHERE state != 'pending' AND coalesce(delivered_at, next_attempt_at) < ?",
                arguments: [cut])
            return PruneResult(reports: reports, sessions: sessions, attachments: attachments)
        }
    }

    /// Pages of FTS5 segments merged per step (the `'merge'` command): deleting a report's search entry only records a
    /// delete marker, and its tokens (user ids, messages) stay in the index's segments until those are merged. Merges
    /// run in small steps, each its own short transaction (the WAL stays small on a full disk), until nothing is left
    /// to merge or `maxSearchMergeSteps` ran; what is left is merged by the next pass.
    static let searchMergePages = 256
    static let maxSearchMergeSteps = 64

    public func mergeSearchIndex() async throws {
        for _ in 0..<Self.maxSearchMergeSteps {
            let merged = try await database.pool.write { db -> Bool in
                let before = db.totalChangesCount
                // A negative page count merges segments of any level (the old, large ones that hold the deleted
                // tokens), which a positive one would leave until enough segments of their level gather.
                try db.execute(
                    sql: "INSERT INTO search_index(search_index, rank) VALUES ('merge', ?)",
                    arguments: [-Self.searchMergePages])
                return db.totalChangesCount - before > 1
            }
            if !merged { break }
        }
    }

    /// Moves the database's free pages to the end and truncates the file (`incremental_vacuum`), 64 pages per
    /// transaction so that the WAL stays small on a full disk; nothing on a database made before auto-vacuum
    /// (`SQLiteEngine.autoVacuum`).
    public func releaseFreeSpace(maxBytes: Int64) async throws -> Int64 {
        try await database.releaseFreePages(maxBytes: maxBytes)
    }
}
