// The SQL both storage engines run where they agree, written once in FaultlineCore (`IssueSQL`, `ReportSQL`,
// `HealthSQL`) and run by each engine with its own library: GRDB on SQLite, PostgresNIO on PostgreSQL.
//
// Three small pieces make that possible without a query builder:
// - ``SQLDialect`` spells the few things the engines spell differently (placeholders, a text's byte length, an
//   order of text, an index hint), so a shared statement is rendered for one engine when it is made;
// - ``SQLBinds`` collects a statement's values as its text is written, and hands out their placeholders;
// - ``SQLRow`` is a row read by position, which GRDB's and PostgresNIO's rows adapt to, so a row mapping
//   (`IssueSQL.summary`, `ReportSQL.summary`) is written once too.
//
// Values are always bound, never spliced into the text: nothing a user typed becomes SQL.

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The storage engine a statement is written for.
public enum SQLDialect: Sendable, Equatable {
    case sqlite
    case postgres

    /// The placeholder of the `number`th bound value (from 1): `?1` on SQLite, `$1` on PostgreSQL.
    public func placeholder(_ number: Int) -> String {
        switch self {
        case .sqlite: "?\(number)"
        case .postgres: "$\(number)"
        }
    }

    /// The length of the text `expression` in UTF-8 bytes (NULL stays NULL).
    public func byteLength(_ expression: String) -> String {
        switch self {
        case .sqlite: "length(CAST(\(expression) AS BLOB))"
        case .postgres: "octet_length(\(expression))"
        }
    }

    /// `column` in an `ORDER BY`, ordered by its bytes: SQLite's own order of text; PostgreSQL's collation `C`.
    public func bytewise(_ column: String) -> String {
        switch self {
        case .sqlite: column
        case .postgres: "\(column) COLLATE \"C\""
        }
    }

    /// `column` as a predicate's operand that must not pick an index: SQLite's unary `+` (its documented way to keep
    /// the planner off an index); PostgreSQL's planner needs no such hint.
    public func unindexed(_ column: String) -> String {
        switch self {
        case .sqlite: "+\(column)"
        case .postgres: column
        }
    }
}

/// A value bound to a placeholder. Booleans are stored as 0 and 1 on SQLite, as `boolean` on PostgreSQL.
public enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case bool(Bool)
}

/// The values of a statement being written, in placeholder order.
///
/// Write the text first, then make the statement of it and `values`
/// (`let sql = "… \(binds.bind(x))"; return SQLStatement(sql: sql, values: binds.values)`): values read before the
/// text is written miss its binds.
public struct SQLBinds: Sendable {
    public let dialect: SQLDialect
    public private(set) var values: [SQLValue] = []

    public init(_ dialect: SQLDialect) {
        self.dialect = dialect
    }

    /// Binds `value`; returns its placeholder, to write into the statement's text.
    public mutating func bind(_ value: SQLValue) -> String {
        values.append(value)
        return dialect.placeholder(values.count)
    }

    public mutating func bind(_ value: Int64) -> String { bind(.integer(value)) }
    public mutating func bind(_ value: Int) -> String { bind(.integer(Int64(value))) }
    public mutating func bind(_ value: String) -> String { bind(.text(value)) }
    public mutating func bind(_ value: Bool) -> String { bind(.bool(value)) }

    /// Placeholders of `integers` (at least one: `IN ()` is not SQL), comma-separated, for an `IN (…)` list.
    public mutating func bind(list integers: [Int64]) -> String {
        integers.map { bind($0) }.joined(separator: ", ")
    }
}

/// SQL text for one engine and the values of its placeholders.
public struct SQLStatement: Sendable, Equatable {
    public var sql: String
    public var values: [SQLValue]

    public init(sql: String, values: [SQLValue] = []) {
        self.sql = sql
        self.values = values
    }
}

/// One row of a select, read by position (from 0): what the shared row mappings need of either engine's rows.
///
/// An engine answers nil for SQL NULL and throws when a column holds another type than asked for.
public protocol SQLRow {
    func integerOrNull(_ index: Int) throws -> Int64?
    func textOrNull(_ index: Int) throws -> String?
    func boolOrNull(_ index: Int) throws -> Bool?
    func bytesOrNull(_ index: Int) throws -> [UInt8]?
}

/// A column of a row that a mapping cannot read: NULL where a value must be, or a number out of range.
public struct SQLRowError: Error, Equatable, CustomStringConvertible {
    /// The column's position in the row (from 0).
    public var column: Int
    public var message: String

    public init(column: Int, message: String) {
        self.column = column
        self.message = message
    }

    public var description: String { "column \(column): \(message)" }
}

extension SQLRow {
    public func integer(_ index: Int) throws -> Int64 {
        try required(integerOrNull(index), index)
    }

    /// A count or a size: an integer that fits an `Int`.
    public func int(_ index: Int) throws -> Int {
        guard let value = Int(exactly: try integer(index)) else {
            throw SQLRowError(column: index, message: "out of range")
        }
        return value
    }

    public func text(_ index: Int) throws -> String {
        try required(textOrNull(index), index)
    }

    public func bool(_ index: Int) throws -> Bool {
        try required(boolOrNull(index), index)
    }

    public func bytes(_ index: Int) throws -> [UInt8] {
        try required(bytesOrNull(index), index)
    }

    /// A time stored as milliseconds since 1970 (`Millis`).
    public func date(_ index: Int) throws -> Date {
        Millis.date(try integer(index))
    }

    private func required<Value>(_ value: Value?, _ index: Int) throws -> Value {
        guard let value else { throw SQLRowError(column: index, message: "NULL") }
        return value
    }
}
