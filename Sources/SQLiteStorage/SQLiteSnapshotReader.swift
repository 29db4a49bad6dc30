import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The database of a data folder as it was at one moment, read table by table to copy it elsewhere (`faultline
/// migrate`, module StoreMigration).
///
/// Every read goes through one SQLite read transaction, opened when the reader is made and held until `close`: in WAL
/// mode that is a snapshot, so the reads agree with each other (an issue's rollups with its reports, a report with
/// its payload) even while a server still writes to the file. Its cost: the WAL cannot be checkpointed past the
/// snapshot while it is open, so a running server's WAL grows until the copy ends.
///
/// The SQL comes from the caller, which knows both schemas; values come back as `TableValue`s, SQLite's own storage
/// classes, untouched.
public final class SQLiteSnapshotReader: Sendable {
    let snapshot: DatabaseSnapshot

    /// Opens the snapshot of `database` (now).
    public init(database: SQLiteEngine) throws {
        snapshot = try database.pool.makeSnapshot()
    }

    /// Ends the read transaction.
    public func close() throws {
        try snapshot.close()
    }

    /// Every table (not SQLite's own `sqlite_…` ones, virtual tables included) with its columns and primary key.
    public func tables() async throws -> [String: SQLiteTableInfo] {
        try await snapshot.read { db in
            var tables: [String: SQLiteTableInfo] = [:]
            let names = try String.fetchAll(
                db,
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
            for name in names {
                let columns = try Row.fetchAll(
                    db, sql: "SELECT name, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
                tables[name] = SQLiteTableInfo(
                    columns: columns.map { $0["name"] },
                    primaryKey: columns.filter { ($0["pk"] as Int64? ?? 0) > 0 }.sorted {
                        ($0["pk"] as Int64? ?? 0) < ($1["pk"] as Int64? ?? 0)
                    }
                    .map { $0["name"] })
            }
            return tables
        }
    }

    /// The rows of `sql` (a SELECT), each as its columns' values in order.
    public func rows(_ sql: String, arguments: [TableValue] = []) async throws -> [[TableValue]] {
        try await snapshot.read { db in
            let statement = try db.cachedStatement(sql: sql)
            try statement.setArguments(StatementArguments(arguments.map(\.databaseValue)))
            var rows: [[TableValue]] = []
            let cursor = try Row.fetchCursor(statement)
            while let row = try cursor.next() {
                rows.append(row.databaseValues.map(TableValue.init))
            }
            return rows
        }
    }
}

/// A SQLite table's columns in order, and the columns of its primary key in key order.
public struct SQLiteTableInfo: Sendable, Equatable {
    public var columns: [String]
    public var primaryKey: [String]

    public init(columns: [String], primaryKey: [String]) {
        self.columns = columns
        self.primaryKey = primaryKey
    }
}

extension TableValue {
    init(_ value: DatabaseValue) {
        switch value.storage {
        case .null: self = .null
        case .int64(let value): self = .integer(value)
        case .double(let value): self = .real(value)
        case .string(let value): self = .text(value)
        case .blob(let value): self = .blob([UInt8](value))
        }
    }

    var databaseValue: DatabaseValue {
        switch self {
        case .null: .null
        case .integer(let value): value.databaseValue
        case .real(let value): value.databaseValue
        case .text(let value): value.databaseValue
        case .blob(let value): Data(value).databaseValue
        }
    }
}
