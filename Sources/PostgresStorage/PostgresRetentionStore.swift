import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Retention on PostgreSQL: whole weekly partitions are dropped, the rest is deleted by rows.
///
/// A pass, under a transaction-level advisory lock that only one node holds at a time (another node's pass
/// returns at once with nothing pruned, as the work is being done):
/// 1. makes sure the coming weeks' partitions exist (the maintenance `PostgresPartitions` needs, hourly);
/// 2. drops the partitions of `payloads`, `reports` and `attachments` whose week ended before the cutoff, with their
///    event-id claims: the space goes back to the file system at once, with no dead rows for VACUUM;
/// 3. deletes by rows what is older than the cutoff in the week that straddles it (and in the DEFAULT partitions),
///    at most `limit` payloads a pass, and sessions last updated before the cutoff.
/// Issue counters and health rollups are not touched, as on SQLite.
public struct PostgresRetentionStore: RetentionStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    static let lockKey = PostgresMigrations.lockKey + 2

    public func prune(before cutoff: Date, limit: Int, now: Date) async throws -> PruneResult {
        try await PostgresPartitions.ensure(around: Millis.from(Date()), database)
        let logger = database.logger
        let cut = Millis.from(cutoff)
        let limit = Int64(max(1, limit))
        return try await database.write { connection in
            var taken = false
            for try await value in try await connection.query(
                "SELECT pg_try_advisory_xact_lock(\(Self.lockKey))", logger: logger
            )
            .decode(Bool.self) {
                taken = value
            }
            guard taken else { return PruneResult() }
            var result = PruneResult()
            // 2. Whole weeks.
            let old = try await PostgresPartitions.partitions(endingBy: cut, connection, logger)
            for (from, to) in Set(old.map { [$0.from, $0.to] }).map({ ($0[0], $0[1]) }).sorted(by: <) {
                result.reports &+= try await PostgresRows.count(
                    connection.query(
                        "DELETE FROM report_event_ids WHERE received_at >= \(from) AND received_at < \(to) RETURNING 1",
                        logger: logger))
            }
            let changedAt = Millis.from(now)
            for partition in old {
                if partition.table == "reports" {
                    // Their issues' pages may show these reports as samples: marked changed, they are rendered again.
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: """
                                UPDATE issues SET updated_at = greatest(updated_at, $1)
                                WHERE id IN (SELECT DISTINCT issue_id FROM "\(partition.name)" WHERE issue_id IS NOT NULL)
                                """,
                            binds: PostgresBindings(values: [changedAt])),
                        logger: logger)
                }
                if partition.table == "attachments" {
                    let count = try await connection.query(
                        PostgresQuery(unsafeSQL: "SELECT count(*) FROM \"\(partition.name)\""), logger: logger)
                    for try await n in count.decode(Int.self) { result.attachments &+= n }
                }
                try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \"\(partition.name)\""), logger: logger)
            }
            // 3. Rows older than the cutoff that are left (the straddling week, the DEFAULT partitions).
            let payloads = try await connection.query(
                "SELECT id, received_at FROM payloads WHERE received_at < \(cut) ORDER BY received_at LIMIT \(limit)",
                logger: logger)
            var ids: [Int64] = []
            var times: [Int64] = []
            for try await (id, time) in payloads.decode((Int64, Int64).self) {
                ids.append(id)
                times.append(time)
            }
            if !ids.isEmpty {
                result.reports &+= try await PostgresRows.count(
                    connection.query(
                        """
                        DELETE FROM report_event_ids e USING reports r
                        WHERE r.payload_id = ANY(\(ids)) AND r.received_at = ANY(\(times))
                            AND e.project_id = r.project_id AND e.event_id = r.event_id RETURNING 1
                        """, logger: logger))
                var reportIDs: [Int64] = []
                var reportTimes: [Int64] = []
                var issueIDs: Set<Int64> = []
                for try await (id, time, issue) in try await connection.query(
                    """
                    DELETE FROM reports WHERE payload_id = ANY(\(ids)) AND received_at = ANY(\(times))
                    RETURNING id, received_at, issue_id
                    """,
                    logger: logger
                ).decode((Int64, Int64, Int64?).self) {
                    reportIDs.append(id)
                    reportTimes.append(time)
                    if let issue { issueIDs.insert(issue) }
                }
                if !issueIDs.isEmpty {
                    try await connection.query(
                        """
                        UPDATE issues SET updated_at = greatest(updated_at, \(changedAt))
                        WHERE id = ANY(\(issueIDs.sorted()))
                        """, logger: logger)
                }
                // What hangs off a report goes with it (no foreign keys between partitioned tables).
                for table in ["report_symbols", "report_modules", "search_documents"] {
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "DELETE FROM \(table) WHERE report_id = ANY($1) AND received_at = ANY($2)",
                            binds: PostgresBindings(values: [reportIDs, reportTimes])),
                        logger: logger)
                }
                try await connection.query(
                    "DELETE FROM payloads WHERE id = ANY(\(ids)) AND received_at = ANY(\(times))", logger: logger)
            }
            result.attachments &+= try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM attachments WHERE (id, received_at) IN
                        (SELECT id, received_at FROM attachments WHERE received_at < \(cut) ORDER BY received_at LIMIT \(limit))
                    RETURNING 1
                    """, logger: logger))
            result.sessions &+= try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM sessions WHERE (project_id, session_id) IN
                        (SELECT project_id, session_id FROM sessions WHERE updated_at < \(cut) LIMIT \(limit))
                    RETURNING 1
                    """, logger: logger))
            return result
        }
    }
}
