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

/// The one SQLite database of a data folder: a GRDB `DatabasePool` in WAL mode, migrated on open.
///
/// One pool per file per process (GRDB's rule: two pools on one file in one process break WAL's
/// locking assumptions). Everything in Storage is built on the pool this type owns.
public final class SQLiteEngine: Sendable {
    /// How hard each commit is pushed to disk.
    public enum Durability: String, Sendable, CaseIterable {
        /// `synchronous = FULL`: the WAL is fsynced at every commit; survives power loss.
        case full
        /// `synchronous = NORMAL`: survives a killed process (`kill -9`), may lose the last commits on
        /// power loss. Faster on slow disks.
        case normal
    }

    let pool: DatabasePool
    /// Compresses symbolication results before they are stored, and restores them when read (`StoredBlobCodec`).
    let codec: StoredBlobCodec

    /// Opens (creating if needed) the database at `path` and applies pending migrations.
    ///
    /// After the migrations, the writer keeps its temporary files in memory (`temp_store = MEMORY`). The one that
    /// matters is the statement journal, where SQLite copies every page a savepoint (or a multi-row statement inside
    /// a transaction) changes before changing it. When the worker saved each report of a batch in its own savepoint,
    /// that journal was a temporary file taking ~90 % of the server's write syscalls: 3.4 GB of writes to process
    /// 15,000 reports. Savepoints are now only the fallback when the database refuses a write (`saveAll`,
    /// `SQLiteIngestStore.commit`); in memory the journal is a few hundred KB per savepoint, freed at its end.
    /// Not before the migrations (a migration's table-wide statement would journal the whole table in memory), and
    /// not on the readers (their sorts of big tables stay on disk). `compact` puts VACUUM's copy back on disk.
    ///
    /// - Parameters:
    ///   - codec: compresses the results the stores make (the server passes zlib). With `.none` results
    ///     are stored as JSON, and a compressed one cannot be read.
    ///   - identities: keys the per-user rollups with a project's identity key (`RollupUserKeys`; the server passes
    ///     HMAC-SHA-256). Without it, writing a report or session that has a user fails, and so does upgrading a
    ///     database whose rollups still hold user ids: only readers and tools that write no users go without.
    ///   - upgradeProgress: told after each batch of a migration's batched rewrite (`SQLiteBatchedRewrites`); by
    ///     default a line on standard error at each tenth.
    public init(
        path: String, durability: Durability = .full, codec: StoredBlobCodec = .none,
        identities: IdentityHashers? = nil,
        upgradeProgress: (@Sendable (BatchedRewriteProgress) -> Void)? = SQLiteBatchedRewrites.standardErrorProgress
    ) throws {
        self.codec = codec
        var config = Configuration()
        config.foreignKeysEnabled = true
        config.busyMode = .timeout(10)
        config.label = "faultline"
        let synchronous = durability == .full ? "FULL" : "NORMAL"
        let rollupUsers = identities.map(RollupUserKeys.sqlFunction)
        config.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(synchronous)")
            if let rollupUsers { db.add(function: rollupUsers) }
        }
        do {
            try Self.createWithAutoVacuum(path: path)
            pool = try DatabasePool(path: path, configuration: config)
            try Self.refuseNewerSchema(pool)
            try SQLiteBatchedRewrites.migrate(
                pool, migrator: SQLiteMigrations.migrator, rewrites: SQLiteBatchedRewrites.all,
                progress: upgradeProgress)
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA temp_store = MEMORY") }
        } catch let error as StorageError where error.code == .newerSchema {
            throw error
        } catch {
            throw StorageError(.openFailed, "cannot open the database at \(path)", underlying: error)
        }
    }

    /// Refuses a database that a newer faultline migrated: this binary does not know its schema, and writing to it
    /// could lose what the newer one stores.
    static func refuseNewerSchema(_ pool: DatabasePool) throws {
        let applied = try pool.read { db in try SQLiteMigrations.migrator.appliedIdentifiers(db) }
        try UpgradePlan.refuseNewerSchema(applied: applied, known: SQLiteMigrations.migrator.migrations)
    }

    /// A new database file starts in incremental auto-vacuum mode, so that deleted pages can be given back to the
    /// file system (`releaseFreePages`). The mode can be chosen only before the file's first page is written (the
    /// pool writes one when it turns WAL on), hence this short connection first. An existing file keeps its mode.
    static func createWithAutoVacuum(path: String) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard size == nil || size == 0 else { return }
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
    }

    /// Names of the applied migrations, oldest first.
    public func appliedMigrations() throws -> [String] {
        try pool.read { db in try SQLiteMigrations.migrator.appliedMigrations(db) }
    }

    /// The journal mode SQLite reports (`wal` once open).
    public func journalMode() throws -> String {
        try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "" }
    }

    /// Copies the WAL into the database and truncates it to zero bytes (`wal_checkpoint(TRUNCATE)`), giving its
    /// space back to the file system; run on entering the storage-pressure state. Fails (harmlessly) while readers
    /// hold old snapshots or when the database file cannot grow.
    public func checkpointTruncatingWAL() async throws {
        try await pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
    }

    /// SQLite's auto-vacuum mode of this database: `incremental` for databases made since issue #15 (deleted pages
    /// can be given back), `none` for older ones (`faultline compact` converts one, offline).
    public func autoVacuum() async throws -> String {
        let mode = try await pool.read { db in try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") ?? 0 }
        return mode == 2 ? "incremental" : mode == 1 ? "full" : "none"
    }

    /// Pages released per transaction by `releaseFreePages` (256 KiB: the WAL stays within its bound under pressure).
    static let releasePagesPerStep = 64

    /// Gives free pages at the end of the file back to the file system, `releasePagesPerStep` at a time, at most
    /// `maxBytes`; returns the bytes given back (0 unless the database is in incremental auto-vacuum mode).
    public func releaseFreePages(maxBytes: Int64) async throws -> Int64 {
        let pages = Self.releasePagesPerStep
        var released: Int64 = 0
        while released < maxBytes, !Task.isCancelled {
            let step = try await pool.writeWithoutTransaction { db -> Int64 in
                guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") == 2 else { return 0 }
                let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
                let before = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                guard before > 0 else { return 0 }
                try db.execute(sql: "PRAGMA incremental_vacuum(\(pages))")
                let after = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
                return max(0, before &- after) &* size
            }
            guard step > 0 else { break }
            released &+= step
        }
        // The file shrank at the next checkpoint: do it now, so the space is back at once.
        if released > 0 { try? await pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) } }
        return released
    }

    /// Converts a database made before auto-vacuum to incremental auto-vacuum and compacts it (`VACUUM`): needs
    /// free space about the size of the database, and exclusive use (run with the server stopped).
    public func compact() throws {
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            // VACUUM copies the whole database through a temporary one: on disk, not in memory (see `init`).
            try db.execute(sql: "PRAGMA temp_store = FILE")
            try db.execute(sql: "VACUUM")
            _ = try db.checkpoint(.truncate)
        }
    }

    /// WAL pages after which a commit checkpoints while the disk is under pressure (SQLite's default is 1,000
    /// pages, 4 MiB: as much as a small floor): at most about 256 KiB of the floor is the WAL's.
    static let pressureCheckpointPages = 64

    /// Bounds the WAL while the disk is under storage pressure: truncates it now, then has the writer checkpoint
    /// every `pressureCheckpointPages` pages and cut the WAL file back to that size whenever it starts over
    /// (`journal_size_limit`), so that the WAL does not grow back to its usual size inside the floor.
    public func enterStoragePressure() async throws {
        let pages = Self.pressureCheckpointPages
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(pages)")
            try db.execute(sql: "PRAGMA journal_size_limit = \(pages * 4096)")
        }
        try await checkpointTruncatingWAL()
    }

    /// Back to SQLite's usual WAL size once the disk has space again (`enterStoragePressure` undone).
    public func leaveStoragePressure() async throws {
        try await pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 1000")
            try db.execute(sql: "PRAGMA journal_size_limit = -1")
        }
    }

    /// Checkpoints the WAL and closes every connection. Call once, at shutdown.
    public func close() throws {
        try? pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
        try pool.close()
    }
}

extension StorageError {
    /// Whether `error` (from any store: GRDB's, a file write's, ours) means the disk is full: SQLITE_FULL, ENOSPC
    /// or EDQUOT (POSIX), and Foundation's "out of space" from a plain file write (`Data.write`, `FileHandle.write`,
    /// `createDirectory`: CocoaError 640, also as an NSError from swift-corelibs-foundation, which this module does
    /// not import: recognised by its domain and code).
    public static func isDiskFull(_ error: any Error) -> Bool {
        switch error {
        case let error as StorageError: return error.code == .diskFull || error.underlying.map(isDiskFull) == true
        case let error as DatabaseError: return error.resultCode == .SQLITE_FULL
        case let error as POSIXError: return error.code == .ENOSPC || error.code == .EDQUOT
        case let error as CocoaError: return error.code == .fileWriteOutOfSpace
        default:
            switch error._domain {
            case "NSCocoaErrorDomain": return error._code == CocoaError.Code.fileWriteOutOfSpace.rawValue
            case "NSPOSIXErrorDomain": return error._code == Int(ENOSPC) || error._code == Int(EDQUOT)
            default: return false
            }
        }
    }

    /// GRDB's SQLITE_FULL as a typed `diskFull` error; any other error unchanged.
    static func mapped(_ error: any Error) -> any Error {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
            return StorageError(.diskFull, "the disk is full", underlying: error)
        }
        return error
    }
}
