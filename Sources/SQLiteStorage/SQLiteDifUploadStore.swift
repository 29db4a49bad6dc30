import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `dif_uploads`: one row per project and file checksum that sentry-cli asked to assemble.
///
/// An `ok` row is what makes a second `sentry-cli debug-files upload` send nothing: it holds the `dif`
/// answered for the file (as JSON, the `DifDescription` stored form). `error` rows are kept for people;
/// a file is assembled again whenever it is asked for and is not `ok`.
public struct SQLiteDifUploadStore: DifUploadStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    public func record(project: ProjectID, checksum: ChunkChecksum) async throws -> DifUploadRecord? {
        try await database.pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT * FROM dif_uploads WHERE project_id = ? AND checksum = ?",
                    arguments: [project.rawValue, checksum.rawValue])
            else { return nil }
            let state = DifUploadState(rawValue: row["state"]) ?? .error
            let difText: String? = row["dif"]
            // A description that cannot be read leaves `dif` nil: the service then assembles the file again.
            let dif = difText.flatMap { try? JSONDecoder().decode(DifDescription.self, from: Data($0.utf8)) }
            let buildID: String? = row["build_id"]
            return DifUploadRecord(
                project: project, checksum: checksum, name: row["name"], debugID: row["debug_id"],
                buildID: buildID.flatMap(BuildID.init),
                state: state, detail: row["detail"], dif: dif,
                updatedAt: Millis.date(row["updated_at"]))
        }
    }

    public func save(_ record: DifUploadRecord) async throws {
        let dif = try record.dif.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO dif_uploads (project_id, checksum, name, debug_id, build_id, state, detail, dif, updated_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (project_id, checksum) DO UPDATE SET
                        name = excluded.name, debug_id = excluded.debug_id, build_id = excluded.build_id, state = excluded.state,
                        detail = excluded.detail, dif = excluded.dif, updated_at = excluded.updated_at
                    """,
                arguments: [
                    record.project.rawValue, record.checksum.rawValue, record.name, record.debugID,
                    record.buildID?.rawValue,
                    record.state.rawValue, record.detail, dif, Millis.from(record.updatedAt),
                ])
        }
    }

    public func storedBuildIDs(project: ProjectID, hexPrefix: String, limit: Int) async throws -> [BuildID] {
        // Only hex digits reach the SQL (as arguments anyway): the range scan uses the primary key.
        guard !hexPrefix.isEmpty, BuildID(hexPrefix) != nil else { return [] }
        return try await database.pool.read { db in
            try String.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT build_id FROM debug_files
                    WHERE project_id = ? AND ((build_id >= ? AND build_id < ?) OR (length(build_id) < ? AND substr(?, 1, length(build_id)) = build_id))
                    ORDER BY build_id LIMIT ?
                    """,
                arguments: [project.rawValue, hexPrefix, hexPrefix + "g", hexPrefix.utf8.count, hexPrefix, limit]
            ).compactMap(BuildID.init)
        }
    }
}
