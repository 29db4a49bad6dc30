import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The symbolication queue and results on PostgreSQL (the twin of `SQLiteSymbolicationStore`), for several nodes.
///
/// **Claims.** `pending` takes its batch: the pending rows no node holds (`claimed_until` empty or past), oldest
/// first, locked with `FOR UPDATE SKIP LOCKED` so that two nodes asking at once get different reports, and marked
/// as held for the engine's `claimLease`. A node that dies leaves its claims to expire; any node takes them after. Saving a result
/// drops the claim. The attempt count (`recordAttempt`) still tells a poison pill from a dead node's batch: it is
/// committed before symbolication starts, whichever node retries.
///
/// **Saving a batch.** One transaction. Reports are filed in fingerprint order, each under a transaction-level
/// advisory lock on its fingerprint, so that two nodes filing reports of one new crash create its issue once, and
/// always take their locks in the same order (no deadlock between them). PostgreSQL ends a transaction at its first
/// error: a report the server refuses sends the batch through a savepoint per report (the refused one leaves the
/// queue as `missing`, as on SQLite); a deadlock or serialization failure with another node's transaction redoes the
/// whole batch.
public struct PostgresSymbolicationStore: SymbolicationStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func pending(limit: Int, excluding: Set<Int64>) async throws -> [PendingSymbolication] {
        let logger = database.logger
        let now = Millis.from(Date())
        let limit = Int64(max(1, limit))
        return try await database.write { connection in
            // Read before the claim: a debug file stored after this is seen by `save` (its stored_seq is higher).
            let filesSeen = try await PostgresDebugData.sequence(connection, logger)
            let columns = ReportSQL.columns
            let claimed = try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        WITH taken AS (
                            SELECT id, received_at FROM reports
                            WHERE symbolication = 'pending' AND (claimed_until IS NULL OR claimed_until < $1)
                                AND NOT (id = ANY($4))
                            ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
                        UPDATE reports r SET claimed_until = $3 FROM taken t
                        WHERE r.id = t.id AND r.received_at = t.received_at
                        RETURNING \(columns), r.payload_id, r.payload_offset, r.payload_length, r.symbolication_attempts
                        """,
                    // The reports left out are claimed by this worker already (its batch being saved); left out
                    // here too in case their claim ran out meanwhile.
                    binds: PostgresBindings(values: [now, limit, now &+ database.claimLease, Array(excluding)])),
                logger: logger)
            struct Row {
                var summary: ReportSummary
                var payload: Int64
                var offset: Int64
                var length: Int64
                var attempts: Int
            }
            var rows: [Row] = []
            let count = ReportSQL.columnNames.count
            for try await row in claimed {
                let cells = row.makeRandomAccess()
                guard let summary = try ReportSQL.summary(PostgresRowCells(cells)) else { continue }
                rows.append(
                    Row(
                        summary: summary, payload: try cells[count].decode(Int64.self),
                        offset: try cells[count + 1].decode(Int64.self),
                        length: try cells[count + 2].decode(Int64.self), attempts: try cells[count + 3].decode(Int.self)
                    ))
            }
            rows.sort { $0.summary.cursor < $1.summary.cursor }
            // Each payload once (a 20-report request body is one payload), and each project's in-app rules once.
            var payloads: [Int64: StoredPayload] = [:]
            let payloadIDs = Array(Set(rows.map(\.payload)))
            let payloadTimes = Array(Set(rows.map { Millis.from($0.summary.receivedAt) }))
            if !payloadIDs.isEmpty {
                for try await (id, encoding, inflated, bytes, format) in try await connection.query(
                    """
                    SELECT id, encoding, inflated_size, bytes, format FROM payloads
                    WHERE id = ANY(\(payloadIDs)) AND received_at = ANY(\(payloadTimes))
                    """, logger: logger
                ).decode((Int64, String, Int64, Data, String).self) {
                    guard let encoding = StoredPayload.Encoding(rawValue: encoding),
                        let format = StoredPayload.Format(rawValue: format),
                        let inflated = Int(exactly: inflated)
                    else { continue }
                    payloads[id] = StoredPayload(
                        bytes: Array(bytes), encoding: encoding, inflatedSize: inflated, format: format)
                }
            }
            var rules: [Int64: InAppRules] = [:]
            var fingerprints: [Int64: FingerprintRules] = [:]
            let projects = Array(Set(rows.map(\.summary.project.rawValue)))
            if !projects.isEmpty {
                for try await (id, include, exclude) in try await connection.query(
                    "SELECT id, in_app_include, in_app_exclude FROM projects WHERE id = ANY(\(projects))",
                    logger: logger
                ).decode((Int64, String, String).self) {
                    rules[id] = InAppRules(include: StoredList.decode(include), exclude: StoredList.decode(exclude))
                }
                // Each project's fingerprint rules in force: its latest version.
                for try await (id, text) in try await connection.query(
                    """
                    SELECT DISTINCT ON (project_id) project_id, rules FROM grouping_rules
                    WHERE project_id = ANY(\(projects)) ORDER BY project_id, version DESC
                    """, logger: logger
                ).decode((Int64, String).self) {
                    fingerprints[id] = (try? FingerprintRules.parse(text)) ?? .none
                }
            }
            return rows.compactMap { row -> PendingSymbolication? in
                guard let payload = payloads[row.payload], let offset = Int(exactly: row.offset),
                    let length = Int(exactly: row.length),
                    offset >= 0, length >= 0, !offset.addingReportingOverflow(length).overflow
                else { return nil }
                return PendingSymbolication(
                    reportID: row.summary.cursor, project: row.summary.project,
                    raw: RawReport(summary: row.summary, payload: payload, range: offset..<(offset + length)),
                    attempts: row.attempts,
                    filesSeen: filesSeen, inApp: rules[row.summary.project.rawValue] ?? .none, payload: row.payload,
                    fingerprints: fingerprints[row.summary.project.rawValue] ?? .none)
            }
        }
    }

    public func recordAttempt(reportIDs: [Int64]) async throws {
        guard !reportIDs.isEmpty else { return }
        let logger = database.logger
        // Its own transaction, committed now: the count must survive the process dying right after.
        try await database.write { connection in
            try await connection.query(
                "UPDATE reports SET symbolication_attempts = symbolication_attempts + 1 WHERE id = ANY(\(reportIDs))",
                logger: logger)
        }
    }

    public func releaseClaims(reportIDs: [Int64]) async throws {
        guard !reportIDs.isEmpty else { return }
        let logger = database.logger
        try await database.write { connection in
            try await connection.query(
                "UPDATE reports SET claimed_until = NULL WHERE id = ANY(\(reportIDs)) AND symbolication = 'pending'",
                logger: logger)
        }
    }

    public func save(_ result: SymbolicatedReport, grouping: GroupingInput?, reportID: Int64, at date: Date)
        async throws -> IssueID?
    {
        let outcome = SymbolicationOutcome(reportID: reportID, result: result, grouping: grouping)
        return try await saveBatch([outcome], at: date)[reportID] ?? nil
    }

    public func saveAll(_ results: [SymbolicationOutcome], at date: Date) async throws {
        _ = try await saveBatch(results, at: date)
    }

    /// Saves `results` in one transaction; the issue of each report (nil: not grouped, or gone).
    func saveBatch(_ results: [SymbolicationOutcome], at date: Date) async throws -> [Int64: IssueID?] {
        let now = Millis.from(date)
        let encoded = await StoredOutcome.encodeAll(results, codec: database.codec)
        // Fingerprint order: the advisory locks are always taken in the same order by every node.
        let ordered = zip(results, encoded).sorted { a, b in
            let ka = a.0.grouping?.grouping.fingerprint.rawValue ?? ""
            let kb = b.0.grouping?.grouping.fingerprint.rawValue ?? ""
            return (ka, a.0.reportID) < (kb, b.0.reportID)
        }
        let logger = database.logger
        let identities = database.identities
        // The set-based writes change each row once: a report given twice is saved one result after the other.
        let distinct = Set(results.map(\.reportID)).count == results.count
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await database.write { connection in
                    if distinct {
                        return try await Self.saveInSets(ordered, now: now, identities: identities, connection, logger)
                    }
                    let reads = PostgresBatchReads(identities: identities)
                    var issues: [Int64: IssueID?] = [:]
                    for (outcome, json) in ordered {
                        issues[outcome.reportID] = try await Self.save(
                            outcome, encoded: json, now: now, reads: reads, connection, logger)
                    }
                    return issues
                }
            } catch  where PostgresErrors.isRefusal(error) {
                return try await saveEachInASavepoint(ordered, now: now)
            } catch  where PostgresErrors.isConflictWithAnotherTransaction(error) && attempt < 5 {
                continue
            }
        }
    }

    /// `saveBatch`'s first try, in one transaction: every fingerprint's lock in order, then every report's row, then the
    /// reports set-based (`PostgresResultBatch`, a fixed number of statements), new ones and those filed before (moving
    /// between issues after late symbols, or migrating to a new grouping version) in one filing plan, which decides each
    /// against what the reports before it did, as when each report is saved alone. The reports are distinct (`saveBatch`
    /// saves a batch with a repeated report one at a time).
    static func saveInSets(
        _ ordered: [(SymbolicationOutcome, StoredOutcome)], now: Int64, identities: IdentityHashers?,
        _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [Int64: IssueID?]
    {
        var fingerprints: [String] = []
        for (outcome, _) in ordered {
            if let fingerprint = outcome.grouping?.grouping.fingerprint.rawValue, fingerprints.last != fingerprint {
                fingerprints.append(fingerprint)
            }
        }
        try await PostgresGrouper.lock(fingerprints: fingerprints, connection, logger)
        let reports = try await FiledReport.lock(ordered.map { $0.0.reportID }, connection, logger)
        let items = ordered.compactMap { outcome, json in
            // A report gone is left out.
            reports[outcome.reportID].map {
                PostgresResultBatch.Item(outcome: outcome, encoded: json, report: $0, touched: json.touched)
            }
        }
        return try await PostgresResultBatch.save(
            items, now: now, reads: PostgresBatchReads(identities: identities), connection, logger)
    }

    /// `saveBatch`'s second try: each report in its own savepoint; one the server refuses leaves the queue ungrouped
    /// (state 'missing') so that it cannot block its batch forever, and the rest commits.
    private func saveEachInASavepoint(_ ordered: [(SymbolicationOutcome, StoredOutcome)], now: Int64) async throws
        -> [Int64: IssueID?]
    {
        let logger = database.logger
        return try await database.write { connection in
            let reads = PostgresBatchReads(identities: database.identities)
            var issues: [Int64: IssueID?] = [:]
            for (outcome, json) in ordered {
                try await connection.query("SAVEPOINT report", logger: logger)
                do {
                    issues[outcome.reportID] = try await Self.save(
                        outcome, encoded: json, now: now, reads: reads, connection, logger)
                    try await connection.query("RELEASE SAVEPOINT report", logger: logger)
                } catch  where PostgresErrors.isRefusal(error) {
                    try await connection.query("ROLLBACK TO SAVEPOINT report", logger: logger)
                    try await connection.query(
                        """
                        UPDATE reports SET symbolication = 'missing', symbolication_failure = 'the database refused the symbolication result',
                            claimed_until = NULL
                        WHERE id = \(outcome.reportID)
                        """, logger: logger)
                }
            }
            return issues
        }
    }

    static func save(
        _ outcome: SymbolicationOutcome, encoded json: StoredOutcome, now: Int64, reads: PostgresBatchReads,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> IssueID? {
        if let grouping = outcome.grouping {
            // Before anything of the report is read: the lock that orders the filing of one fingerprint across nodes.
            try await PostgresGrouper.lock(fingerprint: grouping.grouping.fingerprint, connection, logger)
        }
        guard let report = try await FiledReport.lock(outcome.reportID, connection, logger) else { return nil }
        let project = report.project
        let touched = json.touched
        // The race with an upload: a debug file of a build-id this result touched, stored after the batch was read, may
        // not have been seen by the lookups. The result is kept but the report stays queued and is not grouped yet.
        var stale = false
        if let seen = outcome.filesSeen {
            stale = try await reads.storedAfter(seen, project: project, buildIDs: touched, connection, logger)
        }
        let state = stale ? SymbolicationState.pending : outcome.result.state
        // A clean result resets the attempt count (a later requeue starts afresh); a failure keeps it. The claim goes.
        try await connection.query(
            """
            UPDATE reports SET symbolication = \(state.rawValue), symbolication_failure = \(outcome.result.failure),
                symbolication_attempts = CASE WHEN \(outcome.result.failure)::text IS NULL THEN 0 ELSE symbolication_attempts END,
                claimed_until = NULL
            WHERE id = \(report.id) AND received_at = \(report.receivedAt)
            """, logger: logger)
        if outcome.result.state == .notNeeded {
            // Nothing was resolved: the report's own frames say it all, so no copy of them is stored.
            try await connection.query(
                "DELETE FROM report_symbols WHERE report_id = \(report.id) AND received_at = \(report.receivedAt)",
                logger: logger)
        } else {
            try await connection.query(
                """
                INSERT INTO report_symbols (report_id, received_at, result, updated_at)
                VALUES (\(report.id), \(report.receivedAt), \(json.result), \(now))
                ON CONFLICT (report_id, received_at) DO UPDATE SET result = excluded.result, updated_at = excluded.updated_at
                """, logger: logger)
        }
        try await recordModules(outcome, report: report, touched: touched, reads: reads, connection, logger)
        if outcome.result.walk != nil {
            // The report's row (its state) and modules are written: they say whether the result is final.
            try await PostgresResultBatch.dropProcessedMinidumps([report], connection, logger)
        }
        if let search = outcome.search {
            try await PostgresSearchStore.replace(search, report: report, connection, logger)
        }
        if stale { return report.issueID.map { IssueID($0) } }
        guard let grouping = outcome.grouping else {
            // Not grouped (failed without symbols): nothing for a newer grouping version to redo either.
            try await connection.query(
                "UPDATE reports SET grouping_version = \(Grouping.version) WHERE id = \(report.id) AND received_at = \(report.receivedAt)",
                logger: logger)
            return report.issueID.map { IssueID($0) }
        }
        // Alone: a plan of one report.
        let filing = PostgresBatchGrouper.Filing(
            report: report, input: grouping, groupingJSON: json.grouping ?? StoredJSON.encode(grouping.grouping))
        guard
            let filed = try await PostgresBatchGrouper.file([filing], now: now, reads: reads, connection, logger)[
                report.id]
        else { throw StorageError(.conflict, "grouping decided no issue for report \(report.id)") }
        try await connection.query(
            """
            UPDATE reports SET issue_id = \(filed.issue), early = \(filed.early), grouping_version = \(Grouping.version),
                grouping_facts = coalesce(\(grouping.facts?.encoded), grouping_facts)
            WHERE id = \(report.id) AND received_at = \(report.receivedAt)
            """, logger: logger)
        return IssueID(filed.issue)
    }

    /// Which debug data each build-id had when this result was saved (`report_modules`): a build-id missing from the
    /// result has rank 0; one resolved has the rank of the project's best stored file for it.
    static func recordModules(
        _ outcome: SymbolicationOutcome, report: FiledReport, touched: [String], reads: PostgresBatchReads,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            "DELETE FROM report_modules WHERE report_id = \(report.id) AND received_at = \(report.receivedAt)",
            logger: logger)
        let rows = try await moduleRows(outcome, report: report, touched: touched, reads: reads, connection, logger)
        guard !rows.isEmpty else { return }
        // PostgresNIO binds arrays of non-optional values: a module name that is absent is "" with `named` false.
        // One statement for all of the report's build-ids, whatever their number (arrays, not one parameter each).
        try await connection.query(
            """
            INSERT INTO report_modules (report_id, received_at, project_id, build_id, module, release, rank)
            SELECT \(report.id), \(report.receivedAt), \(report.project.rawValue), b, CASE WHEN n THEN m END, \(report.release), r
            FROM unnest(\(rows.map(\.buildID))::text[], \(rows.map { $0.name ?? "" })::text[], \(rows.map { $0.name != nil })::boolean[],
                        \(rows.map(\.rank))::bigint[]) AS u(b, m, n, r)
            """, logger: logger)
    }

    /// A row of `report_modules`: a build-id the result touched, the module name the report gave it, its rank.
    struct ModuleRow {
        var buildID: String
        var name: String?
        var rank: Int64
    }

    /// The `report_modules` rows of a result, one per build-id it touched.
    static func moduleRows(
        _ outcome: SymbolicationOutcome, report: FiledReport, touched: [String], reads: PostgresBatchReads,
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> [ModuleRow] {
        let missing = Dictionary(
            outcome.result.missing.map { ($0.buildID, $0.module) }, uniquingKeysWith: { first, _ in first })
        var rows: [ModuleRow] = []
        for buildID in touched {
            let rank =
                missing[buildID] != nil
                ? DebugDataRank.none
                : try await reads.bestRank(project: report.project, buildID: buildID, connection, logger)
            rows.append(
                ModuleRow(
                    buildID: buildID, name: missing[buildID] ?? outcome.modules[buildID], rank: Int64(rank.rawValue)))
        }
        return rows
    }

    public func regroupStep(limit: Int, at date: Date) async throws -> Int {
        try await PostgresProjectStore(database: database).regroupStep(limit: limit, at: date)
    }

    public func requeueOutdatedGrouping(limit: Int) async throws -> Int {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    """
                    UPDATE reports SET symbolication = 'pending', claimed_until = NULL
                    WHERE (id, received_at) IN (
                        SELECT id, received_at FROM reports WHERE grouping_version < \(Grouping.version) AND symbolication != 'pending'
                        LIMIT \(Int64(max(1, limit))))
                    RETURNING 1
                    """, logger: logger))
        }
    }

    public func requeue(project: ProjectID, buildID: BuildID) async throws -> Int {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresDebugData.requeueOutranked(
                project: project, buildID: buildID, replacedKinds: [], connection, logger)
        }
    }

    public func missingDebugFiles(project: ProjectID, release: String?) async throws -> [MissingDebugFileSummary] {
        let logger = database.logger
        var sql = """
            SELECT m.build_id, max(m.module), count(*),
                string_agg(DISTINCT m.release, ','),
                (SELECT string_agg(d.kind, ',') FROM debug_files d
                 WHERE d.project_id = m.project_id AND d.build_id = m.build_id AND d.blob_sha256 IS NOT NULL)
            FROM report_modules m WHERE m.project_id = $1 AND m.rank < 2
            """
        var binds = PostgresBindings()
        binds.append(project.rawValue)
        if let release {
            sql += " AND m.release = $2"
            binds.append(release)
        }
        sql += " GROUP BY m.project_id, m.build_id ORDER BY count(*) DESC, m.build_id LIMIT 1000"
        let query = PostgresQuery(unsafeSQL: sql, binds: binds)
        return try await database.read { connection in
            var summaries: [MissingDebugFileSummary] = []
            for try await (buildID, module, reports, releases, has) in try await connection.query(query, logger: logger)
                .decode((String, String?, Int, String?, String?).self)
            {
                guard let id = BuildID(buildID) else { continue }
                summaries.append(
                    MissingDebugFileSummary(
                        buildID: id, module: module, reports: reports,
                        releases: releases?.split(separator: ",").map(String.init).sorted() ?? [],
                        has: has?.split(separator: ",").compactMap { DebugFileKind(rawValue: String($0)) }.sorted()
                            ?? []))
            }
            return summaries
        }
    }

    public func pendingCount(atMost: Int) async throws -> Int {
        let logger = database.logger
        let limit = Int64(max(0, atMost))
        return try await database.read { connection in
            for try await count in try await connection.query(
                "SELECT count(*) FROM (SELECT 1 FROM reports WHERE symbolication = 'pending' LIMIT \(limit)) p",
                logger: logger
            ).decode(Int.self) {
                return count
            }
            return 0
        }
    }

    public func result(reportID: Int64) async throws -> (state: SymbolicationState, report: SymbolicatedReport?) {
        let logger = database.logger
        let row = try await database.read { connection -> (String, String?, Data?)? in
            for try await row in try await connection.query(
                """
                SELECT r.symbolication, r.symbolication_failure, s.result
                FROM reports r LEFT JOIN report_symbols s ON s.report_id = r.id AND s.received_at = r.received_at
                WHERE r.id = \(reportID)
                """, logger: logger
            ).decode((String, String?, Data?).self) {
                return row
            }
            return nil
        }
        guard let row else { return (.pending, nil) }
        return try StoredOutcome.read(state: row.0, failure: row.1, result: row.2, codec: database.codec)
    }
}
