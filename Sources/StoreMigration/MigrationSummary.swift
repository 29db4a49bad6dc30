import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a migrate stopped; when it got as far as counting, the counts (`counts`), so that the mismatch can be shown.
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// The counts of both sides, when the copy was done and they disagreed.
    public var counts: [TableCount]?

    init(_ message: String, counts: [TableCount]? = nil) {
        self.message = message
        self.counts = counts
    }

    public var description: String { message }
}

/// One line of the verification: a PostgreSQL table's rows after the copy, and the rows of the SQLite table it was
/// copied (or derived) from.
public struct TableCount: Sendable, Equatable {
    /// The PostgreSQL table.
    public var table: String
    /// The SQLite table counted against it (the same name, except for a derived table).
    public var source: String
    public var sqlite: Int64
    public var postgres: Int64

    public var matches: Bool { sqlite == postgres }
}

/// What one migrate copied. The rows are on PostgreSQL when `StoreMigrator.run` returns one.
public struct MigrationSummary: Sendable {
    /// Every table, in copy order, counted on both sides.
    public var counts: [TableCount]
    /// Debug-file blobs copied into the blob folder, found there already (an earlier run), and named by a row but
    /// absent from the data folder (such a row serves nothing on either engine).
    public var blobsCopied: Int
    public var blobsPresent: Int
    public var blobsMissing: [ContentHash]
    /// The migrate this one replaced (where it copied from, when), if the database held one.
    public var replaced: (source: String, at: Date)?

    /// Rows copied (derived ones not counted).
    public var rows: Int64 {
        counts.filter { $0.table == $0.source }.reduce(0) { $0 &+ $1.postgres }
    }
}

extension [TableCount] {
    /// The counts as a table for a terminal: one line per table, the differing ones marked.
    public var rendered: String {
        let names = map { $0.table == $0.source ? $0.table : "\($0.table) (from \($0.source))" }
        let width = Swift.max(5, names.map(\.count).max() ?? 0)
        func pad(_ text: String, _ width: Int, left: Bool = false) -> String {
            let space = String(repeating: " ", count: Swift.max(0, width - text.count))
            return left ? text + space : space + text
        }
        var lines = [pad("table", width, left: true) + "  " + pad("SQLite", 12) + "  " + pad("PostgreSQL", 12)]
        for (name, count) in zip(names, self) {
            lines.append(
                pad(name, width, left: true) + "  " + pad(String(count.sqlite), 12) + "  "
                    + pad(String(count.postgres), 12)
                    + (count.matches ? "" : "  differs"))
        }
        return lines.joined(separator: "\n")
    }
}
