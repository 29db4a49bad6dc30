import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Online backups of a data folder's database: a consistent copy taken while a server writes to it, made smaller
/// on request, and checked by opening it again.
///
/// The copy is SQLite's `VACUUM INTO`, run on a connection of its own: it reads one snapshot (a read transaction in
/// WAL mode, so the server's writers never wait for it) and writes it compacted into a new file. It is a separate
/// process's connection, never a second pool on the server's file in the server's process.
public enum SQLiteBackup {
    /// What a checked copy holds.
    public struct Summary: Sendable, Equatable {
        /// The schema version (the last applied migration).
        public var schema: String
        public var projects: Int
        public var issues: Int
        public var reports: Int
        public var debugFiles: Int
        /// The content hashes of the stored debug files and source bundles the copy refers to.
        public var blobs: [ContentHash]
    }

    /// Writes a consistent copy of the database at `source` to `destination`, which must not exist.
    /// - Throws: `StorageError(.openFailed)` when the source cannot be read or the copy cannot be written.
    public static func copy(database source: String, to destination: String) throws {
        guard !FileManager.default.fileExists(atPath: destination) else {
            throw StorageError(.openFailed, "\(destination) exists already: a backup is written to a new file")
        }
        var config = Configuration()
        config.readonly = true
        config.busyMode = .timeout(30)
        do {
            let queue = try DatabaseQueue(path: source, configuration: config)
            defer { try? queue.close() }
            try queue.inDatabase { db in try db.execute(sql: "VACUUM INTO ?", arguments: [destination]) }
        } catch {
            throw StorageError(.openFailed, "cannot copy the database \(source) to \(destination)", underlying: error)
        }
    }

    /// Drops every report from the copy at `path`, with its payload, symbolication result, modules, search entry and
    /// attachments, keeping projects, settings, issues with their rollups, sessions, alerts and debug files; then
    /// compacts it. For a copy only (it takes the database for itself).
    public static func dropEvents(at path: String) throws {
        do {
            let queue = try DatabaseQueue(path: path, configuration: plainConfiguration())
            defer { try? queue.close() }
            try queue.write { db in
                // A payload's reports, and their results, modules and search entries, go with it (foreign keys).
                try db.execute(sql: "DELETE FROM payloads")
                try db.execute(sql: "DELETE FROM attachments")
                try db.execute(sql: "INSERT INTO search_index(search_index) VALUES ('rebuild')")
            }
            try queue.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        } catch {
            throw StorageError(.openFailed, "cannot drop the reports from the copy \(path)", underlying: error)
        }
    }

    /// Opens the copy at `path` and checks it: SQLite's `integrity_check` and foreign keys, a schema this binary
    /// knows, and what it holds.
    /// - Throws: `StorageError(.openFailed)` naming the first problem.
    public static func check(_ path: String) throws -> Summary {
        do {
            var config = plainConfiguration()
            config.readonly = true
            let queue = try DatabaseQueue(path: path, configuration: config)
            defer { try? queue.close() }
            return try queue.read { db in
                let integrity = try String.fetchAll(db, sql: "PRAGMA integrity_check")
                guard integrity == ["ok"] else {
                    throw StorageError(.openFailed, "integrity check: \(integrity.prefix(3).joined(separator: "; "))")
                }
                if let broken = try Row.fetchOne(db, sql: "PRAGMA foreign_key_check") {
                    throw StorageError(.openFailed, "foreign key check: \(broken)")
                }
                let applied = try SQLiteMigrations.migrator.appliedIdentifiers(db)
                let known = Set(SQLiteMigrations.migrator.migrations)
                if let unknown = applied.first(where: { !known.contains($0) }) {
                    throw StorageError(.openFailed, "the copy has migration \(unknown), newer than this faultline")
                }
                let blobs = try String.fetchAll(
                    db, sql: "SELECT DISTINCT blob_sha256 FROM debug_files WHERE blob_sha256 IS NOT NULL ORDER BY 1")
                return Summary(
                    schema: SQLiteMigrations.migrator.migrations.last(where: applied.contains) ?? "",
                    projects: try Int.fetchOne(db, sql: "SELECT count(*) FROM projects") ?? 0,
                    issues: try Int.fetchOne(db, sql: "SELECT count(*) FROM issues") ?? 0,
                    reports: try Int.fetchOne(db, sql: "SELECT count(*) FROM reports") ?? 0,
                    debugFiles: try Int.fetchOne(
                        db, sql: "SELECT count(*) FROM debug_files WHERE blob_sha256 IS NOT NULL") ?? 0,
                    blobs: blobs.compactMap { ContentHash($0) })
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.openFailed, "cannot open the copy \(path)", underlying: error)
        }
    }

    static func plainConfiguration() -> Configuration {
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(30)
        return config
    }
}
