import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The symbolication queue and results on SQLite. The queue is the `reports.symbolication = 'pending'`
/// column (a partial index keeps finding work cheap however many reports are stored); a result, its state
/// and its missing build-ids are written in one transaction.
public struct SQLiteSymbolicationStore: SymbolicationStore {
    let database: FaultlineDatabase

    public init(database: FaultlineDatabase) {
        self.database = database
    }

    /// One query for the whole batch: the pending rows with their payloads.
    public func pending(limit: Int) async throws -> [PendingSymbolication] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(SQLiteReportReader.rawColumns), r.symbolication_attempts, pr.in_app_include, pr.in_app_exclude
                    FROM reports r JOIN payloads p ON p.id = r.payload_id JOIN projects pr ON pr.id = r.project_id
                    WHERE r.symbolication = 'pending' ORDER BY r.id LIMIT ?
                    """,
                arguments: [limit]
            ).compactMap { row in
                SQLiteReportReader.raw(row).map {
                    PendingSymbolication(
                        reportID: $0.summary.cursor, project: $0.summary.project, raw: $0, attempts: row["symbolication_attempts"],
                        inApp: InAppRules(include: SQLiteProjectStore.patterns(row["in_app_include"]),
                                          exclude: SQLiteProjectStore.patterns(row["in_app_exclude"])))
                }
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

    public func save(_ result: SymbolicatedReport, grouping: GroupingInput?, reportID: Int64, at date: Date) async throws
        -> IssueID?
    {
        let now = Millis.from(date)
        let outcome = SymbolicationOutcome(reportID: reportID, result: result, grouping: grouping)
        return try await database.pool.write { db in try Self.save(outcome, now: now, db) }
    }

    public func saveAll(_ results: [SymbolicationOutcome], at date: Date) async throws {
        let now = Millis.from(date)
        try await database.pool.write { db in
            for outcome in results {
                do {
                    try db.inSavepoint {
                        _ = try Self.save(outcome, now: now, db)
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

    static func save(_ outcome: SymbolicationOutcome, now: Int64, _ db: Database) throws -> IssueID? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let reportID = outcome.reportID
        guard let report = try Row.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT project_id, kind, occurred_at, release, user_key, session_id, issue_id, early, grouping_version
                    FROM reports WHERE id = ?
                    """),
            arguments: [reportID])
        else { return nil }
        // A clean result resets the attempt count (a later requeue starts afresh); a failure keeps it.
        try db.cachedStatement(
            sql: """
                UPDATE reports SET symbolication = ?1, symbolication_failure = ?2,
                    symbolication_attempts = CASE WHEN ?2 IS NULL THEN 0 ELSE symbolication_attempts END
                WHERE id = ?3
                """
        ).execute(arguments: [outcome.result.state.rawValue, outcome.result.failure, reportID])
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
            ).execute(arguments: [reportID, try encoder.encode(outcome.result), now])
        }
        try db.cachedStatement(sql: "DELETE FROM report_missing_debug_files WHERE report_id = ?").execute(arguments: [reportID])
        for missing in outcome.result.missing {
            try db.cachedStatement(
                sql: """
                    INSERT INTO report_missing_debug_files (report_id, project_id, build_id, module, release)
                    SELECT id, project_id, ?, ?, release FROM reports WHERE id = ?
                    """
            ).execute(arguments: [missing.buildID, missing.module, reportID])
        }
        guard let grouping = outcome.grouping else {
            // Not grouped (failed without symbols): nothing for a newer grouping version to redo either.
            try db.cachedStatement(sql: "UPDATE reports SET grouping_version = ? WHERE id = ?")
                .execute(arguments: [Grouping.version, reportID])
            return (report["issue_id"] as Int64?).map { IssueID($0) }
        }
        let groupingJSON = String(decoding: try encoder.encode(grouping.grouping), as: UTF8.self)
        return try Grouper.file(report: report, reportID: reportID, grouping: grouping, groupingJSON: groupingJSON, now: now, db)
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

    public func requeue(project: ProjectID, buildID: BuildID) async throws -> Int {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE reports SET symbolication = 'pending'
                    WHERE id IN (SELECT report_id FROM report_missing_debug_files WHERE project_id = ? AND build_id = ?)
                    """,
                arguments: [project.rawValue, buildID.rawValue])
            return db.changesCount
        }
    }

    /// Queues again every report of `project` whose stored result used `buildID` or lacked it: after the project
    /// replaced its debug file for that build-id, frames resolved with the old file must be resolved again.
    /// Scans the project's results (a replacement is rare; a first upload uses `requeue`). Returns how many.
    public func requeueUsing(project: ProjectID, buildID: BuildID) async throws -> Int {
        // Build-ids are hex digits only, so the pattern needs no escaping.
        let pattern = "%\"build_id\":\"\(buildID.rawValue)\"%"
        return try await database.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE reports SET symbolication = 'pending'
                    WHERE project_id = ? AND symbolication != 'pending' AND (
                        id IN (SELECT report_id FROM report_missing_debug_files WHERE project_id = ? AND build_id = ?)
                        OR id IN (SELECT s.report_id FROM report_symbols s JOIN reports r ON r.id = s.report_id
                                  WHERE r.project_id = ? AND CAST(s.result AS TEXT) LIKE ?))
                    """,
                arguments: [project.rawValue, project.rawValue, buildID.rawValue, project.rawValue, pattern])
            return db.changesCount
        }
    }

    public func missingDebugFiles(project: ProjectID, release: String?) async throws -> [MissingDebugFileSummary] {
        try await database.pool.read { db in
            var sql = """
                SELECT build_id, max(module) AS module, count(*) AS reports, group_concat(DISTINCT release) AS releases
                FROM report_missing_debug_files WHERE project_id = ?
                """
            var arguments: StatementArguments = [project.rawValue]
            if let release {
                sql += " AND release = ?"
                arguments += [release]
            }
            sql += " GROUP BY build_id ORDER BY reports DESC, build_id LIMIT 1000"
            return try Row.fetchAll(db, sql: sql, arguments: arguments).compactMap { row in
                guard let id = BuildID(row["build_id"]) else { return nil }
                let releases = (row["releases"] as String?)?.split(separator: ",").map(String.init).sorted() ?? []
                return MissingDebugFileSummary(buildID: id, module: row["module"], reports: row["reports"], releases: releases)
            }
        }
    }

    public func result(reportID: Int64) async throws -> (state: SymbolicationState, report: SymbolicatedReport?) {
        let row = try await database.pool.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT r.symbolication, r.symbolication_failure, s.result
                    FROM reports r LEFT JOIN report_symbols s ON s.report_id = r.id WHERE r.id = ?
                    """,
                arguments: [reportID])
        }
        guard let row, let state = SymbolicationState(rawValue: row["symbolication"]) else { return (.pending, nil) }
        let blob: Data? = row["result"]
        let failure: String? = row["symbolication_failure"]
        var report = try blob.map { try JSONDecoder().decode(SymbolicatedReport.self, from: $0) }
        if let failure {
            if report == nil { report = SymbolicatedReport(state: state, threads: [], missing: []) }
            report?.failure = failure
        }
        return (state, report)
    }
}
