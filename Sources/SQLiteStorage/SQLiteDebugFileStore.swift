import DataFolder
import FaultlineCore
import GRDB

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Debug files: content-addressed blobs on disk under `debug-files/blobs/<aa>/<sha-256>`, and per project,
/// build-id and kind a row in `debug_files` naming the blob that project uploaded.
///
/// Why per project: a build-id is a claim anyone can make (`-Wl,--build-id=0x…`), so a blob shared by
/// build-id would let one project read, or worse pre-empt, another's symbols. A blob is shared only by
/// projects whose files are byte for byte the same (equal SHA-256); a project that uploads a different file
/// for a build-id it has replaces its own row (newest wins) and never touches another project's.
///
/// The files themselves are a `BlobFolder` (paths from validated hashes only, written to `tmp/`, fsynced, linked
/// into place). Blob placement and row changes happen in one write transaction, and a blob no row names any more
/// is removed in a later write transaction: the two are serialised by SQLite's writer lock, so a blob is never
/// removed under an upload that is about to name it.
///
/// Storing a file that changes what a project holds takes the next debug-file change sequence value
/// (`debug_files.stored_seq`) and, in the same transaction, queues the project's reports the file outranks
/// (`SQLiteSymbolicationStore.requeueOutranked`): late symbols land whatever the order of arrival.
public struct SQLiteDebugFileStore: DebugFileStore {
    let database: SQLiteEngine
    let blobs: BlobFolder
    var root: String { blobs.root }

    /// - Parameter root: the `debug-files` folder of the data folder.
    public init(database: SQLiteEngine, root: String) throws {
        self.database = database
        blobs = try BlobFolder(root: root)
    }

    /// Where a file lived before `v7-debug-file-blobs` (shared by every project with the build-id).
    func legacyPath(_ id: BuildID, _ kind: DebugFileKind) -> String {
        let hex = id.rawValue
        return "\(root)/\(hex.prefix(2))/\(hex.dropFirst(2))/\(kind.rawValue)"
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
        let outcomes: [DebugFileStoreOutcome]
        var released: [ContentHash] = []
        do {
            (outcomes, released) = try await database.pool.write { db -> ([DebugFileStoreOutcome], [ContentHash]) in
                var outcomes: [DebugFileStoreOutcome] = []
                var released: Set<ContentHash> = []
                var placed: [ContentHash] = []
                for file in files {
                    let change = try store(
                        file, project: project, quotaBytes: quotaBytes, at: date, placed: &placed, db)
                    if case .quotaExceeded = change.outcome { throw Refused(outcome: change.outcome, placed: placed) }
                    outcomes.append(change.outcome)
                    released.formUnion(change.released)
                }
                return (outcomes, released.sorted())
            }
        } catch let refused as Refused {
            // Rolled back: a blob placed for an earlier file that no row names is removed (one another upload placed
            // too and committed stays).
            if !refused.placed.isEmpty { try await removeUnreferenced(refused.placed) }
            return [refused.outcome]
        }
        if !released.isEmpty { try await removeUnreferenced(released) }
        return outcomes
    }

    /// Stores one file of an upload in the caller's transaction (`storeAll`): its quota checked against what the
    /// project holds in it, its blob placed (and added to `placed`), its rows written, its outranked reports queued.
    /// Nothing is written when it does not fit (`change.outcome` says so).
    func store(
        _ piece: DebugFileToStore, project: ProjectID, quotaBytes: UInt64, at date: Date, placed: inout [ContentHash],
        _ db: Database
    ) throws -> (outcome: DebugFileStoreOutcome, released: Set<ContentHash>) {
        let (file, buildID) = (piece.file, piece.buildID)
        var change = DebugFileChange(
            file, facts: piece.facts, buildID: buildID, project: project, name: piece.name, at: date)
        // The quota: the project's distinct blobs once these kinds point at the new one, and its minidumps.
        let others = try Self.usedBytes(db, project: project, excluding: (buildID, change.kinds), blob: file.sha256)
        if let refusal = change.refusal(others: others, quota: quotaBytes) { return (refusal, []) }
        try blobs.place(from: file.upload.path, hash: file.sha256, size: file.size)
        placed.append(file.sha256)
        // The change sequence value of this store, taken once, by the first row that needs one.
        var sequence: Int64?
        for row in change.rows {
            let previous = try String.fetchOne(
                db,
                sql:
                    "SELECT coalesce(blob_sha256, '') FROM debug_files WHERE project_id = ? AND build_id = ? AND kind = ?",
                arguments: [project.rawValue, buildID.rawValue, row.kind.rawValue])
            if change.note(previous: previous, for: row.kind), sequence == nil {
                sequence = try SQLiteSymbolicationStore.nextDebugFileSequence(db)
            }
            try db.execute(
                sql: """
                    INSERT INTO debug_files
                        (project_id, build_id, kind, size, architecture, file_type, features, name, uploaded_at, blob_sha256,
                         stored_seq)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, build_id, kind) DO UPDATE SET
                        size = excluded.size, architecture = excluded.architecture, file_type = excluded.file_type,
                        features = excluded.features, name = coalesce(excluded.name, debug_files.name),
                        uploaded_at = excluded.uploaded_at, blob_sha256 = excluded.blob_sha256,
                        stored_seq = CASE WHEN debug_files.blob_sha256 IS excluded.blob_sha256 THEN debug_files.stored_seq
                                          ELSE excluded.stored_seq END
                    """,
                arguments: [
                    row.project.rawValue, row.buildID.rawValue, row.kind.rawValue, Int64(clamping: row.size),
                    row.architecture,
                    row.fileType, row.features.joined(separator: ","), row.name, Millis.from(row.uploadedAt),
                    row.sha256.rawValue, sequence ?? 0,
                ])
        }
        if sequence != nil {
            // In this transaction: the reports this file outranks are queued before anyone can see the file, and a
            // process that dies right after the commit loses nothing.
            _ = try SQLiteSymbolicationStore.requeueOutranked(
                project: project, buildID: buildID, replacedKinds: change.replacedKinds,
                addedKinds: change.addedKinds, db)
        }
        return (change.outcome, change.released)
    }

    /// The project's quota use: the sum of its distinct blobs, leaving out the rows of `excluding` and the blob `blob`,
    /// and of its stored minidumps (`SQLiteIngestStore.minidumpBytes`), which count against the same quota.
    static func usedBytes(
        _ db: Database, project: ProjectID, excluding: (BuildID, [DebugFileKind])?, blob: ContentHash?
    ) throws
        -> UInt64
    {
        var sql =
            "SELECT blob_sha256, max(size) AS size FROM debug_files WHERE project_id = ? AND blob_sha256 IS NOT NULL"
        var arguments: StatementArguments = [project.rawValue]
        if let blob {
            sql += " AND blob_sha256 != ?"
            arguments += [blob.rawValue]
        }
        if let (buildID, kinds) = excluding {
            if kinds.isEmpty {
                sql += " AND build_id != ?"
                arguments += [buildID.rawValue]
            } else {
                sql += " AND NOT (build_id = ? AND kind IN (\(kinds.map { _ in "?" }.joined(separator: ", "))))"
                arguments += [buildID.rawValue]
                for kind in kinds { arguments += [kind.rawValue] }
            }
        }
        sql += " GROUP BY blob_sha256"
        var total = try SQLiteIngestStore.minidumpBytes(project: project, db)
        for size in try Int64.fetchAll(db, sql: "SELECT size FROM (\(sql))", arguments: arguments) {
            let (sum, overflow) = total.addingReportingOverflow(UInt64(clamping: size))
            total = overflow ? .max : sum
        }
        return total
    }

    /// Removes the blobs among `hashes` that no row (of any project) names any more.
    func removeUnreferenced(_ hashes: [ContentHash]) async throws {
        try await database.pool.write { db in
            for hash in hashes {
                let used =
                    try Bool.fetchOne(
                        db, sql: "SELECT 1 FROM debug_files WHERE blob_sha256 = ? LIMIT 1", arguments: [hash.rawValue])
                    ?? false
                if !used { blobs.remove(hash) }
            }
        }
    }

    public func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind> {
        try await database.pool.read { db in
            Set(
                try String.fetchAll(
                    db,
                    sql:
                        "SELECT kind FROM debug_files WHERE project_id = ? AND build_id = ? AND blob_sha256 IS NOT NULL",
                    arguments: [project.rawValue, buildID.rawValue]
                ).compactMap(DebugFileKind.init(rawValue:)))
        }
    }

    public func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM debug_files WHERE project_id = ? AND blob_sha256 IS NOT NULL
                    ORDER BY uploaded_at DESC, build_id, kind LIMIT ?
                    """,
                arguments: [project.rawValue, limit]
            ).compactMap { row in
                guard let id = BuildID(row["build_id"]), let kind = DebugFileKind(rawValue: row["kind"]),
                    let hash = ContentHash(row["blob_sha256"] as String)
                else { return nil }
                let features: String = row["features"]
                return StoredDebugFile(
                    project: ProjectID(row["project_id"]), buildID: id, kind: kind,
                    size: UInt64(clamping: row["size"] as Int64),
                    sha256: hash, architecture: row["architecture"], fileType: row["file_type"],
                    features: features.split(separator: ",").map(String.init), name: row["name"],
                    uploadedAt: Millis.date(row["uploaded_at"]))
            }
        }
    }

    public func bytesUsed(project: ProjectID, excluding: BuildID?) async throws -> UInt64 {
        try await database.pool.read { db in
            try Self.usedBytes(db, project: project, excluding: excluding.map { ($0, []) }, blob: nil)
        }
    }

    public func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? {
        let hash = try await database.pool.read { db -> String? in
            if let project {
                return try String.fetchOne(
                    db, sql: "SELECT blob_sha256 FROM debug_files WHERE project_id = ? AND build_id = ? AND kind = ?",
                    arguments: [project.rawValue, buildID.rawValue, kind.rawValue])
            }
            // No project (admin token, public debuginfod): the oldest project's file, whoever uploaded last.
            return try String.fetchOne(
                db,
                sql: """
                    SELECT blob_sha256 FROM debug_files WHERE build_id = ? AND kind = ? AND blob_sha256 IS NOT NULL
                    ORDER BY project_id LIMIT 1
                    """,
                arguments: [buildID.rawValue, kind.rawValue])
        }
        return hash.flatMap { ContentHash($0) }.flatMap(blobs.existingPath(of:))
    }

    // MARK: Files of an older install

    /// Gives every row stored before `v7-debug-file-blobs` its blob: the legacy file (one per build-id and kind,
    /// shared by every project that had the build-id) is hashed and linked into the blob store, the rows are
    /// pointed at it, and the legacy file is removed. Rows whose legacy file is gone are deleted (they served
    /// nothing). Which project's bytes a shared legacy file were cannot be known: every project that had a row
    /// keeps the same blob, and can replace it by uploading its own file. Runs when the data folder is opened;
    /// a no-op once done. Returns how many (build-id, kind) files were adopted.
    @discardableResult
    public func adoptLegacyFiles(hasher: any ContentHashing) throws -> Int {
        let pending = try database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT DISTINCT build_id, kind FROM debug_files WHERE blob_sha256 IS NULL")
        }
        var adopted = 0
        for row in pending {
            let rawID: String = row["build_id"]
            let rawKind: String = row["kind"]
            let legacy = BuildID(rawID).flatMap { id in DebugFileKind(rawValue: rawKind).map { legacyPath(id, $0) } }
            if let legacy, let size = BlobFolder.fileSize(legacy), let hash = try? hasher.sha256(ofFileAt: legacy) {
                try database.pool.write { db in
                    try blobs.place(from: legacy, hash: hash, size: size)
                    try db.execute(
                        sql:
                            "UPDATE debug_files SET blob_sha256 = ?, size = ? WHERE build_id = ? AND kind = ? AND blob_sha256 IS NULL",
                        arguments: [hash.rawValue, Int64(clamping: size), rawID, rawKind])
                }
                adopted += 1
            } else {
                try database.pool.write { db in
                    try db.execute(
                        sql: "DELETE FROM debug_files WHERE build_id = ? AND kind = ? AND blob_sha256 IS NULL",
                        arguments: [rawID, rawKind])
                }
            }
            if let legacy { unlink(legacy) }
        }
        // Whatever is left of the legacy tree (two-hex-digit folders only; `blobs` and `tmp` are never touched).
        let files = FileManager.default
        for prefix in (try? files.contentsOfDirectory(atPath: root)) ?? []
        where prefix.utf8.count == 2 && prefix.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }) {
            let prefixFolder = root + "/" + prefix
            for rest in (try? files.contentsOfDirectory(atPath: prefixFolder)) ?? [] where BuildID(prefix + rest) != nil
            {
                for kind in DebugFileKind.allCases { unlink(prefixFolder + "/" + rest + "/" + kind.rawValue) }
                rmdir(prefixFolder + "/" + rest)  // only succeeds when empty
            }
            rmdir(prefixFolder)
        }
        return adopted
    }
}
