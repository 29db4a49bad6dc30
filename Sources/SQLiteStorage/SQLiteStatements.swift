import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The shared statements of FaultlineCore (`IssueSQL`, `ReportSQL`) run on GRDB: their values as statement arguments,
// GRDB's rows as `SQLRow`s.

extension StatementArguments {
    /// The values of `statement`, bound to its placeholders `?1`, `?2`, … in order.
    init(_ statement: SQLStatement) {
        self.init(
            statement.values.map { value -> DatabaseValue in
                switch value {
                case .integer(let integer): integer.databaseValue
                case .text(let text): text.databaseValue
                case .bool(let bool): bool.databaseValue
                }
            })
    }
}

/// A GRDB row read by position.
struct SQLiteRow: SQLRow {
    let row: Row

    init(_ row: Row) {
        self.row = row
    }

    func integerOrNull(_ index: Int) throws -> Int64? { try row.decode(Int64?.self, atIndex: index) }
    func textOrNull(_ index: Int) throws -> String? { try row.decode(String?.self, atIndex: index) }
    func boolOrNull(_ index: Int) throws -> Bool? { try row.decode(Bool?.self, atIndex: index) }
    func bytesOrNull(_ index: Int) throws -> [UInt8]? { try row.decode(Data?.self, atIndex: index).map { Array($0) } }
}

extension Database {
    /// The rows of `statement`, each mapped by `map` (rows it maps to nil are left out).
    func rows<Value>(_ statement: SQLStatement, _ map: (SQLiteRow) throws -> Value?) throws -> [Value] {
        let cursor = try Row.fetchCursor(self, sql: statement.sql, arguments: StatementArguments(statement))
        var values: [Value] = []
        while let row = try cursor.next() {
            if let value = try map(SQLiteRow(row)) { values.append(value) }
        }
        return values
    }
}

extension SQLiteEngine {
    /// The rows of one statement, read in a read transaction, each mapped by `map` (rows it maps to nil are left out).
    func rows<Value: Sendable>(_ statement: SQLStatement, _ map: @escaping @Sendable (SQLiteRow) throws -> Value?)
        async throws
        -> [Value]
    {
        try await pool.read { db in try db.rows(statement, map) }
    }
}
