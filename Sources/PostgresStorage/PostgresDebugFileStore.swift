import DataFolder
import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Debug files on PostgreSQL: per project, build-id and kind a row in `debug_files` naming a content-addressed blob in
/// a `BlobFolder` every node shares (the twin of `SQLiteDebugFileStore`, with the same rules: per-project rows, the
/// quota checked in the transaction, newest wins, the same bytes again change nothing, a file that changes what the
/// project holds takes the next change sequence value and queues the reports it outranks in the same transaction).
///
/// SQLite has one writer; here several nodes write at once, so two transaction-level advisory locks stand in for it:
/// - The project's: one project's debug-file changes take turns, whatever node makes them. The quota and the
///   `replaced` answer read the project's rows; two nodes reading them at once would both pass the quota, or both
///   miss the other's file (which would then never be released from disk nor counted as replaced).
/// - The blob's (`hashtextextended(sha256, 0)`): held by an upload from before it places or reuses the blob to its
///   commit, and by the removal of a blob from its check that no row names the blob to the unlink. Without it, a node
///   releasing a blob could see no row, and unlink the file just after another node reused it for another project or
///   build-id: that row would name a file that is gone.
///
/// The project's lock is always taken before the blob's, and the removal runs in a transaction of its own that holds
/// only the blob's, so the two never wait on each other in a circle.
public struct PostgresDebugFileStore: DebugFileStore {
    let database: PostgresEngine
    let blobs: BlobFolder

    /// - Parameter root: the debug-file blob folder, shared by every node (`--blobs`/debug-files).
    public init(database: PostgresEngine, root: String) throws {
        self.database = database
        blobs = try BlobFolder(root: root)
    }

    public func temporaryUpload() throws -> TemporaryUpload {
        try blobs.temporaryFile()
    }

    public func discard(_ upload: TemporaryUpload) {
        blobs.discard(upload)
    }

    /// A refusal that rolls back the files of an upload stored before it, with the blobs they placed.
    struct Refused: Error {
        var outcome: DebugFileStoreOutcome
        var placed: [ContentHash]
    }

    public func storeAll(_ files: [DebugFileToStore], project: ProjectID, quotaBytes: UInt64, at date: Date)
        async throws -> [DebugFileStoreOutcome]
    {
        defer { for file in files { blobs.discard(file.file.upload) } }
        for file in files { try BlobFolder.fsync(file.file.upload.path) }
        let logger = database.logger
        let outcomes: [DebugFileStoreOutcome]
        let released: [ContentHash]
        do {
            (outcomes, released) = try await database.write { connection -> ([DebugFileStoreOutcome], [ContentHash]) in
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtextextended('debug_files', \(project.rawValue)))",
                    logger: logger)
                // Every blob's lock, in hash order: two uploads holding the same slices in another order never wait on
                // each other in a circle.
                for hash in Set(files.map(\.file.sha256)).sorted() { try await Self.lock(hash, connection, logger) }
                var outcomes: [DebugFileStoreOutcome] = []
                var released: Set<ContentHash> = []
                var placed: [ContentHash] = []
                for file in files {
                    let change = try await store(
                        file, project: project, quotaBytes: quotaBytes, at: date, placed: &placed, connection, logger)
                    if case .quotaExceeded = change.outcome { throw Refused(outcome: change.outcome, placed: placed) }
                    outcomes.append(change.outcome)
                    released.formUnion(change.released)
                }
                return (outcomes, released.sorted())
            }
        } catch {
            let closure = (error as? PostgresTransactionError)?.closureError ?? error
            guard let refused = closure as? Refused else { throw error }
            // Rolled back: a blob placed for an earlier file that no row names is removed (one another upload placed
            // too and committed stays).
            for hash in refused.placed { try await removeIfUnreferenced(hash) }
            return [refused.outcome]
        }
        for hash in released { try await removeIfUnreferenced(hash) }
        return outcomes
    }

    /// Stores one file of an upload in the caller's transaction, which holds the project's lock and the blob's
    /// (`storeAll`): its quota checked against what the project holds in the transaction, its blob placed (and added
    /// to `placed`), its rows written, its outranked reports queued. Nothing is written when it does not fit.
    func store(
        _ piece: DebugFileToStore, project: ProjectID, quotaBytes: UInt64, at date: Date, placed: inout [ContentHash],
        _ connection: PostgresConnection, _ logger: Logger
    ) async throws -> (outcome: DebugFileStoreOutcome, released: Set<ContentHash>) {
        let (file, buildID) = (piece.file, piece.buildID)
        var change = DebugFileChange(
            file, facts: piece.facts, buildID: buildID, project: project, name: piece.name, at: date)
        // The quota: the project's distinct blobs once these kinds point at the new one, and its minidumps.
        let others = try await Self.usedBytes(
            project: project, excluding: buildID.rawValue, kinds: change.kinds.map(\.rawValue),
            blob: file.sha256.rawValue,
            connection, logger)
        if let refusal = change.refusal(others: others, quota: quotaBytes) { return (refusal, []) }
        try blobs.place(from: file.upload.path, hash: file.sha256, size: file.size)
        placed.append(file.sha256)
        // The change sequence value of this store, taken once, by the first row that needs one.
        var sequence: Int64?
        for row in change.rows {
            var previous: String?
            for try await hash in try await connection.query(
                """
                SELECT coalesce(blob_sha256, '') FROM debug_files
                WHERE project_id = \(project.rawValue) AND build_id = \(buildID.rawValue) AND kind = \(row.kind.rawValue)
                """, logger: logger
            ).decode(String.self) {
                previous = hash
            }
            if change.note(previous: previous, for: row.kind), sequence == nil {
                sequence = try await PostgresDebugData.nextSequence(connection, logger)
            }
            try await connection.query(
                """
                INSERT INTO debug_files
                    (project_id, build_id, kind, size, architecture, file_type, features, name, uploaded_at, blob_sha256, stored_seq)
                VALUES (\(project.rawValue), \(buildID.rawValue), \(row.kind.rawValue), \(Int64(clamping: row.size)),
                    \(PostgresText.storable(row.architecture)), \(PostgresText.storable(row.fileType)),
                    \(PostgresText.storable(row.features.joined(separator: ","))), \(row.name.map(PostgresText.storable)),
                    \(Millis.from(row.uploadedAt)), \(row.sha256.rawValue), \(sequence ?? 0))
                ON CONFLICT (project_id, build_id, kind) DO UPDATE SET
                    size = excluded.size, architecture = excluded.architecture, file_type = excluded.file_type,
                    features = excluded.features, name = coalesce(excluded.name, debug_files.name),
                    uploaded_at = excluded.uploaded_at, blob_sha256 = excluded.blob_sha256,
                    stored_seq = CASE WHEN debug_files.blob_sha256 IS NOT DISTINCT FROM excluded.blob_sha256
                                      THEN debug_files.stored_seq ELSE excluded.stored_seq END
                """, logger: logger)
        }
        if sequence != nil {
            // In this transaction: the reports this file outranks are queued before any node can see the file, and a
            // node that dies right after the commit loses nothing.
            _ = try await PostgresDebugData.requeueOutranked(
                project: project, buildID: buildID, replacedKinds: change.replacedKinds,
                addedKinds: change.addedKinds, connection, logger)
        }
        return (change.outcome, change.released)
    }

    /// Takes the blob's advisory lock, held to the end of the transaction (see the type's comment).
    static func lock(_ hash: ContentHash, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query(
            "SELECT pg_advisory_xact_lock(hashtextextended(\(hash.rawValue), 0))", logger: logger)
    }

    /// Removes the blob of `hash` when no row (of any project) names it, under the blob's lock: an upload of the same
    /// bytes on another node either committed its row before (the blob stays) or places the blob again after.
    func removeIfUnreferenced(_ hash: ContentHash) async throws {
        let logger = database.logger
        let blobs = blobs
        try await database.write { connection in
            try await Self.lock(hash, connection, logger)
            let used =
                try await PostgresRows.count(
                    connection.query(
                        "SELECT 1 FROM debug_files WHERE blob_sha256 = \(hash.rawValue) LIMIT 1", logger: logger)) > 0
            if !used { blobs.remove(hash) }
        }
    }

    /// The project's quota use: the sum of its distinct blobs (each counted once, however many rows name it), leaving
    /// out the blob `blob` and the rows of `excluding` (of `kinds`, or all of its kinds when `kinds` is empty), and of
    /// its stored minidumps (from the partial index `attachments_minidumps`), which count against the same quota.
    /// Saturates rather than overflows: sizes come from uploads.
    static func usedBytes(
        project: ProjectID, excluding: String?, kinds: [String], blob: String?, _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws -> UInt64 {
        let rows = try await connection.query(
            """
            SELECT least(
                coalesce(sum(size), 0)
                    + (SELECT coalesce(sum(size), 0) FROM attachments
                       WHERE project_id = \(project.rawValue) AND attachment_type = 'event.minidump'),
                9223372036854775807)::bigint
            FROM (
                SELECT max(size) AS size FROM debug_files
                WHERE project_id = \(project.rawValue) AND blob_sha256 IS NOT NULL
                    AND (\(blob)::text IS NULL OR blob_sha256 != \(blob))
                    AND (\(excluding)::text IS NULL
                         OR NOT (build_id = \(excluding) AND (cardinality(\(kinds)::text[]) = 0 OR kind = ANY(\(kinds)))))
                GROUP BY blob_sha256
            ) AS blobs
            """, logger: logger)
        for try await total in rows.decode(Int64.self) { return UInt64(clamping: total) }
        return 0
    }

    public func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind> {
        let logger = database.logger
        return try await database.read { connection in
            var kinds = Set<DebugFileKind>()
            for try await kind in try await connection.query(
                """
                SELECT kind FROM debug_files WHERE project_id = \(project.rawValue) AND build_id = \(buildID.rawValue)
                    AND blob_sha256 IS NOT NULL
                """, logger: logger
            ).decode(String.self) {
                if let kind = DebugFileKind(rawValue: kind) { kinds.insert(kind) }
            }
            return kinds
        }
    }

    public func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile] {
        let logger = database.logger
        return try await database.read { connection in
            var files: [StoredDebugFile] = []
            let rows = try await connection.query(
                """
                SELECT build_id, kind, size, blob_sha256, architecture, file_type, features, name, uploaded_at FROM debug_files
                WHERE project_id = \(project.rawValue) AND blob_sha256 IS NOT NULL
                ORDER BY uploaded_at DESC, build_id, kind LIMIT \(Int64(max(limit, 0)))
                """, logger: logger)
            for try await (id, kind, size, hash, architecture, fileType, features, name, uploadedAt) in rows.decode(
                (String, String, Int64, String, String, String, String, String?, Int64).self)
            {
                guard let id = BuildID(id), let kind = DebugFileKind(rawValue: kind), let hash = ContentHash(hash)
                else { continue }
                files.append(
                    StoredDebugFile(
                        project: project, buildID: id, kind: kind, size: UInt64(clamping: size), sha256: hash,
                        architecture: architecture,
                        fileType: fileType, features: features.split(separator: ",").map(String.init), name: name,
                        uploadedAt: Millis.date(uploadedAt)))
            }
            return files
        }
    }

    public func bytesUsed(project: ProjectID, excluding: BuildID?) async throws -> UInt64 {
        let logger = database.logger
        return try await database.read { connection in
            try await Self.usedBytes(
                project: project, excluding: excluding?.rawValue, kinds: [], blob: nil, connection, logger)
        }
    }

    public func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? {
        let logger = database.logger
        let hash = try await database.read { connection -> String? in
            // No project (admin token, public debuginfod): the oldest project's file, whoever uploaded last.
            let rows =
                if let project {
                    try await connection.query(
                        """
                        SELECT blob_sha256 FROM debug_files
                        WHERE project_id = \(project.rawValue) AND build_id = \(buildID.rawValue) AND kind = \(kind.rawValue)
                        """, logger: logger)
                } else {
                    try await connection.query(
                        """
                        SELECT blob_sha256 FROM debug_files
                        WHERE build_id = \(buildID.rawValue) AND kind = \(kind.rawValue) AND blob_sha256 IS NOT NULL
                        ORDER BY project_id LIMIT 1
                        """, logger: logger)
                }
            for try await hash in rows.decode(String?.self) { return hash }
            return nil
        }
        return hash.flatMap { ContentHash($0) }.flatMap(blobs.existingPath(of:))
    }
}
