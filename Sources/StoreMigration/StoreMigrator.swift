import DataFolder
import FaultlineCore
import PostgresStorage
import SQLiteStorage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Copies a SQLite installation (the database of a data folder and its debug files) into a PostgreSQL database and the
/// blob folder its nodes share: `faultline migrate` (docs/scaling.md, "Moving an existing install").
///
/// - **Consistent.** The source is read through one SQLite read transaction (`SQLiteSnapshotReader`), so the copy is
///   the database of one moment even if a server still writes to it.
/// - **All or nothing.** The target is written in one PostgreSQL transaction (`PostgresMigrationTarget.load`): tables
///   are emptied, filled, counted and committed together; any failure, a count that differs included, rolls it all
///   back. Debug-file blobs are files, copied before the rows: a failed run may leave blobs no row names, which the
///   next run finds in place.
/// - **Replaces only its own copy.** A database holding rows that no migrate wrote (nodes have ingested into it) is
///   refused before anything is written; a database an earlier migrate filled, and no node changed since, is emptied
///   and filled again.
/// - **Ids kept.** Projects, reports, issues, alerts keep their ids, so cursors, links and webhook payloads stay
///   valid; the sequences move past them.
/// - **Bounded memory.** Each table is read in key order, a batch at a time (batches sized to a few MiB), and sent
///   through one `COPY … FROM STDIN` per table.
public struct StoreMigrator: Sendable {
    let source: SQLiteEngine
    let sourceName: String
    let debugFiles: String
    let target: PostgresEngine
    let blobs: String
    let hasher: any ContentHashing

    /// - Parameters:
    ///   - source: the data folder's database.
    ///   - sourceName: how the marker names the source (the data folder's path).
    ///   - debugFiles: the data folder's `debug-files` folder (the blobs are read from `debugFiles/blobs/`).
    ///   - target: the PostgreSQL database (migrated).
    ///   - blobs: the folder every node shares (`--blobs`); debug files go to `blobs/debug-files`, where
    ///     `PostgresDebugFileStore` reads them.
    ///   - hasher: SHA-256, to check every copied blob.
    public init(
        source: SQLiteEngine, sourceName: String, debugFiles: String, target: PostgresEngine, blobs: String,
        hasher: any ContentHashing
    ) {
        self.source = source
        self.sourceName = sourceName
        self.debugFiles = debugFiles
        self.target = target
        self.blobs = blobs
        self.hasher = hasher
    }

    /// Rows per batch when a table's copy starts, and the bounds of the batches after (sized by the bytes read).
    static let firstBatch = 64
    static let batchRows = 16...20_000
    static let batchBytes = 4 << 20

    /// Copies everything, verifies the counts and commits; throws `MigrationError` (or the database's error) and
    /// leaves the target as it was when anything fails.
    public func run(now: Date, progress: @Sendable (MigrationProgress) -> Void = { _ in }) async throws
        -> MigrationSummary
    {
        let reader = try SQLiteSnapshotReader(database: source)
        defer { try? reader.close() }
        let sourceTables = try await reader.tables()
        return try await PostgresMigrationTarget(database: target).load { load in
            let targetTables = try await load.tables()
            let plan = try CopyPlan.make(source: sourceTables, target: targetTables)
            let foreign = try await load.foreignTables(among: Array(targetTables.keys))
            guard foreign.isEmpty else {
                throw MigrationError(
                    "the PostgreSQL database holds data that faultline migrate did not write (in \(foreign.joined(separator: ", "))): "
                        + "nodes have used it. Nothing was written; migrate into an empty database")
            }
            let replaced = try await load.lastMigrate().map { (source: $0.source, at: Millis.date($0.migratedAt)) }
            try await load.clear(Array(targetTables.keys))

            let blobResult = try await copyBlobs(reader, progress)
            try await load.createPartitions(weeks: try await weeks(reader, now: now))
            for table in plan.tables {
                try await copy(table, reader, load, progress)
            }
            _ = try await load.deriveEventIDs()
            try await load.moveSequencesPastCopiedIDs()
            try await load.analyze(Array(targetTables.keys))

            progress(.verifying)
            var counts: [TableCount] = []
            for (table, sourceTable) in plan.tables.map({ ($0.name, $0.name) })
                + CopyPlan.derived.sorted(by: { $0.key < $1.key })
            {
                counts.append(
                    TableCount(
                        table: table, source: sourceTable, sqlite: try await count(sourceTable, reader),
                        postgres: try await load.count(table)))
            }
            let differing = counts.filter { !$0.matches }
            guard differing.isEmpty else {
                throw MigrationError(
                    "the copy does not hold what the SQLite database holds (\(differing.map(\.table).joined(separator: ", "))): "
                        + "nothing was committed", counts: counts)
            }
            try await load.mark(source: sourceName, at: now, summary: counts.rendered)
            return MigrationSummary(
                counts: counts, blobsCopied: blobResult.copied, blobsPresent: blobResult.present,
                blobsMissing: blobResult.missing,
                replaced: replaced)
        }
    }

    /// Copies one table, a batch at a time in key order, in one COPY.
    func copy(
        _ table: CopyPlan.Table, _ reader: SQLiteSnapshotReader, _ load: PostgresBulkLoad,
        _ progress: @Sendable (MigrationProgress) -> Void
    ) async throws {
        let total = try await count(table.name, reader)
        progress(.table(table.name, rows: 0, of: total))
        var after: [TableValue]?
        var limit = Self.firstBatch
        var read: Int64 = 0
        let positions = table.keyPositions
        do {
            _ = try await load.copy(into: table.name, columns: table.columns) { () async throws -> [[TableValue]]? in
                let sql = table.batchSQL(after: after != nil)
                let rows = try await reader.rows(sql, arguments: (after ?? []) + [.integer(Int64(limit))])
                guard let last = rows.last else { return nil }
                after = positions.map { last[$0] }
                read &+= Int64(rows.count)
                limit = Self.nextLimit(rows)
                progress(.table(table.name, rows: read, of: total))
                guard let transform = table.transform else { return rows }
                return try rows.map(transform)
            }
        } catch let error as MigrationError {
            throw error
        } catch {
            throw MigrationError("copying \(table.name): \(PostgresMigrationTarget.describe(error))")
        }
    }

    /// The next batch's rows: as many as make about `batchBytes`, judging by this batch.
    static func nextLimit(_ rows: [[TableValue]]) -> Int {
        var bytes = 0
        for row in rows {
            for value in row {
                switch value {
                case .text(let text): bytes &+= text.utf8.count
                case .blob(let blob): bytes &+= blob.count
                default: bytes &+= 8
                }
            }
        }
        let perRow = max(1, bytes / max(1, rows.count))
        return min(max(batchBytes / perRow, batchRows.lowerBound), batchRows.upperBound)
    }

    /// The rows of a SQLite table.
    func count(_ table: String, _ reader: SQLiteSnapshotReader) async throws -> Int64 {
        guard case .integer(let count) = try await reader.rows("SELECT count(*) FROM \"\(table)\"").first?.first else {
            return 0
        }
        return count
    }

    /// The weeks (partition starts) the copied rows' `received_at` fall in, from 1970 to a year after `now`: each gets
    /// its partitions before the rows arrive. Rows outside that range (a clock set far off) go to the DEFAULT
    /// partitions, as they would on ingest.
    func weeks(_ reader: SQLiteSnapshotReader, now: Date) async throws -> Set<Int64> {
        let day: Int64 = 86_400_000
        let lastDay = Millis.from(now.addingTimeInterval(366 * 86_400)) / day
        var weeks = Set<Int64>()
        for table in ["payloads", "reports", "attachments"] {
            for row in try await reader.rows("SELECT DISTINCT received_at / \(day) FROM \"\(table)\"") {
                guard case .integer(let days) = row.first, (0...lastDay).contains(days) else { continue }
                weeks.insert(PostgresBulkLoad.weekStart(days * day))
            }
        }
        return weeks
    }

    /// Copies every blob a `debug_files` row names into `blobs/debug-files`, checking each against its hash.
    func copyBlobs(_ reader: SQLiteSnapshotReader, _ progress: @Sendable (MigrationProgress) -> Void) async throws
        -> (copied: Int, present: Int, missing: [ContentHash])
    {
        let folder = try BlobFolder(root: blobs + "/debug-files")
        let rows = try await reader.rows(
            "SELECT DISTINCT blob_sha256 FROM debug_files WHERE blob_sha256 IS NOT NULL ORDER BY blob_sha256")
        var result: (copied: Int, present: Int, missing: [ContentHash]) = (0, 0, [])
        for (index, row) in rows.enumerated() {
            guard case .text(let text) = row.first, let hash = ContentHash(text) else {
                throw MigrationError("debug_files names a blob that is no SHA-256: \(row.first.map { "\($0)" } ?? "")")
            }
            switch try folder.copyIn(from: BlobFolder.path(of: hash, in: debugFiles), hash: hash, hasher: hasher) {
            case .copied: result.copied += 1
            case .present: result.present += 1
            case .missing: result.missing.append(hash)
            }
            progress(.blobs(done: index + 1, of: rows.count))
        }
        return result
    }
}

/// How far a migrate is, for a progress display.
public enum MigrationProgress: Sendable, Equatable {
    /// Debug-file blobs copied (or found in place) so far.
    case blobs(done: Int, of: Int)
    /// Rows of a table read and sent so far.
    case table(String, rows: Int64, of: Int64)
    /// Counting both sides.
    case verifying
}

extension StoreMigrator {
    /// Opens the data folder's database and the PostgreSQL database at `url` (migrating its schema), runs the migrate,
    /// and closes both: what `faultline migrate` does.
    /// - Parameters:
    ///   - password: the PostgreSQL password when the URL has none (`FAULTLINE_DATABASE_PASSWORD`).
    ///   - identities: keys the per-user rollups (HMAC-SHA-256), for the upgrade of a database whose rollups still hold
    ///     user ids (`v24-hashed-rollup-users`). The rows are copied as they are: the projects' identity keys go with
    ///     them, so PostgreSQL goes on counting each user under the same key.
    public static func migrate(
        dataFolder: String, url: String, password: String?, blobs: String, hasher: any ContentHashing,
        identities: IdentityHashers? = nil, now: Date,
        progress: @Sendable (MigrationProgress) -> Void = { _ in }
    ) async throws -> MigrationSummary {
        let path = dataFolder + "/faultline.sqlite"
        guard FileManager.default.fileExists(atPath: path) else {
            throw MigrationError(
                "no database at \(path): --from names the data folder of a server (the folder holding faultline.sqlite)"
            )
        }
        let source = try SQLiteEngine(path: path, identities: identities)
        defer { try? source.close() }
        let target: PostgresEngine
        do {
            target = try await PostgresMigrationTarget.open(url: url, password: password, identities: identities)
        } catch let error as StorageError {
            throw MigrationError(error.message)
        }
        do {
            let summary = try await StoreMigrator(
                source: source, sourceName: dataFolder, debugFiles: dataFolder + "/debug-files", target: target,
                blobs: blobs,
                hasher: hasher
            ).run(now: now, progress: progress)
            await target.close()
            return summary
        } catch let error as MigrationError {
            await target.close()
            throw error
        } catch {
            await target.close()
            throw MigrationError(
                "the migrate stopped, nothing was committed: \(PostgresMigrationTarget.describe(error))")
        }
    }
}
