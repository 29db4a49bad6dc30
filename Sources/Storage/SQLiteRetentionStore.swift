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
    let database: FaultlineDatabase

    public init(database: FaultlineDatabase) {
        self.database = database
    }

    public func prune(before cutoff: Date, limit: Int) async throws -> PruneResult {
        let cut = Millis.from(cutoff)
        return try await database.pool.write { db in
            let payloads = try Int64.fetchAll(
                db, sql: "SELECT id FROM payloads WHERE received_at < ? ORDER BY received_at LIMIT ?", arguments: [cut, limit])
            var reports = 0
            for id in payloads {
                reports += try Int.fetchOne(db, sql: "SELECT count(*) FROM reports WHERE payload_id = ?", arguments: [id]) ?? 0
                try db.execute(sql: "DELETE FROM payloads WHERE id = ?", arguments: [id])
            }
            try db.execute(
                sql: """
                    DELETE FROM sessions WHERE (project_id, session_id) IN
                        (SELECT project_id, session_id FROM sessions WHERE updated_at < ? LIMIT ?)
                    """,
                arguments: [cut, limit])
            let sessions = db.changesCount
            try db.execute(
                sql: "DELETE FROM webhook_deliveries WHERE state != 'pending' AND coalesce(delivered_at, next_attempt_at) < ?",
                arguments: [cut])
            return PruneResult(reports: reports, sessions: sessions)
        }
    }
}
