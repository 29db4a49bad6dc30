import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Quota counts on SQLite (`quota_counts`, migrations `v31-event-quotas` and `v36-quota-counts-by-fingerprint`): each
/// flush adds its tally in one transaction, upserting by project, day, release and fingerprint ('' when unknown).
public struct SQLiteQuotaStore: QuotaCountStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func addQuotaCounts(_ counts: [QuotaCount], at now: Date) async throws {
        let counts = counts.filter { $0.accepted > 0 || $0.dropped > 0 }
        guard !counts.isEmpty else { return }
        let changedAt = Millis.from(now)
        let dropped = Set(
            counts.compactMap { count in
                count.dropped > 0 ? count.fingerprint.map { Pair(count.project.rawValue, $0.description) } : nil
            })
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
            // The issues of the dropped fingerprints (their own or merged into them) show the count on their pages.
            let mark = try db.cachedStatement(
                sql: """
                    UPDATE issues SET updated_at = max(updated_at, ?1)
                    WHERE (project_id = ?2 AND fingerprint = ?3)
                        OR id = (SELECT issue_id FROM issue_aliases WHERE project_id = ?2 AND fingerprint = ?3)
                    """)
            for pair in dropped {
                try mark.execute(arguments: [changedAt, pair.project, pair.fingerprint])
            }
        }
    }

    /// A project and a fingerprint, as a set's element.
    struct Pair: Hashable {
        var project: Int64
        var fingerprint: String
        init(_ project: Int64, _ fingerprint: String) {
            self.project = project
            self.fingerprint = fingerprint
        }
    }

    public func droppedEvents(project: ProjectID, fingerprints: [Fingerprint]) async throws -> Int {
        guard !fingerprints.isEmpty else { return 0 }
        return try await database.pool.read { db in
            try Int.fetchOne(
                db,
                sql: """
                    SELECT coalesce(sum(dropped), 0) FROM quota_counts
                    WHERE project_id = ? AND fingerprint <> '' AND fingerprint IN (\(databaseQuestionMarks(count: fingerprints.count)))
                    """,
                arguments: StatementArguments(
                    [project.rawValue.databaseValue] + fingerprints.map(\.description.databaseValue))
            ) ?? 0
        }
    }

    public func acceptedEvents(from: DayNumber) async throws -> [ProjectID: Int] {
        try await database.pool.read { db in
            var accepted: [ProjectID: Int] = [:]
            let rows = try Row.fetchCursor(
                db,
                sql: "SELECT project_id, sum(accepted) FROM quota_counts WHERE day >= ? GROUP BY project_id",
                arguments: [from.rawValue])
            while let row = try rows.next() {
                accepted[ProjectID(row[0])] = row[1]
            }
            return accepted
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
