import FaultlineCore
import PostgresNIO

/// A row of counters keyed by some columns, where the first counter says whether the row exists at all — the
/// PostgreSQL twin of `CountedRow` (Sources/SQLiteStorage/Rollups): the "distinct users" rollups move by the deltas it
/// returns. Statements bind the key columns first (`$1…$k`), then the counters.
enum PostgresCountedRow {
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
            let marks = (1...(keys.count + counters.count)).map { "$\($0)" }.joined(separator: ", ")
            let add = counters.map { "\($0) = \(table).\($0) + excluded.\($0)" }.joined(separator: ", ")
            let match = keys.enumerated().map { "\($1) = $\($0 + 1)" }.joined(separator: " AND ")
            upsert = """
                INSERT INTO \(table) (\(columns)) VALUES (\(marks))
                ON CONFLICT (\(keys.joined(separator: ", "))) DO UPDATE SET \(add) RETURNING \(counters.joined(separator: ", "))
                """
            select = "SELECT \(counters.joined(separator: ", ")) FROM \(table) WHERE \(match) FOR UPDATE"
            delete = "DELETE FROM \(table) WHERE \(match)"
            insert = "INSERT INTO \(table) (\(columns)) VALUES (\(marks))"
            let set = counters.enumerated().map { "\($1) = $\(keys.count + $0 + 1)" }.joined(separator: ", ")
            update = "UPDATE \(table) SET \(set) WHERE \(match)"
        }
    }

    /// Adds `by` to the counters of the row whose keys are bound in `keys`, inserting or deleting it as needed.
    /// Returns (change of "row exists", change of "second counter > 0"), each -1, 0 or 1 (the second 0 with one counter).
    @discardableResult
    static func bump(
        _ shape: Shape, keys: PostgresBindings, by: [Int64], _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> (Int64, Int64)
    {
        let (before, after) = try await bumpValues(shape, keys: keys, by: by, connection, logger)
        let deltas = CounterDeltas.row(before: before, after: after)
        return (deltas.exists, deltas.flagged)
    }

    /// Like `bump`, returning the counters before and after.
    static func bumpValues(
        _ shape: Shape, keys: PostgresBindings, by: [Int64], _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> (before: [Int64], after: [Int64])
    {
        func with(_ counters: [Int64]) -> PostgresBindings {
            var binds = keys
            for counter in counters { binds.append(counter) }
            return binds
        }
        if by[0] > 0 && by.allSatisfy({ $0 >= 0 }) {
            // Adding (the common case): one upsert that returns the new counters.
            let after =
                try await counters(PostgresQuery(unsafeSQL: shape.upsert, binds: with(by)), shape, connection, logger)
                ?? by
            return (zip(after, by).map { max(0, $0 &- $1) }, after)
        }
        let current = try await counters(PostgresQuery(unsafeSQL: shape.select, binds: keys), shape, connection, logger)
        let before = current ?? Array(repeating: 0, count: shape.counters.count)
        let after = before.indices.map { max(0, before[$0] &+ by[$0]) }
        if after[0] <= 0 {
            if current != nil {
                try await connection.query(PostgresQuery(unsafeSQL: shape.delete, binds: keys), logger: logger)
            }
        } else if current == nil {
            try await connection.query(PostgresQuery(unsafeSQL: shape.insert, binds: with(after)), logger: logger)
        } else {
            try await connection.query(PostgresQuery(unsafeSQL: shape.update, binds: with(after)), logger: logger)
        }
        return (before, after)
    }

    /// The counters of the one row `query` returns; nil when it returns none.
    private static func counters(
        _ query: PostgresQuery, _ shape: Shape, _ connection: PostgresConnection, _ logger: Logger
    )
        async throws -> [Int64]?
    {
        var values: [Int64]?
        for try await row in try await connection.query(query, logger: logger) {
            let cells = row.makeRandomAccess()
            values = try shape.counters.indices.map { try cells[$0].decode(Int64.self) }
        }
        return values
    }
}
