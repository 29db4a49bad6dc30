import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retention on SQLite: deleting a payload deletes its reports, their symbols and missing-file rows (foreign
/// keys cascade). Small batches keep each write transaction short, so ingest never waits long behind a prune. Each
/// issue's samples (`SQLiteRetentionSamples`) stay, with the payload that holds them.
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

    public func prune(before cutoff: Date, limit: Int, now: Date, samples: RetentionSamplePolicy) async throws
        -> PruneResult
    {
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
            var result = PruneResult()
            let taken = try Self.payloadsToPrune(db, before: cut, limit: limit)
            // The issues about to lose reports choose their samples first, so that what follows leaves them.
            if samples.keepsSamples, !taken.isEmpty {
                let issues = try Int64.fetchAll(
                    db,
                    sql: """
                        SELECT DISTINCT issue_id FROM reports
                        WHERE payload_id IN (\(databaseQuestionMarks(count: taken.count)))
                            AND issue_id IS NOT NULL AND sample IS NULL
                        """,
                    arguments: StatementArguments(taken))
                result.kept = try SQLiteRetentionSamples.refresh(db, issues: issues, policy: samples)
            }
            for id in taken {
                // Their issues' pages may show these reports as samples: marked changed, they are rendered again.
                try db.execute(
                    sql: """
                        UPDATE issues SET updated_at = max(updated_at, ?)
                        WHERE id IN (SELECT issue_id FROM reports
                                     WHERE payload_id = ? AND issue_id IS NOT NULL AND sample IS NULL)
                        """,
                    arguments: [changedAt, id])
                // A payload that holds a sample stays with it (the sample is a byte range of it); its other reports go.
                try db.execute(sql: "DELETE FROM reports WHERE payload_id = ? AND sample IS NULL", arguments: [id])
                result.reports &+= db.changesCount
                try db.execute(
                    sql: """
                        DELETE FROM payloads WHERE id = ?
                            AND NOT EXISTS (SELECT 1 FROM reports WHERE payload_id = payloads.id)
                        """,
                    arguments: [id])
            }
            try db.execute(
                sql: """
                    DELETE FROM sessions WHERE (project_id, session_id) IN
                        (SELECT project_id, session_id FROM sessions WHERE updated_at < ? LIMIT ?)
                    """,
                arguments: [cut, limit])
            result.sessions = db.changesCount
            // Attachments go by their own time once their event is no stored report: an event's files stay as long as
            // its report, and a sample's for as long as it is one.
            try db.execute(
                sql: """
                    DELETE FROM attachments WHERE id IN (
                        SELECT a.id FROM attachments a WHERE a.received_at < ? AND NOT EXISTS
                            (SELECT 1 FROM reports r WHERE r.project_id = a.project_id AND r.event_id = a.event_id)
                        ORDER BY a.received_at LIMIT ?)
                    """,
                arguments: [cut, limit])
            result.attachments = db.changesCount
            try db.execute(
                sql:
                    "DELETE FROM webhook_deliveries WHERE state != 'pending' AND coalesce(delivered_at, next_attempt_at) < ?",
                arguments: [cut])
            return result
        }
    }

    public func foldQuotaCounts(before day: DayNumber) async throws -> Int {
        try await database.pool.write { db in
            // `WHERE true`-style ambiguity does not arise: the SELECT ends in GROUP BY before the upsert clause.
            try db.execute(
                sql: """
                    INSERT INTO quota_counts (project_id, day, release, fingerprint, accepted, dropped)
                    SELECT project_id, day, release, '', sum(accepted), sum(dropped) FROM quota_counts
                    WHERE day < ?1 AND fingerprint <> '' GROUP BY project_id, day, release
                    ON CONFLICT (project_id, day, release, fingerprint)
                    DO UPDATE SET accepted = accepted + excluded.accepted, dropped = dropped + excluded.dropped
                    """, arguments: [day.rawValue])
            try db.execute(
                sql: "DELETE FROM quota_counts WHERE day < ? AND fingerprint <> ''", arguments: [day.rawValue])
            return db.changesCount
        }
    }

    /// The payloads one pass takes, oldest first: received before `cut`, holding a report that is no sample (or no
    /// report at all; a payload whose reports are all samples stays), up to `limit` and until the batch bounds.
    static func payloadsToPrune(_ db: Database, before cut: Int64, limit: Int) throws -> [Int64] {
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT p.id, length(p.bytes) AS size,
                    (SELECT count(*) FROM reports r WHERE r.payload_id = p.id AND r.sample IS NULL) AS prunable
                FROM payloads p
                WHERE p.received_at < ?
                    AND (EXISTS (SELECT 1 FROM reports r WHERE r.payload_id = p.id AND r.sample IS NULL)
                        OR NOT EXISTS (SELECT 1 FROM reports r WHERE r.payload_id = p.id))
                ORDER BY p.received_at LIMIT ?
                """,
            arguments: [cut, limit])
        var bytes = 0
        var reports = 0
        var taken: [Int64] = []
        for row in rows {
            if bytes >= batchBytes || reports >= batchReports { break }
            taken.append(row["id"])
            bytes &+= row["size"] ?? 0
            reports &+= row["prunable"] ?? 0
        }
        return taken
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
