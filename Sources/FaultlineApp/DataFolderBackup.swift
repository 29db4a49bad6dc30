import DataFolder
import FaultlineCore
import SQLiteStorage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Backups of a SQLite data folder, taken while its server runs, and their restore into a new data folder.
///
/// A backup folder holds `faultline.sqlite` (a consistent copy, `SQLiteBackup.copy`), `debug-files/blobs/` (every
/// debug file and source bundle that copy refers to) and `backup.json` (what it holds). The rendered dashboard and
/// sentry-cli's pending chunks are not copied: a server renders the one and clients send the other again.
public enum DataFolderBackup {
    public struct Options: Sendable {
        /// Drop the reports (payloads, results, attachments, search entries); keep projects, settings, issues with
        /// their rollups, sessions, alerts and debug files.
        public var withoutEvents = false
        public init(withoutEvents: Bool = false) { self.withoutEvents = withoutEvents }
    }

    public struct Outcome: Sendable, Equatable {
        public var summary: SQLiteBackup.Summary
        /// Bytes of the copied database and debug files.
        public var databaseBytes: Int
        public var blobBytes: Int
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// Attempts before giving up when debug files keep changing under the copy.
    static let attempts = 3

    /// Copies the data folder `source` (its server may be running) into `destination`, a folder that is missing or
    /// empty, and checks the copy by opening it.
    ///
    /// The database is copied first; then the debug files its copy refers to. A file the server replaced in between
    /// (its blob removed) is caught, and the whole copy is taken again, up to `attempts` times.
    public static func backup(from source: String, to destination: String, options: Options = Options()) throws
        -> Outcome
    {
        try prepareEmpty(destination)
        let database = destination + "/faultline.sqlite"
        for attempt in 1...attempts {
            let partial = database + ".partial"
            try? FileManager.default.removeItem(atPath: partial)
            try SQLiteBackup.copy(database: source + "/faultline.sqlite", to: partial)
            if options.withoutEvents { try SQLiteBackup.dropEvents(at: partial) }
            let summary = try SQLiteBackup.check(partial)
            let missing = try copyBlobs(summary.blobs, from: source + "/debug-files", to: destination + "/debug-files")
            guard missing.isEmpty else {
                if attempt == attempts {
                    throw Failure(
                        "debug files changed while they were copied (\(missing.count) missing, e.g. \(missing[0])); "
                            + "try again when no upload is running")
                }
                continue
            }
            do {
                try FileManager.default.moveItem(atPath: partial, toPath: database)
            } catch {
                throw Failure("cannot move \(partial) into place: \(error)")
            }
            let outcome = Outcome(
                summary: summary, databaseBytes: fileSize(database),
                blobBytes: summary.blobs.reduce(0) {
                    $0 + fileSize(BlobFolder.path(of: $1, in: destination + "/debug-files"))
                })
            try writeManifest(outcome, options: options, to: destination)
            return outcome
        }
        throw Failure("unreachable")
    }

    /// Restores the backup folder `source` into `destination`, a data folder that is missing or empty, and checks
    /// it: the database passes `SQLiteBackup.check` and every debug file it refers to is there. The server that opens
    /// it next applies any newer migration.
    public static func restore(from source: String, to destination: String) throws -> SQLiteBackup.Summary {
        let database = source + "/faultline.sqlite"
        guard FileManager.default.fileExists(atPath: database) else {
            throw Failure("\(source) holds no faultline.sqlite: --from names a folder made by `faultline backup`")
        }
        let summary = try SQLiteBackup.check(database)
        try prepareEmpty(destination)
        let missing = try copyBlobs(summary.blobs, from: source + "/debug-files", to: destination + "/debug-files")
        guard missing.isEmpty else {
            throw Failure("the backup lacks \(missing.count) debug files it refers to (e.g. \(missing[0]))")
        }
        do {
            try FileManager.default.copyItem(atPath: database, toPath: destination + "/faultline.sqlite")
        } catch {
            throw Failure("cannot copy the database into \(destination): \(error)")
        }
        return try SQLiteBackup.check(destination + "/faultline.sqlite")
    }

    /// Creates `folder` (mode 0700) unless it exists; refuses one that holds anything.
    static func prepareEmpty(_ folder: String) throws {
        let files = FileManager.default
        if files.fileExists(atPath: folder) {
            let contents = (try? files.contentsOfDirectory(atPath: folder)) ?? []
            guard contents.isEmpty else { throw Failure("\(folder) is not empty: give a new or empty folder") }
        } else {
            try files.createDirectory(
                atPath: folder, withIntermediateDirectories: true,
                attributes: [.posixPermissions: Int(DataFolderPermissions.folderMode)])
        }
    }

    /// Copies each blob of `hashes` from the debug-file folder `source` to `destination` (same layout); returns the
    /// hashes whose file is missing from `source`.
    static func copyBlobs(_ hashes: [ContentHash], from source: String, to destination: String) throws -> [ContentHash]
    {
        let files = FileManager.default
        var missing: [ContentHash] = []
        for hash in hashes {
            let from = BlobFolder.path(of: hash, in: source)
            let to = BlobFolder.path(of: hash, in: destination)
            guard files.fileExists(atPath: from) else {
                missing.append(hash)
                continue
            }
            if files.fileExists(atPath: to) { continue }
            try files.createDirectory(
                atPath: "\(destination)/blobs/\(hash.rawValue.prefix(2))", withIntermediateDirectories: true)
            do {
                try files.copyItem(atPath: from, toPath: to)
            } catch {
                throw Failure("cannot copy the debug file \(hash): \(error)")
            }
        }
        return missing
    }

    static func writeManifest(_ outcome: Outcome, options: Options, to folder: String) throws {
        let manifest: [String: String] = [
            "schema": outcome.summary.schema, "projects": String(outcome.summary.projects),
            "issues": String(outcome.summary.issues), "reports": String(outcome.summary.reports),
            "debug_files": String(outcome.summary.debugFiles), "without_events": String(options.withoutEvents),
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        try encoder.encode(manifest).write(to: URL(fileURLWithPath: folder + "/backup.json"))
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }
}
