import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The shared statements of FaultlineCore (`IssueSQL`, `ReportSQL`) run on PostgresNIO: their values as bindings,
// PostgresNIO's rows as `SQLRow`s.

extension PostgresQuery {
    /// `statement`, its values bound to its placeholders `$1`, `$2`, … in order.
    init(_ statement: SQLStatement) {
        var binds = PostgresBindings(capacity: statement.values.count)
        for value in statement.values {
            switch value {
            case .integer(let integer): binds.append(integer)
            case .text(let text): binds.append(text)
            case .bool(let bool): binds.append(bool)
            }
        }
        self.init(unsafeSQL: statement.sql, binds: binds)
    }
}

/// A PostgresNIO row read by position.
struct PostgresRowCells: SQLRow {
    let cells: PostgresRandomAccessRow

    init(_ row: PostgresRow) {
        cells = row.makeRandomAccess()
    }

    init(_ cells: PostgresRandomAccessRow) {
        self.cells = cells
    }

    func integerOrNull(_ index: Int) throws -> Int64? { try cells[index].decode(Int64?.self) }
    func textOrNull(_ index: Int) throws -> String? { try cells[index].decode(String?.self) }
    func boolOrNull(_ index: Int) throws -> Bool? { try cells[index].decode(Bool?.self) }
    func bytesOrNull(_ index: Int) throws -> [UInt8]? { try cells[index].decode(Data?.self).map { Array($0) } }
}

extension PostgresConnection {
    /// The rows of `statement`, each mapped by `map` (rows it maps to nil are left out).
    func rows<Value>(_ statement: SQLStatement, logger: Logger, _ map: (PostgresRowCells) throws -> Value?) async throws
        -> [Value]
    {
        var values: [Value] = []
        for try await row in try await query(PostgresQuery(statement), logger: logger) {
            if let value = try map(PostgresRowCells(row)) { values.append(value) }
        }
        return values
    }
}

extension PostgresEngine {
    /// The rows of one statement, read on one connection, each mapped by `map` (rows it maps to nil are left out).
    func rows<Value: Sendable>(_ statement: SQLStatement, _ map: (PostgresRowCells) throws -> Value?) async throws
        -> [Value]
    {
        let logger = logger
        return try await read { connection in try await connection.rows(statement, logger: logger, map) }
    }
}
