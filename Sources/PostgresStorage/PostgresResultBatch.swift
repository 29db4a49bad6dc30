import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Saves the results of many reports at once, in the caller's transaction: the set-based twin of
/// `PostgresSymbolicationStore.save` for the distinct reports of a batch, new or filed before (`saveInSets`).
/// Each table is written by one statement for all of them (arrays bound as parameters, `unnest`), so a batch costs a
/// fixed number of round trips instead of ~25 per report: the debug files the results touched (one read), the
/// grouping (`PostgresBatchGrouper`), then the report rows, results, modules and search entries.
enum PostgresResultBatch {
    /// One report of the batch: its outcome, its stored bytes, its (locked) row, the build-ids its result touched.
    struct Item {
        var outcome: SymbolicationOutcome
        var encoded: StoredOutcome
        var report: FiledReport
        var touched: [String]
    }

    /// Saves `items` (their fingerprints' locks and their rows held by the caller); the issue of each report.
    static func save(
        _ items: [Item], now: Int64, reads: PostgresBatchReads, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [Int64: IssueID?]
    {
        guard !items.isEmpty else { return [:] }
        try await reads.load(
            items.flatMap { item in item.touched.map { (item.report.project, $0) } }, connection, logger)
        // The race with an upload, as in `save`: a result whose build-ids got a file after its batch was read is kept,
        // but its report stays queued and is not grouped yet.
        var stale: [Bool] = []
        for item in items {
            guard let seen = item.outcome.filesSeen else {
                stale.append(false)
                continue
            }
            stale.append(
                try await reads.storedAfter(
                    seen, project: item.report.project, buildIDs: item.touched, connection, logger))
        }
        var filings: [PostgresBatchGrouper.Filing] = []
        for (item, stale) in zip(items, stale) where !stale {
            guard let grouping = item.outcome.grouping else { continue }
            filings.append(
                PostgresBatchGrouper.Filing(
                    report: item.report, input: grouping,
                    groupingJSON: item.encoded.grouping ?? StoredJSON.encode(grouping.grouping)))
        }
        // Issues first: the report rows name them.
        let filed = try await PostgresBatchGrouper.file(filings, now: now, reads: reads, connection, logger)
        try await updateReports(items, stale: stale, filed: filed, connection, logger)
        try await writeResults(items, now: now, connection, logger)
        try await writeModules(items, reads: reads, connection, logger)
        // Once every report's row and modules are written: they say which results are final.
        try await dropProcessedMinidumps(
            items.filter { $0.outcome.result.walk != nil }.map(\.report), connection, logger)
        try await PostgresSearchStore.replace(
            items.compactMap { item in item.outcome.search.map { (report: item.report, document: $0) } }, connection,
            logger)
        var issues: [Int64: IssueID?] = [:]
        for item in items {
            issues[item.report.id] = (filed[item.report.id]?.issue ?? item.report.issueID).map { IssueID($0) }
        }
        return issues
    }

    /// The report rows: state, failure and attempts, the claim dropped; a filed report's issue and early flag; the
    /// grouping version of every report that is not stale (one without a grouping has nothing to redo either).
    static func updateReports(
        _ items: [Item], stale: [Bool], filed: [Int64: PostgresBatchGrouper.Filed], _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let states = zip(items, stale).map { item, stale in
            stale ? SymbolicationState.pending.rawValue : item.outcome.result.state.rawValue
        }
        let failures = items.map(\.outcome.result.failure)
        let filings = items.map { filed[$0.report.id] }
        // What fingerprint rules matched on (`GroupingFacts`), for a report filed now; others keep theirs.
        let facts = zip(items, stale).map { item, stale in stale ? nil : item.outcome.grouping?.facts?.encoded }
        // Arrays of non-optional values: an absent value is a placeholder with its flag false.
        try await connection.query(
            """
            UPDATE reports r SET symbolication = u.state,
                symbolication_failure = CASE WHEN u.failed THEN u.failure END,
                symbolication_attempts = CASE WHEN u.failed THEN r.symbolication_attempts ELSE 0 END,
                claimed_until = NULL,
                issue_id = CASE WHEN u.filed THEN u.issue ELSE r.issue_id END,
                early = CASE WHEN NOT u.filed THEN r.early WHEN u.timed THEN u.early END,
                grouping_version = CASE WHEN u.versioned THEN \(Grouping.version) ELSE r.grouping_version END,
                grouping_facts = CASE WHEN u.faceted THEN u.facts ELSE r.grouping_facts END
            FROM unnest(\(items.map(\.report.id))::bigint[], \(items.map(\.report.receivedAt))::bigint[], \(states)::text[],
                        \(failures.map { $0 != nil })::boolean[], \(failures.map { $0 ?? "" })::text[],
                        \(filings.map { $0 != nil })::boolean[], \(filings.map { $0?.issue ?? 0 })::bigint[],
                        \(filings.map { $0?.early != nil })::boolean[], \(filings.map { $0?.early ?? false })::boolean[],
                        \(stale.map { !$0 })::boolean[], \(facts.map { $0 != nil })::boolean[],
                        \(facts.map { $0 ?? "" })::text[])
                AS u(id, received_at, state, failed, failure, filed, issue, timed, early, versioned, faceted, facts)
            WHERE r.id = u.id AND r.received_at = u.received_at
            """, logger: logger)
    }

    /// The results: none kept for a report that needed nothing (its own frames say it all), the others replaced.
    static func writeResults(_ items: [Item], now: Int64, _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        let dropped = items.filter { $0.outcome.result.state == .notNeeded }.map(\.report)
        if !dropped.isEmpty {
            try await connection.query(
                """
                DELETE FROM report_symbols s USING unnest(\(dropped.map(\.id))::bigint[], \(dropped.map(\.receivedAt))::bigint[]) AS u(id, received_at)
                WHERE s.report_id = u.id AND s.received_at = u.received_at
                """, logger: logger)
        }
        let kept = items.filter { $0.outcome.result.state != .notNeeded }
        guard !kept.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO report_symbols (report_id, received_at, result, updated_at)
            SELECT id, received_at, result, \(now)
            FROM unnest(\(kept.map(\.report.id))::bigint[], \(kept.map(\.report.receivedAt))::bigint[],
                        \(kept.map { ByteBuffer(bytes: $0.encoded.result) })::bytea[]) AS u(id, received_at, result)
            ON CONFLICT (report_id, received_at) DO UPDATE SET result = excluded.result, updated_at = excluded.updated_at
            """, logger: logger)
    }

    /// Deletes, in the caller's transaction, the minidumps of `reports` (saved with a walked result) whose result is
    /// final, when their project keeps dumps only until processed (`MinidumpRetention.untilProcessed`, the default).
    /// Final: the report is not queued again (a stale result stays `pending`) and no module of its result lacks every
    /// debug file (no `report_modules` row of rank 0), so no late upload can change the walk. Until then the dump is kept:
    /// a late file queues the report, and it is walked again. Run after the reports' rows and modules are written.
    static func dropProcessedMinidumps(_ reports: [FiledReport], _ connection: PostgresConnection, _ logger: Logger)
        async throws
    {
        guard !reports.isEmpty else { return }
        try await connection.query(
            """
            DELETE FROM attachments a
            USING unnest(\(reports.map(\.id))::bigint[], \(reports.map(\.receivedAt))::bigint[]) AS u(id, received_at)
                JOIN reports r ON r.id = u.id AND r.received_at = u.received_at
                JOIN projects p ON p.id = r.project_id
            WHERE r.symbolication <> 'pending' AND p.minidump_retention = 'until_processed'
                AND a.project_id = r.project_id AND a.event_id = r.event_id AND a.attachment_type = 'event.minidump'
                AND NOT EXISTS (
                    SELECT 1 FROM report_modules m WHERE m.report_id = r.id AND m.received_at = r.received_at AND m.rank = 0)
            """, logger: logger)
    }

    /// Which debug data each build-id had when the results were saved (`PostgresSymbolicationStore.recordModules` for
    /// every report at once): the reports' rows replaced by one delete and one insert.
    static func writeModules(
        _ items: [Item], reads: PostgresBatchReads, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            DELETE FROM report_modules m
            USING unnest(\(items.map(\.report.id))::bigint[], \(items.map(\.report.receivedAt))::bigint[]) AS u(id, received_at)
            WHERE m.report_id = u.id AND m.received_at = u.received_at
            """, logger: logger)
        var rows: [(report: FiledReport, module: PostgresSymbolicationStore.ModuleRow)] = []
        for item in items {
            for module in try await PostgresSymbolicationStore.moduleRows(
                item.outcome, report: item.report, touched: item.touched, reads: reads, connection, logger)
            {
                rows.append((item.report, module))
            }
        }
        guard !rows.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO report_modules (report_id, received_at, project_id, build_id, module, release, rank)
            SELECT id, received_at, p, b, CASE WHEN n THEN m END, CASE WHEN hr THEN r END, rk
            FROM unnest(\(rows.map { $0.report.id })::bigint[], \(rows.map { $0.report.receivedAt })::bigint[],
                        \(rows.map { $0.report.project.rawValue })::bigint[], \(rows.map { $0.module.buildID })::text[],
                        \(rows.map { $0.module.name ?? "" })::text[], \(rows.map { $0.module.name != nil })::boolean[],
                        \(rows.map { $0.report.release ?? "" })::text[], \(rows.map { $0.report.release != nil })::boolean[],
                        \(rows.map { $0.module.rank })::bigint[])
                AS u(id, received_at, p, b, m, n, r, hr, rk)
            """, logger: logger)
    }
}
