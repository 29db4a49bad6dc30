import FaultlineCore
import GRDB

/// A row of counters keyed by some columns, where the first counter says whether the row exists at all
/// (a user's events or sessions). Used by every "distinct users" rollup: the returned deltas say whether the
/// key appeared or disappeared, and whether the second counter became or stopped being non-zero.
enum CountedRow {
    /// A table's key and counter columns with the statements `bumpValues` runs on it, written once: building them
    /// for every call (several joined strings, then hashing the SQL to find the cached statement) was a tenth of the
    /// worker's transaction (issue #13).
    struct Shape: Sendable {
        let counters: [String]
        let insertIfAbsent: String
        let select: String
        let delete: String
        let insert: String
        let update: String

        init(table: String, keys: [String], counters: [String]) {
            self.counters = counters
            let columns = (keys + counters).joined(separator: ", ")
            let marks = Array(repeating: "?", count: keys.count + counters.count).joined(separator: ", ")
            let match = keys.map { "\($0) = ?" }.joined(separator: " AND ")
            insertIfAbsent = "INSERT OR IGNORE INTO \(table) (\(columns)) VALUES (\(marks))"
            select = "SELECT \(counters.joined(separator: ", ")) FROM \(table) WHERE \(match)"
            delete = "DELETE FROM \(table) WHERE \(match)"
            insert = "INSERT INTO \(table) (\(columns)) VALUES (\(marks))"
            update = "UPDATE \(table) SET \(counters.map { "\($0) = ?" }.joined(separator: ", ")) WHERE \(match)"
        }
    }

    /// Adds `by` to the counters of `shape`'s row with keys `values`, inserting or deleting it as needed.
    ///
    /// - Returns: (change of "row exists" as -1/0/1, change of "second counter > 0" as -1/0/1 — 0 when there is
    ///   only one counter). A caller that needs more (a single counter crossing 1→2) reads `bumpValues`.
    @discardableResult
    static func bump(_ shape: Shape, values: [any DatabaseValueConvertible], by: [Int], _ db: Database) throws -> (
        Int, Int
    ) {
        let (before, after) = try bumpValues(shape, values: values, by: by, db)
        let deltas = CounterDeltas.row(before: before, after: after)
        return (deltas.exists, deltas.flagged)
    }

    /// Like `bump`, returning the counters before and after.
    static func bumpValues(_ shape: Shape, values: [any DatabaseValueConvertible], by: [Int], _ db: Database) throws
        -> (before: [Int], after: [Int])
    {
        let counters = shape.counters
        if by[0] > 0 && by.allSatisfy({ $0 >= 0 }) {
            // Adding a row that is not there yet (the common case: a user's first event in an issue, release or day) is
            // one insert that returns nothing. An upsert with `RETURNING` cost SQLite 3.40 an ephemeral table per
            // execution: ~2.5 times the insert's CPU, and an `UPDATE … RETURNING` ~4 times a select and an update
            // (measured with the C API on a copy of `issue_day_users`; issue #13). A row already there is read and
            // updated below. `OR IGNORE` ignores only the key's conflict here: the counters are positive, so no CHECK
            // fails, and foreign keys are not ignorable.
            try db.cachedStatement(sql: shape.insertIfAbsent)
                .execute(arguments: StatementArguments(values + by.map { $0 as any DatabaseValueConvertible }))
            if db.changesCount == 1 { return (Array(repeating: 0, count: counters.count), by) }
        }
        let key = StatementArguments(values)
        let current = try Row.fetchOne(db.cachedStatement(sql: shape.select), arguments: key)
        let before = counters.indices.map { index -> Int in current.map { row in row[index] as Int } ?? 0 }
        let after = counters.indices.map { max(0, before[$0] + by[$0]) }
        if after[0] <= 0 {
            if current != nil {
                try db.cachedStatement(sql: shape.delete).execute(arguments: key)
            }
        } else if current == nil {
            try db.cachedStatement(sql: shape.insert)
                .execute(arguments: StatementArguments(values + after.map { $0 as any DatabaseValueConvertible }))
        } else {
            try db.cachedStatement(sql: shape.update)
                .execute(arguments: StatementArguments(after.map { $0 as any DatabaseValueConvertible } + values))
        }
        return (before, after)
    }
}
