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

/// Debug files: blobs on disk under `debug-files/<aa>/<rest of build-id>/<kind>`, an index in SQLite.
///
/// Paths are derived from validated `BuildID`s and `DebugFileKind`s only (hex digits and two fixed
/// names), never from a name sent by a client or found in DWARF. A file is written to `tmp/`, fsynced,
/// then hard-linked into place under each name it serves, so a reader sees no file or a complete one.
/// Blobs are shared by every project that uploads the same build-id; the index row is per project.
public struct SQLiteDebugFileStore: DebugFileStore {
    let database: FaultlineDatabase
    let root: String

    /// - Parameter root: the `debug-files` folder of the data folder.
    public init(database: FaultlineDatabase, root: String) throws {
        self.database = database
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
    }

    func blobPath(_ id: BuildID, _ kind: DebugFileKind) -> String {
        let hex = id.rawValue
        return "\(root)/\(hex.prefix(2))/\(hex.dropFirst(2))/\(kind.rawValue)"
    }

    public func temporaryUpload() throws -> TemporaryUpload {
        let path = "\(root)/tmp/\(UUID().uuidString.lowercased()).part"
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw StorageError(.openFailed, "cannot create a temporary file for the upload")
        }
        return TemporaryUpload(path: path)
    }

    public func discard(_ upload: TemporaryUpload) {
        unlink(upload.path)
    }

    public func store(
        _ upload: TemporaryUpload, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?, at date: Date
    ) async throws -> [StoredDebugFile] {
        defer { unlink(upload.path) }
        try Self.fsync(upload.path)
        var rows: [StoredDebugFile] = []
        for kind in facts.kinds.sorted() {
            let target = blobPath(buildID, kind)
            let folder = String(target[..<target.lastIndex(of: "/")!])
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            // link() refuses to replace: the first complete file for a build-id and kind stays.
            if link(upload.path, target) != 0, errno != EEXIST {
                throw StorageError(.openFailed, "cannot store the debug file (errno \(errno))")
            }
            Self.fsyncDirectory(folder)
            let size = (try? FileManager.default.attributesOfItem(atPath: target)[.size] as? UInt64) ?? 0
            rows.append(StoredDebugFile(
                project: project, buildID: buildID, kind: kind, size: size ?? 0, architecture: facts.architecture,
                fileType: facts.fileType, features: facts.features, name: name, uploadedAt: date))
        }
        let finalRows = rows
        try await database.pool.write { db in
            for row in finalRows {
                try db.execute(
                    sql: """
                        INSERT INTO debug_files (project_id, build_id, kind, size, architecture, file_type, features, name, uploaded_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (project_id, build_id, kind) DO UPDATE SET uploaded_at = excluded.uploaded_at
                        """,
                    arguments: [
                        row.project.rawValue, row.buildID.rawValue, row.kind.rawValue, Int64(row.size), row.architecture,
                        row.fileType, row.features.joined(separator: ","), row.name, Millis.from(row.uploadedAt),
                    ])
            }
        }
        return rows
    }

    public func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind> {
        try await database.pool.read { db in
            Set(try String.fetchAll(
                db, sql: "SELECT kind FROM debug_files WHERE project_id = ? AND build_id = ?",
                arguments: [project.rawValue, buildID.rawValue]
            ).compactMap(DebugFileKind.init(rawValue:)))
        }
    }

    public func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT * FROM debug_files WHERE project_id = ? ORDER BY uploaded_at DESC, build_id, kind LIMIT ?
                    """,
                arguments: [project.rawValue, limit]
            ).compactMap { row in
                guard let id = BuildID(row["build_id"]), let kind = DebugFileKind(rawValue: row["kind"]) else { return nil }
                let features: String = row["features"]
                return StoredDebugFile(
                    project: ProjectID(row["project_id"]), buildID: id, kind: kind, size: UInt64(row["size"] as Int64),
                    architecture: row["architecture"], fileType: row["file_type"],
                    features: features.split(separator: ",").map(String.init), name: row["name"],
                    uploadedAt: Millis.date(row["uploaded_at"]))
            }
        }
    }

    public func bytesUsed(project: ProjectID) async throws -> UInt64 {
        try await database.pool.read { db in
            UInt64(try Int64.fetchOne(db, sql: "SELECT coalesce(sum(size), 0) FROM debug_files WHERE project_id = ?",
                                      arguments: [project.rawValue]) ?? 0)
        }
    }

    public func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? {
        let known = try await database.pool.read { db in
            if let project {
                return try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM debug_files WHERE project_id = ? AND build_id = ? AND kind = ?",
                    arguments: [project.rawValue, buildID.rawValue, kind.rawValue]) ?? false
            }
            return try Bool.fetchOne(
                db, sql: "SELECT 1 FROM debug_files WHERE build_id = ? AND kind = ? LIMIT 1",
                arguments: [buildID.rawValue, kind.rawValue]) ?? false
        }
        guard known else { return nil }
        let path = blobPath(buildID, kind)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    static func fsync(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw StorageError(.openFailed, "cannot open the upload (errno \(errno))") }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw StorageError(.openFailed, "cannot sync the upload (errno \(errno))") }
    }

    static func fsyncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        _ = Glibc.fsync(fd)
        close(fd)
    }
}
