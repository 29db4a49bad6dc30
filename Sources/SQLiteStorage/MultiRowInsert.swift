import GRDB

/// Inserts many rows with few statements: `INSERT INTO table (columns) VALUES (…), (…), …`, at most `perStatement`
/// rows to a statement, so that the cached statements stay few (one per row count) and their arguments far below
/// SQLite's limit however many rows there are.
enum MultiRowInsert {
    /// Inserts one row of `values(element)` (one value per column) for each of `elements`, in the caller's transaction.
    /// `onConflict` (e.g. `(a, b) DO UPDATE SET n = n + excluded.n`) makes each statement an upsert; SQLite applies
    /// a statement's rows one after the other, so two rows with one key in a statement meet as they would in two.
    static func run<Elements: Collection>(
        _ elements: Elements, into table: String, columns: [String], perStatement: Int, onConflict: String? = nil,
        _ db: Database, values: (Elements.Element) throws -> [(any DatabaseValueConvertible)?]
    ) throws {
        let row = "(" + Array(repeating: "?", count: columns.count).joined(separator: ", ") + ")"
        let head = "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
        let tail = onConflict.map { " ON CONFLICT \($0)" } ?? ""
        var start = elements.startIndex
        while start != elements.endIndex {
            let end =
                elements.index(start, offsetBy: max(1, perStatement), limitedBy: elements.endIndex) ?? elements.endIndex
            let part = elements[start..<end]
            start = end
            var arguments: [(any DatabaseValueConvertible)?] = []
            arguments.reserveCapacity(part.count * columns.count)
            for element in part { arguments += try values(element) }
            try db.cachedStatement(sql: head + Array(repeating: row, count: part.count).joined(separator: ", ") + tail)
                .execute(arguments: StatementArguments(arguments))
        }
    }
}
