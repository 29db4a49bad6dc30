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
/// Each issue's samples (`PostgresRetentionSamples`) stay: a dropped partition gives their rows to the DEFAULT partitions
/// first, and the row deletes leave them. Issue counters and health rollups are not touched, as on SQLite.
public struct PostgresRetentionStore: RetentionStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    static let lockKey = PostgresMigrations.lockKey + 2

    public func prune(before cutoff: Date, limit: Int, now: Date, samples: RetentionSamplePolicy) async throws
        -> PruneResult
    {
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
            let changedAt = Millis.from(now)
            // 2. Whole weeks, but for their samples.
            let old = try await PostgresPartitions.partitions(endingBy: cut, connection, logger)
            let weeks = Set(old.map { [$0.from, $0.to] }).map { ($0[0], $0[1]) }.sorted(by: <)
            if samples.keepsSamples, !weeks.isEmpty {
                var issues: Set<Int64> = []
                for (from, to) in weeks {
                    for try await issue in try await connection.query(
                        """
                        SELECT DISTINCT issue_id FROM reports
                        WHERE received_at >= \(from) AND received_at < \(to) AND issue_id IS NOT NULL AND sample IS NULL
                        """, logger: logger
                    ).decode(Int64.self) {
                        issues.insert(issue)
                    }
                }
                result.kept &+= try await PostgresRetentionSamples.refresh(
                    connection, logger, issues: issues.sorted(), policy: samples)
            }
            var kept: [Int64: Kept] = [:]
            for (from, to) in weeks {
                let week = try await Kept.read(from: from, to: to, connection, logger)
                kept[from] = week
                result.reports &+= try await PostgresRows.count(
                    connection.query(
                        """
                        DELETE FROM report_event_ids WHERE received_at >= \(from) AND received_at < \(to)
                            AND NOT (report_id = ANY(\(week.reports))) RETURNING 1
                        """,
                        logger: logger))
            }
            for partition in old {
                if partition.table == "reports" {
                    // Their issues' pages may show these reports as samples: marked changed, they are rendered again.
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: """
                                UPDATE issues SET updated_at = greatest(updated_at, $1)
                                WHERE id IN (SELECT DISTINCT issue_id FROM "\(partition.name)"
                                             WHERE issue_id IS NOT NULL AND sample IS NULL)
                                """,
                            binds: PostgresBindings(values: [changedAt])),
                        logger: logger)
                }
                result.attachments &+= try await Self.drop(
                    partition, keeping: kept[partition.from] ?? Kept(), connection, logger)
            }
            // 3. Rows older than the cutoff that are left (the straddling week, the DEFAULT partitions); a payload whose
            // reports are all samples stays.
            let payloads = try await connection.query(
                """
                SELECT p.id, p.received_at FROM payloads p
                WHERE p.received_at < \(cut)
                    AND (EXISTS (SELECT 1 FROM reports r
                                 WHERE r.payload_id = p.id AND r.received_at = p.received_at AND r.sample IS NULL)
                        OR NOT EXISTS (SELECT 1 FROM reports r WHERE r.payload_id = p.id AND r.received_at = p.received_at))
                ORDER BY p.received_at LIMIT \(limit)
                """,
                logger: logger)
            var ids: [Int64] = []
            var times: [Int64] = []
            for try await (id, time) in payloads.decode((Int64, Int64).self) {
                ids.append(id)
                times.append(time)
            }
            if !ids.isEmpty {
                if samples.keepsSamples {
                    var issues: [Int64] = []
                    for try await issue in try await connection.query(
                        """
                        SELECT DISTINCT issue_id FROM reports
                        WHERE payload_id = ANY(\(ids)) AND received_at = ANY(\(times))
                            AND issue_id IS NOT NULL AND sample IS NULL
                        """, logger: logger
                    ).decode(Int64.self) {
                        issues.append(issue)
                    }
                    result.kept &+= try await PostgresRetentionSamples.refresh(
                        connection, logger, issues: issues, policy: samples)
                }
                result.reports &+= try await PostgresRows.count(
                    connection.query(
                        """
                        DELETE FROM report_event_ids e USING reports r
                        WHERE r.payload_id = ANY(\(ids)) AND r.received_at = ANY(\(times)) AND r.sample IS NULL
                            AND e.project_id = r.project_id AND e.event_id = r.event_id RETURNING 1
                        """, logger: logger))
                var reportIDs: [Int64] = []
                var reportTimes: [Int64] = []
                var issueIDs: Set<Int64> = []
                for try await (id, time, issue) in try await connection.query(
                    """
                    DELETE FROM reports WHERE payload_id = ANY(\(ids)) AND received_at = ANY(\(times)) AND sample IS NULL
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
                // A payload that holds a sample stays with it (the sample is a byte range of it).
                try await connection.query(
                    """
                    DELETE FROM payloads p WHERE p.id = ANY(\(ids)) AND p.received_at = ANY(\(times))
                        AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.payload_id = p.id AND r.received_at = p.received_at)
                    """, logger: logger)
            }
            // Attachments go once their event is no stored report (a sample's stay with it).
            result.attachments &+= try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM attachments WHERE (id, received_at) IN
                        (SELECT a.id, a.received_at FROM attachments a WHERE a.received_at < \(cut) AND NOT EXISTS
                            (SELECT 1 FROM report_event_ids e WHERE e.project_id = a.project_id AND e.event_id = a.event_id)
                         ORDER BY a.received_at LIMIT \(limit))
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

extension PostgresRetentionStore {
    public func foldQuotaCounts(before day: DayNumber) async throws -> Int {
        let logger = database.logger
        let day = Int32(clamping: day.rawValue)
        return try await database.write { connection in
            // One statement: the fingerprint rows are deleted and their sums added to the totals (another node's
            // fold at the same time deletes no row twice: a row is deleted, and summed, by one of them).
            try await PostgresRows.count(
                connection.query(
                    """
                    WITH folded AS (
                        DELETE FROM quota_counts WHERE day < \(day) AND fingerprint <> ''
                        RETURNING project_id, day, release, accepted, dropped
                    ), totals AS (
                        INSERT INTO quota_counts (project_id, day, release, fingerprint, accepted, dropped)
                        SELECT project_id, day, release, '', sum(accepted), sum(dropped) FROM folded
                        GROUP BY project_id, day, release
                        ON CONFLICT (project_id, day, release, fingerprint)
                        DO UPDATE SET accepted = quota_counts.accepted + excluded.accepted,
                            dropped = quota_counts.dropped + excluded.dropped
                    )
                    SELECT 1 FROM folded
                    """, logger: logger))
        }
    }

    /// The samples of one week that retention drops: their report ids and their payloads' ids.
    struct Kept {
        var reports: [Int64] = []
        var payloads: [Int64] = []

        static func read(from: Int64, to: Int64, _ connection: PostgresConnection, _ logger: Logger) async throws
            -> Kept
        {
            var kept = Kept()
            for try await (id, payload) in try await connection.query(
                """
                SELECT id, payload_id FROM reports
                WHERE received_at >= \(from) AND received_at < \(to) AND sample IS NOT NULL
                """, logger: logger
            ).decode((Int64, Int64).self) {
                kept.reports.append(id)
                kept.payloads.append(payload)
            }
            return kept
        }

        /// Which rows of a partition of `table` are kept (`t`), over `$1`, bound to the report ids or the payload ids.
        func condition(_ table: String) -> (sql: String, ids: [Int64]) {
            switch table {
            case "payloads": ("t.id = ANY($1)", payloads)
            case "reports": ("t.id = ANY($1) AND t.sample IS NOT NULL", reports)
            case "attachments":
                (
                    """
                    EXISTS (SELECT 1 FROM report_event_ids e WHERE e.project_id = t.project_id AND e.event_id = t.event_id
                            AND e.report_id = ANY($1))
                    """, reports
                )
            default: ("t.report_id = ANY($1)", reports)
            }
        }
    }

    /// Drops `partition`; when its week holds samples, it is detached first and their rows go back into its table,
    /// where they land in the DEFAULT partition (no partition holds their week any more). Returns how many attachments
    /// went.
    static func drop(
        _ partition: PostgresPartitions.Partition, keeping kept: Kept, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> Int {
        let name = "\"\(partition.name)\""
        var total = 0
        if partition.table == "attachments" {
            for try await n in try await connection.query(
                PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(name)"), logger: logger
            ).decode(Int.self) {
                total = n
            }
        }
        var moved = 0
        if !kept.reports.isEmpty {
            try await connection.query(
                PostgresQuery(unsafeSQL: "ALTER TABLE \(partition.table) DETACH PARTITION \(name)"), logger: logger)
            let (condition, ids) = kept.condition(partition.table)
            moved = try await PostgresRows.count(
                connection.query(
                    PostgresQuery(
                        unsafeSQL:
                            "INSERT INTO \(partition.table) SELECT t.* FROM \(name) t WHERE \(condition) RETURNING 1",
                        binds: PostgresBindings(values: [ids])),
                    logger: logger))
        }
        try await connection.query(PostgresQuery(unsafeSQL: "DROP TABLE \(name)"), logger: logger)
        return partition.table == "attachments" ? max(0, total - moved) : 0
    }
}
