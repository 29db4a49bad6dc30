/// How a snapshot is filled with `SnapshotData`, so that it holds what an install at that version could hold.
///
/// Before `v27-one-release` / `pg12-one-release` the rows go in at the snapshot's own version. From it on they cannot:
/// that migration brought every stored release under one name (`2.4.0 (240)` and `com.example.app@2.4.0+240` became
/// `2.4.0`), and no install at it or later writes the old spellings. So the empty database is migrated up to the
/// version just before it (`firstVersion`), the rows valid there go in, the database migrates on to the snapshot's
/// version (the rows pass through the release merge and every later migration as an upgraded install's did), and then
/// the rest go in: rows of later tables or later `since`, and the values of columns a later migration added to rows
/// already in (as the install's later use set them: a tracker named, a quota set, a report's grouping facts), each row
/// found by its primary key (a row whose key a migration rewrote, as the release merge rewrites a rollup's release,
/// is no longer found and keeps the migration's default).
struct SnapshotFill {
    /// A table as it is at the database's current version.
    struct Table {
        var columns: [String]
        /// The primary key columns (`rowid` on SQLite for a table without one).
        var key: [String]
    }

    /// The SQLite migration that rewrote stored release names (its PostgreSQL twin in `SnapshotData.postgresTwins`).
    static let oneRelease = "v27-one-release"

    /// The version at which the rows first go in for a snapshot of `schema`: `schema` itself before `oneRelease`,
    /// else the migration just before `oneRelease`.
    static func firstVersion(of schema: String, migrations: [String], oneRelease: String) -> String {
        guard let merge = migrations.firstIndex(of: oneRelease), merge > 0,
            let target = migrations.firstIndex(of: schema), target >= merge
        else { return schema }
        return migrations[merge - 1]
    }

    /// The tables the rows and updates touch (their columns are looked up before each step).
    static func tables(_ rows: [SnapshotRow]) -> [String] {
        var seen: Set<String> = []
        return (rows.map(\.table) + SnapshotData.updates.map(\.0)).filter { seen.insert($0).inserted }
    }

    let rows: [SnapshotRow]
    /// SQLite's migration names as the PostgreSQL ones (nil on SQLite): a row whose `since` has no twin needs no
    /// migration on PostgreSQL, which had the older ones from its first version.
    let twins: [String: String]?
    /// The rows in so far, by index, with the columns their table had then.
    private var inserted: [Int: [String]] = [:]
    /// The `SnapshotData.updates` run so far, by index.
    private var updated: Set<Int> = []

    init(twins: [String: String]? = nil) {
        rows = SnapshotData.rows
        self.twins = twins
    }

    /// The statements of one step at the database's current version: the later columns of the rows already in, the
    /// rows that fit now and were not in yet, and the updates whose table now exists.
    /// - Parameters:
    ///   - applied: the migrations applied.
    ///   - hashedFrom: the migration from which per-user rollups hold keyed users (`Value.user`).
    ///   - tables: each table of `tables(rows)` that exists now.
    mutating func statements(
        applied: [String], hashedFrom: String, literal: (Value) -> String, tables: [String: Table]
    ) throws -> [String] {
        let hashed = applied.contains(hashedFrom)
        var statements: [String] = []
        for (index, before) in inserted.sorted(by: { $0.key < $1.key }) {
            guard let now = tables[rows[index].table] else { continue }
            if let update = try later(rows[index], before: before, now: now, hashed: hashed, literal: literal) {
                statements.append(update)
            }
            inserted[index] = now.columns
        }
        for (index, row) in rows.enumerated() where inserted[index] == nil {
            let needs = twins.map { twins in row.since.flatMap { twins[$0] } } ?? row.since
            if let needs, !applied.contains(needs) { continue }
            guard let now = tables[row.table] else { continue }
            statements.append(insert(row, columns: now.columns, hashed: hashed, literal: literal))
            inserted[index] = now.columns
        }
        for (index, (table, statement)) in SnapshotData.updates.enumerated()
        where !updated.contains(index) && tables[table] != nil {
            statements.append(statement)
            updated.insert(index)
        }
        return statements
    }

    /// `UPDATE table SET … WHERE key` for the columns of `row` its table gained since it went in, nil when it gained
    /// none.
    /// - Throws: `SnapshotFillError` when such a row lacks a value of its table's primary key to find it by.
    func later(_ row: SnapshotRow, before: [String], now: Table, hashed: Bool, literal: (Value) -> String) throws
        -> String?
    {
        let gained = row.values.filter { now.columns.contains($0.0) && !before.contains($0.0) }
        guard !gained.isEmpty else { return nil }
        let key = row.values.filter { now.key.contains($0.0) }
        guard !now.key.isEmpty, key.count == now.key.count else {
            throw SnapshotFillError(table: row.table, columns: gained.map(\.0))
        }
        let assignments = gained.map { "\($0.0) = \(sql($0.1, hashed: hashed, literal: literal))" }
        let match = key.map { "\($0.0) = \(sql($0.1, hashed: hashed, literal: literal))" }
        return
            "UPDATE \(row.table) SET \(assignments.joined(separator: ", ")) WHERE \(match.joined(separator: " AND "))"
    }
}

/// A row without its table's primary key whose table gained columns after the row went in: the fill cannot find it to
/// set them.
struct SnapshotFillError: Error, CustomStringConvertible {
    let table: String
    let columns: [String]
    var description: String {
        "a \(table) row has values for \(columns.joined(separator: ", ")), added after it went in, but no primary key"
    }
}
