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
        let upsert: String
        let select: String
        let delete: String
        let insert: String
        let update: String

        init(table: String, keys: [String], counters: [String]) {
            self.counters = counters
            let columns = (keys + counters).joined(separator: ", ")
            let marks = Array(repeating: "?", count: keys.count + counters.count).joined(separator: ", ")
            let add = counters.map { "\($0) = \($0) + excluded.\($0)" }.joined(separator: ", ")
            let match = keys.map { "\($0) = ?" }.joined(separator: " AND ")
            upsert = """
                INSERT INTO \(table) (\(columns)) VALUES (\(marks))
                ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(add) RETURNING \(counters.joined(separator: ", "))
                """
            select = "SELECT \(counters.joined(separator: ", ")) FROM \(table) WHERE \(match)"
            delete = "DELETE FROM \(table) WHERE \(match)"
            insert = "INSERT INTO \(table) (\(columns)) VALUES (\(marks))"
            update = "UPDATE \(table) SET \(counters.map { "\($0) = ?" }.joined(separator: ", ")) WHERE \(match)"
        }
    }

    /// Adds `by` to `counters` of the row with `keys` = `values`, inserting or deleting it as needed.
    ///
    /// - Returns: (change of "row exists" as -1/0/1, change of "second counter > 0" as -1/0/1 — 0 when there is
    ///   only one counter). With a single counter whose value crosses 1→2 the caller can read it from
    ///   `bumpReturningCount`.
    @discardableResult
    static func bump(table: String, keys: [String], values: [any DatabaseValueConvertible], counters: [String], by: [Int],
                     _ db: Database) throws -> (Int, Int) {
        try bump(Shape(table: table, keys: keys, counters: counters), values: values, by: by, db)
    }

    /// `bump` on a shape made once.
    @discardableResult
    static func bump(_ shape: Shape, values: [any DatabaseValueConvertible], by: [Int], _ db: Database) throws -> (Int, Int) {
        let (before, after) = try bumpValues(shape, values: values, by: by, db)
        let deltas = CounterDeltas.row(before: before, after: after)
        return (deltas.exists, deltas.flagged)
    }

    /// Like `bump`, returning the counters before and after.
    static func bumpValues(table: String, keys: [String], values: [any DatabaseValueConvertible], counters: [String], by: [Int],
                           _ db: Database) throws -> (before: [Int], after: [Int]) {
        try bumpValues(Shape(table: table, keys: keys, counters: counters), values: values, by: by, db)
    }

    /// `bumpValues` on a shape made once.
    static func bumpValues(_ shape: Shape, values: [any DatabaseValueConvertible], by: [Int], _ db: Database) throws
        -> (before: [Int], after: [Int])
    {
        let counters = shape.counters
        if by[0] > 0 && by.allSatisfy({ $0 >= 0 }) {
            // Adding (the common case): one upsert that returns the new counters.
            let row = try Row.fetchOne(
                db.cachedStatement(sql: shape.upsert),
                arguments: StatementArguments(values + by.map { $0 as any DatabaseValueConvertible }))
            let after = counters.indices.map { index -> Int in row.map { $0[index] as Int } ?? by[index] }
            return (zip(after, by).map { max(0, $0 - $1) }, after)
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
