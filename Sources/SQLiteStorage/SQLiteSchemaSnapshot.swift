import FaultlineCore
import GRDB

/// A database at an earlier schema version, for the upgrade snapshots (`tools/upgrade/make-snapshots`,
/// `UpgradeSnapshotTests`): made by migrating an empty file up to that version, filled with SQL valid at that version,
/// and written out as a SQL text that loads it again.
///
/// Only tools and tests make these: a server never opens a database at anything but the newest schema.
public final class SQLiteSchemaSnapshot: Sendable {
    let queue: DatabaseQueue

    /// A new database at `path` (which must not exist) migrated up to and including `version`.
    /// - Throws: `StorageError(.conflict)` when `version` is no migration of this binary or the file exists.
    public init(path: String, upTo version: String) throws {
        guard SQLiteMigrations.migrator.migrations.contains(version) else {
            throw StorageError(.conflict, "no SQLite migration is named \(version)")
        }
        var config = Configuration()
        config.foreignKeysEnabled = true
        queue = try DatabaseQueue(path: path, configuration: config)
        guard try queue.read({ db in try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0 }) == 0 else {
            throw StorageError(.conflict, "\(path) is not empty")
        }
        try SQLiteMigrations.migrator.migrate(queue, upTo: version)
    }

    /// The migrations applied, oldest first.
    public var applied: [String] {
        get throws { try queue.read { db in try SQLiteMigrations.migrator.appliedMigrations(db) } }
    }

    /// Migrates on, with the rows added so far, up to and including the later `version`: the data passes through
    /// those migrations as an upgraded install's did (a snapshot of `v27-one-release` or later holds its releases as
    /// that migration rewrote them).
    /// - Throws: `StorageError(.conflict)` when `version` is no migration of this binary.
    public func migrate(upTo version: String) throws {
        guard SQLiteMigrations.migrator.migrations.contains(version) else {
            throw StorageError(.conflict, "no SQLite migration is named \(version)")
        }
        try SQLiteMigrations.migrator.migrate(queue, upTo: version)
    }

    /// The columns of `table` in order, or nil when the table does not exist at this version.
    public func columns(_ table: String) throws -> [String]? {
        try queue.read { db in
            guard try db.tableExists(table) else { return nil }
            return try db.columns(in: table).map(\.name)
        }
    }

    /// The primary key columns of `table` (`rowid` for a table without one).
    public func primaryKey(_ table: String) throws -> [String] {
        try queue.read { db in try db.primaryKey(table).columns }
    }

    /// Runs `sql` (statements that add rows) in one transaction.
    public func execute(_ sql: String) throws {
        try queue.write { db in try db.execute(sql: sql) }
    }

    public func close() throws { try queue.close() }

    /// The database as SQL text that makes it again in an empty file: the tables as SQLite stored their `CREATE`
    /// statements, then their rows in key order, then indexes and triggers (after the rows, so a trigger does not fire
    /// for them), then each full-text index rebuilt from its content table. Deterministic: the same database gives
    /// the same text. `grdb_migrations` is a table like the others, so the text carries its schema version.
    public func dump(header: String) throws -> String {
        try queue.read { db in
            let schema = try Row.fetchAll(
                db,
                sql: """
                    SELECT type, name, sql FROM sqlite_master
                    WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid
                    """)
            let virtualTables = schema.filter { ($0["sql"] as String).hasPrefix("CREATE VIRTUAL TABLE") }
                .map { $0["name"] as String }
            // FTS5 keeps its index in shadow tables named after it: they are made by its CREATE and filled by 'rebuild'.
            let shadow = { (name: String) in virtualTables.contains { name.hasPrefix($0 + "_") } }
            var out = [header, "PRAGMA foreign_keys = OFF;", "BEGIN;"]
            let tables = schema.filter { $0["type"] as String == "table" && !shadow($0["name"]) }
            for table in tables { out.append((table["sql"] as String) + ";") }
            for table in tables where !virtualTables.contains(table["name"]) {
                let name: String = table["name"]
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(name)\"") {
                    let values = row.databaseValues.map(Self.literal).joined(separator: ", ")
                    out.append("INSERT INTO \"\(name)\" VALUES (\(values));")
                }
            }
            for entry in schema where ["index", "trigger", "view"].contains(entry["type"] as String) {
                out.append((entry["sql"] as String) + ";")
            }
            for name in virtualTables { out.append("INSERT INTO \"\(name)\" (\"\(name)\") VALUES ('rebuild');") }
            out.append("COMMIT;")
            return out.joined(separator: "\n") + "\n"
        }
    }

    /// A value as a SQL literal that reads back as the same value and type.
    static func literal(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let int): String(int)
        case .double(let double): double.isFinite ? "\(double)" : "NULL"
        case .string(let text): "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data): "X'" + Hex.encode(Array(data)) + "'"
        }
    }

    /// Runs `sql` on the database at `path` in one transaction (the benchmark fills a database at the current schema).
    public static func execute(_ sql: String, at path: String) throws {
        var config = Configuration()
        config.foreignKeysEnabled = true
        let queue = try DatabaseQueue(path: path, configuration: config)
        try queue.write { db in try db.execute(sql: sql) }
        try queue.close()
    }

    /// Loads a `dump` into a new database at `path` (foreign keys off while it loads, as in the dump), in WAL mode as
    /// a server leaves its database.
    public static func load(_ sql: String, into path: String) throws {
        let queue = try DatabaseQueue(path: path)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: sql)
            try db.execute(sql: "PRAGMA journal_mode = WAL")
        }
        try queue.close()
    }
}
