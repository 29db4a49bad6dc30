import FaultlineCore
import PostgresNIO

/// What the symbolication store and the debug-file store share, inside one transaction: the rank of the debug
/// data a project holds for a build-id, the debug-file change sequence, and queueing again the reports a new file
/// outranks. The twins of `SQLiteSymbolicationStore.bestRank`, `nextDebugFileSequence` and `requeueOutranked`.
enum PostgresDebugData {
    /// The best kind `project` holds for `buildID` now.
    static func bestRank(project: ProjectID, buildID: String, _ connection: PostgresConnection, _ logger: Logger)
        async throws
        -> DebugDataRank
    {
        var kinds: [DebugFileKind] = []
        for try await kind in try await connection.query(
            """
            SELECT kind FROM debug_files WHERE project_id = \(project.rawValue) AND build_id = \(buildID) AND blob_sha256 IS NOT NULL
            """, logger: logger
        ).decode(String.self) {
            if let kind = DebugFileKind(rawValue: kind) { kinds.append(kind) }
        }
        return DebugDataRank.best(of: kinds)
    }

    /// The debug-file change sequence now.
    static func sequence(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        for try await value in try await connection.query(
            "SELECT value FROM counters WHERE name = 'debug_files'", logger: logger
        )
        .decode(Int64.self) {
            return value
        }
        return 0
    }

    /// Takes the next debug-file change sequence value (inside the transaction that stores a file; the row lock
    /// orders two nodes' uploads).
    static func nextSequence(_ connection: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        for try await value in try await connection.query(
            "UPDATE counters SET value = value + 1 WHERE name = 'debug_files' RETURNING value", logger: logger
        ).decode(Int64.self) {
            return value
        }
        throw StorageError(.openFailed, "the debug_files counter is missing")
    }

    /// Queues again, in the caller's transaction, every report of `project` whose result for `buildID` was made with
    /// less than the project's best file for it now — and those made with it too when the project replaced its file
    /// of that best kind with different bytes (`replacedKinds`) or got its first executable after the debug file
    /// (`addedKinds`; `DebugDataRank.requeuesSameRank`). Other projects' reports are never touched. A queued report's
    /// claim is dropped, so any node takes it next. Returns how many reports were queued.
    static func requeueOutranked(
        project: ProjectID, buildID: BuildID, replacedKinds: [DebugFileKind], addedKinds: [DebugFileKind] = [],
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> Int {
        let best = try await bestRank(project: project, buildID: buildID.rawValue, connection, logger)
        let sameRankToo = DebugDataRank.requeuesSameRank(replaced: replacedKinds, added: addedKinds, best: best)
        let limit = Int64(best.rawValue) + (sameRankToo ? 1 : 0)
        return try await PostgresRows.count(
            connection.query(
                """
                UPDATE reports r SET symbolication = 'pending', claimed_until = NULL
                FROM report_modules m
                WHERE m.project_id = \(project.rawValue) AND m.build_id = \(buildID.rawValue) AND m.rank < \(limit)
                    AND r.id = m.report_id AND r.received_at = m.received_at AND r.symbolication != 'pending'
                RETURNING 1
                """, logger: logger))
    }
}
