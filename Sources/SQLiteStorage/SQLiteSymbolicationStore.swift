import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The symbolication queue and results on SQLite. The queue is the `reports.symbolication = 'pending'`
/// column (a partial index keeps finding work cheap however many reports are stored); a result, its state
/// and, per build-id it touched, the rank of the debug data it was made with (`report_modules`) are written in
/// one transaction.
///
/// Late symbols in any order: a stored debug file queues, in its own transaction, every report whose row for the
/// build-id has a lower rank (`requeueOutranked`); a result made while a better file was being stored is saved
/// but left queued (`storedAfter`, by the debug-file change sequence read with the batch). Together: whatever
/// the order of crash, executable and debug file, and whenever the worker runs, the last result of every report
/// is made with the best file the project has.
public struct SQLiteSymbolicationStore: SymbolicationStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func pendingCount(atMost: Int) async throws -> Int {
        let limit = max(0, atMost)
        return try await database.pool.read { db in
            try Int.fetchOne(
                db.cachedStatement(
                    sql: "SELECT count(*) FROM (SELECT 1 FROM reports WHERE symbolication = 'pending' LIMIT ?)"),
                arguments: [limit]) ?? 0
        }
    }

    /// Two queries for the whole batch: the pending rows, then each payload they are part of, once (a 20-report
    /// request body is one payload; its bytes are read and held once, shared by its reports).
    public func pending(limit: Int, excluding: Set<Int64>) async throws -> [PendingSymbolication] {
        let limit = max(1, limit)
        return try await database.pool.read { db in
            // Read in the same snapshot as the batch: a debug file stored after this is seen by `save` (see there).
            let filesSeen = try Self.debugFileSequence(db)
            // Read by position below: the summary's columns, then these six in this order.
            let fetched = try Row.fetchAll(
                db.cachedStatement(
                    sql: """
                        SELECT \(ReportSQL.columns), r.payload_id, r.payload_offset, r.payload_length,
                            r.symbolication_attempts, pr.in_app_include, pr.in_app_exclude
                        FROM reports r JOIN projects pr ON pr.id = r.project_id
                        WHERE r.symbolication = 'pending' ORDER BY r.id LIMIT ?
                        """),
                // The reports left out are pending too (saved after this read): as many more rows, dropped below
                // before their payloads are read.
                arguments: [limit + excluding.count])
            // `id` is the first summary column (read by position, as `summary` reads the rest).
            let rows = fetched.lazy.filter { row in !excluding.contains(row[0] as Int64) }.prefix(limit)
            var payloads: [Int64: StoredPayload] = [:]
            let payloadStatement = try db.cachedStatement(
                sql: "SELECT encoding, inflated_size, bytes, format FROM payloads WHERE id = ?")
            var inApp: [Int64: InAppRules] = [:]
            // Each project's fingerprint rules in force (the latest version), read and parsed once a batch.
            var fingerprints: [Int64: FingerprintRules] = [:]
            let rulesStatement = try db.cachedStatement(
                sql: "SELECT rules FROM grouping_rules WHERE project_id = ? ORDER BY version DESC LIMIT 1")
            // The columns after the summary's, by position (GRDB lowercases a name at every lookup by name: ~7,000
            // instructions each, eight a report here).
            let next = ReportSQL.columnNames.count
            return try rows.compactMap { row -> PendingSymbolication? in
                let payloadID: Int64 = row[next]
                if payloads[payloadID] == nil {
                    guard let stored = try Row.fetchOne(payloadStatement, arguments: [payloadID]),
                        let encoding = StoredPayload.Encoding(rawValue: stored[0]),
                        let format = StoredPayload.Format(rawValue: stored[3])
                    else { return nil }
                    let bytes: Data = stored[2]
                    payloads[payloadID] = StoredPayload(
                        bytes: Array(bytes), encoding: encoding, inflatedSize: stored[1], format: format)
                }
                guard let payload = payloads[payloadID], let summary = try? ReportSQL.summary(SQLiteRow(row)) else {
                    return nil
                }
                let offset: Int = row[next + 1]
                let length: Int = row[next + 2]
                guard offset >= 0, length >= 0, !offset.addingReportingOverflow(length).overflow else { return nil }
                let rules =
                    inApp[summary.project.rawValue]
                    ?? InAppRules(
                        include: SQLiteProjectStore.patterns(row[next + 4]),
                        exclude: SQLiteProjectStore.patterns(row[next + 5]))
                inApp[summary.project.rawValue] = rules
                let ruled =
                    try fingerprints[summary.project.rawValue]
                    ?? String.fetchOne(rulesStatement, arguments: [summary.project.rawValue]).flatMap {
                        try? FingerprintRules.parse($0)
                    } ?? .none
                fingerprints[summary.project.rawValue] = ruled
                return PendingSymbolication(
                    reportID: summary.cursor, project: summary.project,
                    raw: RawReport(summary: summary, payload: payload, range: offset..<(offset + length)),
                    attempts: row[next + 3], filesSeen: filesSeen, inApp: rules, payload: payloadID,
                    fingerprints: ruled)
            }
        }
    }

    public func recordAttempt(reportIDs: [Int64]) async throws {
        guard !reportIDs.isEmpty else { return }
        // Its own transaction, committed now: the count must survive the process dying right after.
        try await database.pool.write { db in
            let statement = try db.cachedStatement(
                sql: "UPDATE reports SET symbolication_attempts = symbolication_attempts + 1 WHERE id = ?")
            for id in reportIDs { try statement.execute(arguments: [id]) }
        }
    }

    public func save(_ result: SymbolicatedReport, grouping: GroupingInput?, reportID: Int64, at date: Date)
        async throws
        -> IssueID?
    {
        let now = Millis.from(date)
        let outcome = SymbolicationOutcome(reportID: reportID, result: result, grouping: grouping)
        let encoded = StoredOutcome.encode(outcome, codec: database.codec)
        return try await database.pool.write { db in
            let issue = try Self.save(outcome, encoded: encoded, now: now, db)
            try Self.dropProcessedMinidumps([outcome], db)
            return issue
        }
    }

    public func saveAll(_ results: [SymbolicationOutcome], at date: Date) async throws {
        let now = Millis.from(date)
        // The JSON of every result and grouping, made before the transaction and on every core: encoding was more than
        // half of the transaction's time, and the writer is the one thing ingest and the worker share.
        let encoded = await StoredOutcome.encodeAll(results, codec: database.codec)
        // First without savepoints (each makes SQLite copy every page it changes into the statement journal); only
        // when the database refuses a report is the batch done again, each report in its own savepoint.
        do {
            try await database.pool.write { db in
                let reads = BatchReads()
                let modules = DeferredModules()
                let search = SQLiteSearchStore.Deferred()
                let filings = DeferredFilings()
                for (outcome, json) in zip(results, encoded) {
                    _ = try Self.save(
                        outcome, encoded: json, now: now, reads: reads, modules: modules, search: search,
                        filings: filings, db)
                }
                try filings.write(now: now, reads: reads, db)
                try modules.write(db)
                // Once every report's row and modules are written: they say which results are final.
                try Self.dropProcessedMinidumps(results, db)
                // Last: FTS5 writes what it holds as a segment at every later statement's savepoint.
                try search.write(db)
            }
            return
        } catch let error as DatabaseError where error.resultCode != .SQLITE_FULL {}
        try await database.pool.write { db in
            let reads = BatchReads()
            for (outcome, json) in zip(results, encoded) {
                do {
                    try db.inSavepoint {
                        _ = try Self.save(outcome, encoded: json, now: now, reads: reads, db)
                        try Self.dropProcessedMinidumps([outcome], db)
                        return .commit
                    }
                } catch is DatabaseError {
                    // One report the schema refuses must not block its batch forever: it leaves the queue
                    // ungrouped (state 'missing'), and the rest of the batch commits.
                    try db.execute(
                        sql: "UPDATE reports SET symbolication = 'missing', symbolication_failure = ? WHERE id = ?",
                        arguments: ["the database refused the symbolication result", outcome.reportID])
                }
            }
        }
    }

    /// Saves one outcome in the caller's transaction; its `report_modules` rows go to `modules` and its search entry
    /// to `search` when given (written by the caller at the end of the transaction), else are written here. With
    /// `filings`, a grouped report is filed with the batch's others (`DeferredFilings`; nil is returned for it): its
    /// issue is known once the caller writes them. Without, it is filed alone (a plan of one).
    static func save(
        _ outcome: SymbolicationOutcome, encoded json: StoredOutcome, now: Int64, reads: BatchReads = BatchReads(),
        modules: DeferredModules? = nil, search deferred: SQLiteSearchStore.Deferred? = nil,
        filings: DeferredFilings? = nil, _ db: Database
    )
        throws -> IssueID?
    {
        let reportID = outcome.reportID
        // A report given twice reads its row as the filings held so far left it.
        if let filings, filings.holds(reportID) { try filings.write(now: now, reads: reads, db) }
        guard
            let report = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT \(FiledReport.columns) FROM reports WHERE id = ?"),
                arguments: [reportID]
            ).map(FiledReport.init)
        else { return nil }
        let project = report.project
        let touched = json.touched
        // The race with an upload: a debug file of a build-id this result touched, stored after the batch was read,
        // may not have been seen by the lookups. The result is kept (readers see it) but the report stays queued
        // and is not grouped yet, so it is done again, with that file, before anything is decided from it.
        let stale =
            try outcome.filesSeen.map { try reads.storedAfter($0, project: project, buildIDs: touched, db) } ?? false
        let state = stale ? SymbolicationState.pending : outcome.result.state
        if outcome.result.state == .notNeeded {
            // Nothing was resolved (the client symbolicated, or sent no addresses): the report's own frames say
            // it all, so no copy of them is stored (readers treat a missing result as "use the report's frames").
            try db.cachedStatement(sql: "DELETE FROM report_symbols WHERE report_id = ?").execute(arguments: [reportID])
        } else {
            try db.cachedStatement(
                sql: """
                    INSERT INTO report_symbols (report_id, result, updated_at) VALUES (?, ?, ?)
                    ON CONFLICT (report_id) DO UPDATE SET result = excluded.result, updated_at = excluded.updated_at
                    """
            ).execute(arguments: [reportID, json.result, now])
        }
        try recordModules(
            outcome, reportID: reportID, project: project, release: report.release, touched: touched, reads: reads,
            into: modules, db)
        if let search = outcome.search {
            if let deferred {
                deferred.add(search, reportID: reportID, project: project)
            } else {
                try SQLiteSearchStore.replace(search, reportID: reportID, project: project, db)
            }
        }
        // The report's row is written once, last: its state, and what filing decided (a stale result leaves the issue
        // and grouping version as read above; one not grouped, failed without symbols, has nothing for a newer grouping
        // version to redo either). Two updates of the row cost as much again (issue #13).
        var filed = (issueID: report.issueID, early: report.early, groupingVersion: report.groupingVersion)
        if !stale {
            filed.groupingVersion = Grouping.version
            if let grouping = outcome.grouping {
                let groupingJSON = json.grouping ?? StoredJSON.encode(grouping.grouping)
                let filing = SQLiteBatchGrouper.Filing(
                    id: reportID, report: report, input: grouping, groupingJSON: groupingJSON)
                if let filings {
                    filings.add(filing, state: state, failure: outcome.result.failure)
                    return nil
                }
                // Alone: a plan of one report.
                let alone = try SQLiteBatchGrouper.file([filing], now: now, reads: reads, db)[reportID]
                (filed.issueID, filed.early) = (alone?.issueID, alone?.early)
            }
        }
        try writeRow(
            reportID, state: state, failure: outcome.result.failure, issueID: filed.issueID, early: filed.early,
            groupingVersion: filed.groupingVersion, facts: stale ? nil : outcome.grouping?.facts?.encoded, db)
        return filed.issueID.map { IssueID($0) }
    }

    /// Deletes, in the caller's transaction, the minidumps of the reports among `outcomes` that were walked
    /// (`result.walk != nil`) and whose saved result is final, when their project keeps dumps only until processed
    /// (`MinidumpRetention.untilProcessed`, the default). Final: the report is not queued again (a stale result stays
    /// `pending`) and no module of its result lacks every debug file (no `report_modules` row of rank 0), so no late
    /// upload can change the walk. Until then the dump is kept: a late file queues the report, and it is walked again.
    /// Run after the batch's report rows and `report_modules` rows are written.
    static func dropProcessedMinidumps(_ outcomes: [SymbolicationOutcome], _ db: Database) throws {
        for outcome in outcomes where outcome.result.walk != nil {
            try db.cachedStatement(
                sql: """
                    DELETE FROM attachments WHERE id IN (
                        SELECT a.id FROM reports r
                        JOIN projects p ON p.id = r.project_id
                        JOIN attachments a ON a.project_id = r.project_id AND a.event_id = r.event_id
                        WHERE r.id = ?1 AND r.symbolication != 'pending' AND p.minidump_retention = 'until_processed'
                            AND a.attachment_type = 'event.minidump'
                            AND NOT EXISTS (SELECT 1 FROM report_modules m WHERE m.report_id = ?1 AND m.rank = 0))
                    """
            ).execute(arguments: [outcome.reportID])
        }
    }

    /// A saved report's row, written once: its state and what filing decided, with the facts fingerprint rules
    /// matched on (`GroupingFacts`, kept when nil). A clean result resets the attempt count (a later requeue starts
    /// afresh); a failure keeps it.
    static func writeRow(
        _ reportID: Int64, state: SymbolicationState, failure: String?, issueID: Int64?, early: Int?,
        groupingVersion: Int?, facts: String?, _ db: Database
    ) throws {
        try db.cachedStatement(
            sql: """
                UPDATE reports SET symbolication = ?1, symbolication_failure = ?2,
                    symbolication_attempts = CASE WHEN ?2 IS NULL THEN 0 ELSE symbolication_attempts END,
                    issue_id = ?4, early = ?5, grouping_version = ?6, grouping_facts = coalesce(?7, grouping_facts)
                WHERE id = ?3
                """
        ).execute(arguments: [state.rawValue, failure, reportID, issueID, early, groupingVersion, facts])
    }

    /// The grouped reports of a batch, new or filed before, filed together in one plan when the caller writes them
    /// (`SQLiteBatchGrouper`: each issue and rollup row written once), with their rows' last update, which names their issue.
    /// A report given again first writes the plan of those held, so it reads its row as they left it.
    final class DeferredFilings {
        private var filings: [SQLiteBatchGrouper.Filing] = []
        private var rows: [(state: SymbolicationState, failure: String?)] = []
        private var ids: Set<Int64> = []

        func holds(_ reportID: Int64) -> Bool { ids.contains(reportID) }

        func add(_ filing: SQLiteBatchGrouper.Filing, state: SymbolicationState, failure: String?) {
            filings.append(filing)
            rows.append((state, failure))
            ids.insert(filing.id)
        }

        /// Files the reports held and writes their rows (as `save` writes a report's row), in the caller's transaction.
        func write(now: Int64, reads: BatchReads, _ db: Database) throws {
            guard !filings.isEmpty else { return }
            let filed = try SQLiteBatchGrouper.file(filings, now: now, reads: reads, db)
            for (filing, row) in zip(filings, rows) {
                try SQLiteSymbolicationStore.writeRow(
                    filing.id, state: row.state, failure: row.failure, issueID: filed[filing.id]?.issueID,
                    early: filed[filing.id]?.early,
                    groupingVersion: Grouping.version, facts: filing.input.facts?.encoded, db)
            }
            filings.removeAll(keepingCapacity: true)
            rows.removeAll(keepingCapacity: true)
            ids.removeAll(keepingCapacity: true)
        }
    }

    public func regroupStep(limit: Int, at date: Date) async throws -> Int {
        try await SQLiteProjectStore(database: database).regroupStep(limit: limit, at: date)
    }

    public func requeueOutdatedGrouping(limit: Int) async throws -> Int {
        try await database.pool.write { db in
            // `reports_by_grouping_version` makes this a range over the outdated rows only.
            try db.execute(
                sql: """
                    UPDATE reports SET symbolication = 'pending'
                    WHERE id IN (SELECT id FROM reports WHERE grouping_version < ? AND symbolication != 'pending' LIMIT ?)
                    """,
                arguments: [Grouping.version, max(1, limit)])
            return db.changesCount
        }
    }

    /// Which debug data each build-id had when this result was saved (`report_modules`): a build-id missing
    /// from the result has rank 0; one resolved has the rank of the project's best stored file for it (read now,
    /// in the transaction). The rows replace the report's earlier ones: in `deferred` when given, else at once
    /// (one multi-row insert for the report's build-ids; the project and release are the report's, already read).
    static func recordModules(
        _ outcome: SymbolicationOutcome, reportID: Int64, project: ProjectID, release: String?,
        touched: [String], reads: BatchReads, into deferred: DeferredModules? = nil, _ db: Database
    )
        throws
    {
        let missing = Dictionary(
            outcome.result.missing.map { ($0.buildID, $0.module) }, uniquingKeysWith: { first, _ in first })
        let rows = try touched.map { buildID in
            let rank =
                missing[buildID] != nil
                ? DebugDataRank.none : try reads.bestRank(project: project, buildID: buildID, db)
            return ModuleRow(
                reportID: reportID, project: project.rawValue, buildID: buildID,
                module: missing[buildID] ?? outcome.modules[buildID], release: release, rank: rank)
        }
        let batch = deferred ?? DeferredModules()
        batch.replace(reportID, with: rows)
        if deferred == nil { try batch.write(db) }
    }

    /// A `report_modules` row.
    struct ModuleRow {
        var reportID: Int64
        var project: Int64
        var buildID: String
        var module: String?
        var release: String?
        var rank: DebugDataRank
    }

    /// The `report_modules` rows of a batch, written after its other statements: the reports' earlier rows out with
    /// `DELETE … IN`, then multi-row inserts, `modulesPerInsert` rows or ids to a statement. A delete and an insert
    /// per report were a sixth of the worker's transaction (issue #13). A report saved twice in one batch keeps its
    /// last rows, as writing them one after the other would.
    final class DeferredModules {
        private var reports: [Int64] = []
        private var rows: [Int64: [ModuleRow]] = [:]

        func replace(_ reportID: Int64, with rows: [ModuleRow]) {
            if self.rows.updateValue(rows, forKey: reportID) == nil { reports.append(reportID) }
        }

        /// Writes the rows held, in the caller's transaction.
        func write(_ db: Database) throws {
            var start = 0
            while start < reports.count {
                let ids = reports[start..<min(reports.count, start + modulesPerInsert)]
                start += ids.count
                try db.cachedStatement(
                    sql:
                        "DELETE FROM report_modules WHERE report_id IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"
                ).execute(arguments: StatementArguments(Array(ids)))
            }
            try MultiRowInsert.run(
                reports.flatMap { rows[$0] ?? [] }, into: "report_modules",
                columns: ["report_id", "project_id", "build_id", "module", "release", "rank"],
                perStatement: modulesPerInsert, db
            ) { row in [row.reportID, row.project, row.buildID, row.module, row.release, row.rank.rawValue] }
            reports.removeAll()
            rows.removeAll()
        }
    }

    /// Rows (or report ids of a delete) a `report_modules` statement writes at most.
    static let modulesPerInsert = 64

    /// The best kind `project` holds for `buildID` now.
    static func bestRank(project: ProjectID, buildID: String, _ db: Database) throws -> DebugDataRank {
        let kinds = try String.fetchAll(
            db.cachedStatement(
                sql: "SELECT kind FROM debug_files WHERE project_id = ? AND build_id = ? AND blob_sha256 IS NOT NULL"),
            arguments: [project.rawValue, buildID])
        return DebugDataRank.best(of: kinds.compactMap(DebugFileKind.init(rawValue:)))
    }

    /// Whether `project` stored a debug file for one of `buildIDs` after the change sequence `seen`.
    static func storedAfter(_ seen: Int64, project: ProjectID, buildIDs: [String], _ db: Database) throws -> Bool {
        let statement = try db.cachedStatement(
            sql: "SELECT 1 FROM debug_files WHERE project_id = ? AND build_id = ? AND stored_seq > ? LIMIT 1")
        for buildID in buildIDs {
            if try Bool.fetchOne(statement, arguments: [project.rawValue, buildID, seen]) ?? false { return true }
        }
        return false
    }

    /// The debug-file change sequence now.
    static func debugFileSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM counters WHERE name = 'debug_files'") ?? 0
    }

    /// Takes the next debug-file change sequence value (inside the transaction that stores a file).
    static func nextDebugFileSequence(_ db: Database) throws -> Int64 {
        try db.execute(sql: "UPDATE counters SET value = value + 1 WHERE name = 'debug_files'")
        return try debugFileSequence(db)
    }

    /// Queues again, in the caller's transaction, every report of `project` whose result for `buildID` was made
    /// with less than the project's best file for it now — and those made with it too when the project replaced its
    /// file of that best kind with different bytes (`replacedKinds`) or got its first executable after the debug
    /// file (`addedKinds`; `DebugDataRank.requeuesSameRank`). Other projects' reports are never touched. Returns how
    /// many reports were queued.
    static func requeueOutranked(
        project: ProjectID, buildID: BuildID, replacedKinds: [DebugFileKind], addedKinds: [DebugFileKind] = [],
        _ db: Database
    )
        throws
        -> Int
    {
        let best = try bestRank(project: project, buildID: buildID.rawValue, db)
        let sameRankToo = DebugDataRank.requeuesSameRank(replaced: replacedKinds, added: addedKinds, best: best)
        try db.execute(
            sql: """
                UPDATE reports SET symbolication = 'pending'
                WHERE symbolication != 'pending' AND id IN (
                    SELECT report_id FROM report_modules WHERE project_id = ? AND build_id = ? AND rank \(sameRankToo ? "<=" : "<") ?)
                """,
            arguments: [project.rawValue, buildID.rawValue, best.rawValue])
        return db.changesCount
    }

    /// Queues again every report of `project` whose result for `buildID` was made with less than the project's
    /// best file for it now. Storing a debug file does this itself (`SQLiteDebugFileStore.store`, in the same
    /// transaction); this is for callers that changed files some other way. Returns how many.
    public func requeue(project: ProjectID, buildID: BuildID) async throws -> Int {
        try await database.pool.write { db in
            try Self.requeueOutranked(project: project, buildID: buildID, replacedKinds: [], db)
        }
    }

    /// `requeue`, and also the reports made with a file of the best rank: after the project replaced that file with
    /// different bytes, frames resolved with the old one must be resolved again. Returns how many.
    public func requeueUsing(project: ProjectID, buildID: BuildID) async throws -> Int {
        try await database.pool.write { db in
            try Self.requeueOutranked(project: project, buildID: buildID, replacedKinds: DebugFileKind.allCases, db)
        }
    }

    /// Build-ids whose reports were symbolicated without debug information (nothing, or only a stripped
    /// executable), with what the server holds for each now. A build-id leaves the list when its reports are
    /// redone with the debug information.
    public func missingDebugFiles(project: ProjectID, release: String?) async throws -> [MissingDebugFileSummary] {
        try await database.pool.read { db in
            var sql = """
                SELECT m.build_id, max(m.module) AS module, count(*) AS reports, group_concat(DISTINCT m.release) AS releases,
                    (SELECT group_concat(d.kind) FROM debug_files d
                     WHERE d.project_id = m.project_id AND d.build_id = m.build_id AND d.blob_sha256 IS NOT NULL) AS has
                FROM report_modules m WHERE m.project_id = ? AND m.rank < 2
                """
            var arguments: StatementArguments = [project.rawValue]
            if let release {
                sql += " AND m.release = ?"
                arguments += [release]
            }
            sql += " GROUP BY m.build_id ORDER BY reports DESC, m.build_id LIMIT 1000"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row in
                guard let id = BuildID(row["build_id"]) else { return nil }
                let releases = (row["releases"] as String?)?.split(separator: ",").map(String.init).sorted() ?? []
                let has =
                    (row["has"] as String?)?.split(separator: ",").compactMap { DebugFileKind(rawValue: String($0)) }
                    .sorted() ?? []
                return MissingDebugFileSummary(
                    buildID: id, module: row["module"], reports: row["reports"], releases: releases, has: has)
            }
        }
    }

    public func result(reportID: Int64) async throws -> (state: SymbolicationState, report: SymbolicatedReport?) {
        // The columns, not the `Row` (not `Sendable`): with a row the closure took `read`'s synchronous overload, which
        // blocked a thread of the cooperative pool (a dashboard render's) for the read.
        let stored = try await database.pool.read { db -> (state: String, failure: String?, result: Data?)? in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.symbolication, r.symbolication_failure, s.result
                    FROM reports r LEFT JOIN report_symbols s ON s.report_id = r.id WHERE r.id = ?
                    """,
                arguments: [reportID]
            ).map { row in (row[0], row[1], row[2]) }
        }
        guard let stored else { return (.pending, nil) }
        return try StoredOutcome.read(
            state: stored.state, failure: stored.failure, result: stored.result, codec: database.codec)
    }
}
