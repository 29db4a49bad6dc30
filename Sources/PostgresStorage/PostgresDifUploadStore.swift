import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `dif_uploads` on PostgreSQL (the twin of `SQLiteDifUploadStore`): one row per project and file checksum that
/// sentry-cli asked to assemble. An `ok` row (with the `dif` answered, as JSON) is what makes a second
/// `sentry-cli debug-files upload` send nothing, whichever node it reaches.
public struct PostgresDifUploadStore: DifUploadStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func record(project: ProjectID, checksum: ChunkChecksum) async throws -> DifUploadRecord? {
        let logger = database.logger
        return try await database.read { connection in
            let rows = try await connection.query(
                """
                SELECT name, debug_id, build_id, state, detail, dif, updated_at FROM dif_uploads
                WHERE project_id = \(project.rawValue) AND checksum = \(checksum.rawValue)
                """, logger: logger)
            for try await (name, debugID, buildID, state, detail, difText, updatedAt) in rows.decode(
                (String, String?, String?, String, String?, String?, Int64).self)
            {
                // A description that cannot be read leaves `dif` nil: the service then assembles the file again.
                let dif = difText.flatMap { try? JSONDecoder().decode(DifDescription.self, from: Data($0.utf8)) }
                return DifUploadRecord(
                    project: project, checksum: checksum, name: name, debugID: debugID,
                    buildID: buildID.flatMap(BuildID.init),
                    state: DifUploadState(rawValue: state) ?? .error, detail: detail, dif: dif,
                    updatedAt: Millis.date(updatedAt))
            }
            return nil
        }
    }

    public func save(_ record: DifUploadRecord) async throws {
        let logger = database.logger
        // The JSON escapes what `text` refuses (U+0000); the labels beside it are made storable.
        let dif = try record.dif.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await database.write { connection in
            try await connection.query(
                """
                INSERT INTO dif_uploads (project_id, checksum, name, debug_id, build_id, state, detail, dif, updated_at)
                VALUES (\(record.project.rawValue), \(record.checksum.rawValue), \(PostgresText.storable(record.name)),
                    \(record.debugID.map(PostgresText.storable)), \(record.buildID?.rawValue), \(record.state.rawValue),
                    \(record.detail.map(PostgresText.storable)), \(dif), \(Millis.from(record.updatedAt)))
                ON CONFLICT (project_id, checksum) DO UPDATE SET
                    name = excluded.name, debug_id = excluded.debug_id, build_id = excluded.build_id, state = excluded.state,
                    detail = excluded.detail, dif = excluded.dif, updated_at = excluded.updated_at
                """, logger: logger)
        }
    }

    public func storedBuildIDs(project: ProjectID, hexPrefix: String, limit: Int) async throws -> [BuildID] {
        // Only hex digits reach the SQL (as binds anyway). Prefixes are compared with `left()`, equality of text, so
        // that no collation's order of letters and digits can change the answer.
        guard !hexPrefix.isEmpty, BuildID(hexPrefix) != nil, let length = Int32(exactly: hexPrefix.utf8.count) else {
            return []
        }
        let logger = database.logger
        return try await database.read { connection in
            var ids: [BuildID] = []
            let rows = try await connection.query(
                """
                SELECT DISTINCT build_id FROM debug_files
                WHERE project_id = \(project.rawValue)
                    AND (left(build_id, \(length)) = \(hexPrefix)
                         OR (length(build_id) < \(length) AND left(\(hexPrefix), length(build_id)) = build_id))
                ORDER BY build_id LIMIT \(Int64(max(limit, 0)))
                """, logger: logger)
            for try await id in rows.decode(String.self) {
                if let id = BuildID(id) { ids.append(id) }
            }
            return ids
        }
    }
}
