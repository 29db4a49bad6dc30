import FaultlineCore
import GRDB

/// Quota counts on SQLite (`quota_counts`, migration `v31-event-quotas`): each flush adds its tally in one
/// transaction, upserting by project, day, release and fingerprint ('' when unknown).
public struct SQLiteQuotaStore: QuotaCountStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func addQuotaCounts(_ counts: [QuotaCount]) async throws {
        let counts = counts.filter { $0.accepted > 0 || $0.dropped > 0 }
        guard !counts.isEmpty else { return }
        try await database.pool.write { db in
            // A project deleted since the events were counted has no row to add to: its counts go with it.
            let statement = try db.cachedStatement(
                sql: """
                    INSERT INTO quota_counts (project_id, day, release, fingerprint, accepted, dropped)
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM projects WHERE id = ?1)
                    ON CONFLICT (project_id, day, release, fingerprint)
                    DO UPDATE SET accepted = accepted + ?5, dropped = dropped + ?6
                    """)
            for count in counts {
                try statement.execute(arguments: [
                    count.project.rawValue, count.day.rawValue, StoredText.clean(count.release),
                    count.fingerprint?.description ?? "", max(count.accepted, 0), max(count.dropped, 0),
                ])
            }
        }
    }

    public func quotaCounts(project: ProjectID, from: DayNumber) async throws -> [QuotaCount] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT day, release, fingerprint, accepted, dropped FROM quota_counts
                    WHERE project_id = ? AND day >= ? ORDER BY day DESC, release, fingerprint
                    """, arguments: [project.rawValue, from.rawValue]
            ).map { row in
                let fingerprint: String = row["fingerprint"]
                return QuotaCount(
                    project: project, day: DayNumber(rawValue: row["day"]), release: row["release"],
                    fingerprint: fingerprint.isEmpty ? nil : Fingerprint(fingerprint), accepted: row["accepted"],
                    dropped: row["dropped"])
            }
        }
    }
}
