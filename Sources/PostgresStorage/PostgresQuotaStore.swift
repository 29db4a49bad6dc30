import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Quota counts on PostgreSQL (`quota_counts`, migrations `pg16-event-quotas` and
/// `pg21-quota-counts-by-fingerprint`): each node's flush adds its tally in
/// one statement, so the sums are exact however many nodes count.
public struct PostgresQuotaStore: QuotaCountStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func addQuotaCounts(_ counts: [QuotaCount], at now: Date) async throws {
        let counts = counts.filter { $0.accepted > 0 || $0.dropped > 0 }
        guard !counts.isEmpty else { return }
        let projects = counts.map(\.project.rawValue)
        let days = counts.map { Int32(clamping: $0.day.rawValue) }
        let releases = counts.map { StoredText.clean($0.release) }
        let fingerprints = counts.map { $0.fingerprint?.description ?? "" }
        let accepted = counts.map { Int64(max($0.accepted, 0)) }
        let dropped = counts.map { Int64(max($0.dropped, 0)) }
        let changedAt = Millis.from(now)
        let logger = database.logger
        try await database.write { connection in
            // Grouped first: one statement may not update a row twice. A project deleted since the events were
            // counted has no row to add to (the join drops its counts).
            try await connection.query(
                """
                INSERT INTO quota_counts (project_id, day, release, fingerprint, accepted, dropped)
                SELECT u.p, u.d, u.r, u.f, sum(u.a), sum(u.x)
                FROM unnest(\(projects)::bigint[], \(days)::integer[], \(releases)::text[], \(fingerprints)::text[],
                    \(accepted)::bigint[], \(dropped)::bigint[]) AS u(p, d, r, f, a, x)
                JOIN projects ON projects.id = u.p
                GROUP BY u.p, u.d, u.r, u.f
                ON CONFLICT (project_id, day, release, fingerprint)
                DO UPDATE SET accepted = quota_counts.accepted + excluded.accepted,
                    dropped = quota_counts.dropped + excluded.dropped
                """, logger: logger)
            // The issues of the dropped fingerprints (their own or merged into them) show the count on their pages.
            let marked = counts.filter { $0.dropped > 0 && $0.fingerprint != nil }
            guard !marked.isEmpty else { return }
            let markedProjects = marked.map(\.project.rawValue)
            let markedPrints = marked.map { $0.fingerprint?.description ?? "" }
            try await connection.query(
                """
                UPDATE issues SET updated_at = greatest(updated_at, \(changedAt))
                WHERE id IN (
                    SELECT i.id FROM unnest(\(markedProjects)::bigint[], \(markedPrints)::text[]) AS u(p, f)
                    JOIN issues i ON i.project_id = u.p AND i.fingerprint = u.f
                    UNION
                    SELECT a.issue_id FROM unnest(\(markedProjects)::bigint[], \(markedPrints)::text[]) AS u(p, f)
                    JOIN issue_aliases a ON a.project_id = u.p AND a.fingerprint = u.f)
                """, logger: logger)
        }
    }

    public func droppedEvents(project: ProjectID, fingerprints: [Fingerprint]) async throws -> Int {
        guard !fingerprints.isEmpty else { return 0 }
        let prints = fingerprints.map(\.description)
        let logger = database.logger
        return try await database.read { connection in
            var total: Int64 = 0
            for try await sum in try await connection.query(
                """
                SELECT coalesce(sum(dropped), 0)::bigint FROM quota_counts
                WHERE project_id = \(project.rawValue) AND fingerprint <> '' AND fingerprint = ANY(\(prints)::text[])
                """, logger: logger
            ).decode(Int64.self) {
                total = sum
            }
            return Int(clamping: total)
        }
    }

    public func acceptedEvents(from: DayNumber) async throws -> [ProjectID: Int] {
        let logger = database.logger
        let day = Int32(clamping: from.rawValue)
        return try await database.read { connection in
            var accepted: [ProjectID: Int] = [:]
            for try await (project, sum) in try await connection.query(
                """
                SELECT project_id, sum(accepted)::bigint FROM quota_counts WHERE day >= \(day) GROUP BY project_id
                """, logger: logger
            ).decode((Int64, Int64).self) {
                accepted[ProjectID(project)] = Int(clamping: sum)
            }
            return accepted
        }
    }

    public func quotaCounts(project: ProjectID, from: DayNumber) async throws -> [QuotaCount] {
        let logger = database.logger
        let day = Int32(clamping: from.rawValue)
        return try await database.read { connection in
            var counts: [QuotaCount] = []
            let rows = try await connection.query(
                """
                SELECT day, release, fingerprint, accepted, dropped FROM quota_counts
                WHERE project_id = \(project.rawValue) AND day >= \(day) ORDER BY day DESC, release, fingerprint
                """, logger: logger)
            for try await (day, release, fingerprint, accepted, dropped) in rows.decode(
                (Int32, String, String, Int64, Int64).self)
            {
                counts.append(
                    QuotaCount(
                        project: project, day: DayNumber(rawValue: Int(day)), release: release,
                        fingerprint: fingerprint.isEmpty ? nil : Fingerprint(fingerprint),
                        accepted: Int(clamping: accepted), dropped: Int(clamping: dropped)))
            }
            return counts
        }
    }
}
