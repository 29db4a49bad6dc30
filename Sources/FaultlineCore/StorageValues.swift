#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Errors of the stores (either engine): a code that can grow, a message, and the underlying error.
public struct StorageError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public init(name: String) { self.name = name }
        public var description: String { name }
        public static let openFailed = Code(name: "open_failed")
        /// The database was migrated by a newer faultline: this one does not know its schema.
        public static let newerSchema = Code(name: "newer_schema")
        public static let conflict = Code(name: "conflict")
        /// The disk is full (SQLite's SQLITE_FULL, PostgreSQL's disk_full, or ENOSPC from a file write).
        public static let diskFull = Code(name: "disk_full")
        /// A stored value that the other engine's column cannot hold (`faultline migrate`: a SQLite integer out of a
        /// PostgreSQL `integer`'s range, a flag that is neither 0 nor 1).
        public static let invalidValue = Code(name: "invalid_value")
        /// The database cannot be reached now (PostgreSQL stopped, restarting or cut off, or no answer within the
        /// deadline): nothing is known to be stored, and the same request may be sent again later (503 with
        /// `Retry-After`; reports and session updates are idempotent, so a retry of one that did commit counts once).
        public static let unavailable = Code(name: "unavailable")
    }
    public var code: Code
    public var message: String
    public var underlying: (any Error)?
    public init(_ code: Code, _ message: String, underlying: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }
    public var description: String {
        if let underlying { return "\(code): \(message) (\(underlying))" }
        return "\(code): \(message)"
    }
}

/// Milliseconds since 1970: how every time is stored (integers sort, compare and index exactly).
public enum Millis {
    /// Whole milliseconds, rounded down like `Timestamps.formatISO8601`; clamped so that no date, however
    /// absurd, can trap the conversion.
    public static func from(_ date: Date) -> Int64 {
        let ms = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard ms.isFinite else { return 0 }
        return Int64(max(-9.0e15, min(9.0e15, ms)))
    }
    public static func date(_ ms: Int64) -> Date { Date(timeIntervalSince1970: Double(ms) / 1000) }
}

/// A list of field names or patterns as a column stores it: a JSON array of strings (`[]` when empty). Both
/// engines store project settings this way, so `faultline migrate` copies them as text.
public enum StoredList {
    public static func encode(_ list: [String]) -> String {
        (try? JSONEncoder().encode(list)).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    }

    /// The list in `text`; empty when there is none or it is not a JSON array of strings.
    public static func decode(_ text: String?) -> [String] {
        guard let text, let list = try? JSONDecoder().decode([String].self, from: Data(text.utf8)) else { return [] }
        return list
    }
}

/// Client text as both engines store it: U+0000 replaced by U+FFFD. The parsers do this already (docs/protocol.md
/// §2.6); the stores do it again for any other caller, because SQLite cuts bound text at U+0000 and PostgreSQL's
/// `text` refuses it, and a label must not cut or fail the write it belongs to.
public enum StoredText {
    public static func clean(_ text: String) -> String {
        guard text.utf8.contains(0) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { $0 == "\u{0}" ? "\u{FFFD}" : $0 }))
    }

    public static func clean(_ text: String?) -> String? { text.map(clean) }

    /// `update` with its text fields cleaned.
    public static func clean(_ update: SessionUpdate) -> SessionUpdate {
        var update = update
        update.distinctID = clean(update.distinctID)
        update.release = clean(update.release)
        update.environment = clean(update.environment)
        return update
    }
}

/// One column's value as a row of either engine holds it, for copying rows from one engine to the other (`faultline
/// migrate`): SQLite's five storage classes, which PostgreSQL's typed columns are read from and written as.
public enum TableValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}
