import GRDB

/// A row of counters keyed by some columns, where the first counter says whether the row exists at all
/// (a user's events or sessions). Used by every "distinct users" rollup: the returned deltas say whether the
/// key appeared or disappeared, and whether the second counter became or stopped being non-zero.
enum CountedRow {
    /// Adds `by` to `counters` of the row with `keys` = `values`, inserting or deleting it as needed.
    ///
    /// - Returns: (change of "row exists" as -1/0/1, change of "second counter > 0" as -1/0/1 — 0 when there is
    ///   only one counter). With a single counter whose value crosses 1→2 the caller can read it from
    ///   `bumpReturningCount`.
    @discardableResult
    static func bump(table: String, keys: [String], values: [any DatabaseValueConvertible], counters: [String], by: [Int],
                     _ db: Database) throws -> (Int, Int) {
        let (before, after) = try bumpValues(table: table, keys: keys, values: values, counters: counters, by: by, db)
        let exists = (after[0] > 0 ? 1 : 0) - (before[0] > 0 ? 1 : 0)
        guard counters.count > 1 else { return (exists, 0) }
        let flagged = (after[0] > 0 && after[1] > 0 ? 1 : 0) - (before[0] > 0 && before[1] > 0 ? 1 : 0)
        return (exists, flagged)
    }

    /// Like `bump`, returning the counters before and after.
    static func bumpValues(table: String, keys: [String], values: [any DatabaseValueConvertible], counters: [String], by: [Int],
                           _ db: Database) throws -> (before: [Int], after: [Int]) {
        if by[0] > 0 && by.allSatisfy({ $0 >= 0 }) {
            // Adding (the common case): one upsert that returns the new counters.
            let columns = (keys + counters).joined(separator: ", ")
            let marks = Array(repeating: "?", count: keys.count + counters.count).joined(separator: ", ")
            let set = counters.map { "\($0) = \($0) + excluded.\($0)" }.joined(separator: ", ")
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: """
                        INSERT INTO \(table) (\(columns)) VALUES (\(marks))
                        ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(set) RETURNING \(counters.joined(separator: ", "))
                        """),
                arguments: StatementArguments(values + by.map { $0 as any DatabaseValueConvertible }))
            let after = counters.indices.map { index -> Int in row.map { $0[index] as Int } ?? by[index] }
            return (zip(after, by).map { max(0, $0 - $1) }, after)
        }
        let match = keys.map { "\($0) = ?" }.joined(separator: " AND ")
        let key = StatementArguments(values)
        let current = try Row.fetchOne(
            db.cachedStatement(sql: "SELECT \(counters.joined(separator: ", ")) FROM \(table) WHERE \(match)"), arguments: key)
        let before = counters.indices.map { index -> Int in current.map { row in row[index] as Int } ?? 0 }
        let after = counters.indices.map { max(0, before[$0] + by[$0]) }
        if after[0] <= 0 {
            if current != nil {
                try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(match)").execute(arguments: key)
            }
        } else if current == nil {
            let columns = (keys + counters).joined(separator: ", ")
            let marks = Array(repeating: "?", count: keys.count + counters.count).joined(separator: ", ")
            try db.cachedStatement(sql: "INSERT INTO \(table) (\(columns)) VALUES (\(marks))")
                .execute(arguments: StatementArguments(values + after.map { $0 as any DatabaseValueConvertible }))
        } else {
            let set = counters.map { "\($0) = ?" }.joined(separator: ", ")
            try db.cachedStatement(sql: "UPDATE \(table) SET \(set) WHERE \(match)")
                .execute(arguments: StatementArguments(after.map { $0 as any DatabaseValueConvertible } + values))
        }
        return (before, after)
    }
}
