import FaultlineCore
import Logging
import PostgresNIO
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The PostgreSQL side of `faultline migrate` (module StoreMigration): a database filled in one transaction by bulk
/// copies, and told apart from a database that nodes have written to.
///
/// **One transaction.** `load` runs the whole fill in one transaction: a run that fails halfway (a refused row, a lost
/// connection, a count that does not match) leaves the database as it was, and nodes see the copy all at once or not
/// at all.
///
/// **What a migrate wrote.** A migrate records itself in `faultline_migrate` (migration `pg4-migrate-marker`), in the
/// transaction that writes the copy. PostgreSQL stamps every row version with the transaction that wrote it (`xmin`;
/// kept when rows are frozen, since PostgreSQL 9.4), so every row of a copy carries the same transaction id as the
/// marker, and a row a node inserted or updated since carries another. `foreignTables` names the tables holding such
/// rows: a later migrate replaces its own copy, and refuses a database that holds anything else. (A transaction id
/// is 32 bits: after about four billion transactions another one could have the marker's id; the check would then
/// miss that transaction's rows, nothing worse.)
public struct PostgresMigrationTarget: Sendable {
    let database: PostgresEngine

    /// The advisory lock a migrate holds to its commit: two migrates into one database take turns.
    static let lockKey = PostgresMigrations.lockKey + 3
    /// Tables of the schema's own bookkeeping, never copied or checked.
    static let bookkeeping: Set<String> = ["faultline_migrations", "faultline_migrate"]

    public init(database: PostgresEngine) {
        self.database = database
    }

    /// Runs `body` in one transaction, holding the migrate lock, the partition lock (no node makes partitions meanwhile)
    /// and the retention lock (no node's retention pass deletes meanwhile); commits when `body` returns.
    public func load<T: Sendable>(_ body: (PostgresBulkLoad) async throws -> T) async throws -> T {
        let logger = database.logger
        do {
            return try await database.write { connection in
                for key in [Self.lockKey, PostgresMigrations.lockKey + 1, PostgresRetentionStore.lockKey] {
                    try await connection.query("SELECT pg_advisory_xact_lock(\(key))", logger: logger)
                }
                return try await body(PostgresBulkLoad(connection: connection, logger: logger))
            }
        } catch let error as PostgresTransactionError where error.rollbackError == nil && error.closureError != nil {
            // Rolled back: what the body threw is the error.
            throw error.closureError!
        }
    }

    /// Opens the database at `url` for a migrate (schema brought up to date). A URL, password or database that is
    /// wrong fails at once with what the server answered (`PostgresEngine.open` connects once alone first).
    /// - Parameter identities: keys the per-user rollups, for an upgrade of rollups that hold user ids.
    public static func open(url: String, password: String?, identities: IdentityHashers? = nil) async throws
        -> PostgresEngine
    {
        do {
            return try await PostgresEngine.open(
                url: url, password: password, identities: identities, logger: Logger(label: "faultline.migrate"))
        } catch let error as StorageError {
            throw error
        } catch {
            throw StorageError(.openFailed, "cannot open \(PostgresLocation.redact(url)): \(describe(error))")
        }
    }

    /// What a server error says (SQLSTATE, message, detail); the error's own description for any other error.
    /// PostgresNIO's errors print a generic text, so that no value leaks into logs; a migrate's operator needs to know
    /// which constraint refused which row.
    public static func describe(_ error: any Error) -> String {
        if let transaction = error as? PostgresTransactionError {
            if let inner = [transaction.closureError, transaction.beginError, transaction.commitError].lazy.compactMap({
                $0
            }).first {
                return describe(inner)
            }
        }
        guard let error = error as? PSQLError else { return String(describing: error) }
        guard let info = error.serverInfo else {
            return "PostgreSQL: \(error.code)" + (error.underlying.map { " (\(String(describing: $0)))" } ?? "")
        }
        let detail = info[.detail].map { " (\($0))" } ?? ""
        return "PostgreSQL \(info[.sqlState] ?? "?"): \(info[.message] ?? "")\(detail)"
    }
}

/// A column of a PostgreSQL table: its name, its type as `format_type` writes it (`bigint`, `text`, `boolean`, …), and
/// whether a row must give it (NOT NULL without a default).
public struct PostgresColumn: Sendable, Equatable {
    public var name: String
    public var type: String
    public var required: Bool
}

/// The operations of one migrate transaction (`PostgresMigrationTarget.load`). Valid only inside `load`'s body.
public struct PostgresBulkLoad: Sendable {
    let connection: PostgresConnection
    let logger: Logger

    /// The tables that hold data (not partitions, not the schema's bookkeeping), with their columns in order.
    public func tables() async throws -> [String: [PostgresColumn]] {
        let rows = try await connection.query(
            """
            SELECT c.relname::text, a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull AND NOT a.atthasdef
                AND a.attidentity = ''
            FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
            WHERE c.relnamespace = to_regnamespace(current_schema()) AND c.relkind IN ('r', 'p') AND NOT c.relispartition
                AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY c.relname, a.attnum
            """, logger: logger)
        var tables: [String: [PostgresColumn]] = [:]
        for try await (table, name, type, required) in rows.decode((String, String, String, Bool).self)
        where !PostgresMigrationTarget.bookkeeping.contains(table) {
            tables[table, default: []].append(PostgresColumn(name: name, type: type, required: required))
        }
        return tables
    }

    /// When the last migrate into this database happened and where from; nil when none did.
    public func lastMigrate() async throws -> (source: String, migratedAt: Int64)? {
        for try await (source, at) in try await connection.query(
            "SELECT source, migrated_at FROM faultline_migrate", logger: logger
        ).decode((String, Int64).self) {
            return (source, at)
        }
        return nil
    }

    /// The tables among `tables` that hold a row the last migrate did not write (any row, when no migrate did). The
    /// `debug_files` counter at 0, which the schema itself inserts, is no one's data.
    public func foreignTables(among tables: [String]) async throws -> [String] {
        var marker: String?
        for try await xid in try await connection.query("SELECT xmin::text FROM faultline_migrate", logger: logger)
            .decode(String.self)
        {
            marker = xid
        }
        var foreign: [String] = []
        for table in tables.sorted() {
            let schemaRows = table == "counters" ? " AND NOT (name = 'debug_files' AND value = 0)" : ""
            let query =
                if let marker {
                    PostgresQuery(
                        unsafeSQL:
                            "SELECT EXISTS (SELECT 1 FROM \(PostgresBulkLoad.quoted(table)) WHERE xmin::text <> $1\(schemaRows))",
                        binds: PostgresBindings(values: [marker]))
                } else {
                    PostgresQuery(
                        unsafeSQL:
                            "SELECT EXISTS (SELECT 1 FROM \(PostgresBulkLoad.quoted(table)) WHERE true\(schemaRows))")
                }
            let rows = try await connection.query(query, logger: logger)
            for try await exists in rows.decode(Bool.self) where exists { foreign.append(table) }
        }
        return foreign
    }

    /// Empties `tables` (the previous copy), all in one statement so that their foreign keys allow it.
    public func clear(_ tables: [String]) async throws {
        guard !tables.isEmpty else { return }
        try await connection.query(
            PostgresQuery(
                unsafeSQL: "TRUNCATE " + tables.sorted().map(PostgresBulkLoad.quoted).joined(separator: ", ")),
            logger: logger)
    }

    /// Makes the weekly partitions of every week in `weeks` (week starts, `PostgresPartitions.weekStart`) that are
    /// missing, so that copied rows land in their week as ingested ones do, not in the DEFAULT partition (where they
    /// would keep their week from ever getting its partition).
    public func createPartitions(weeks: Set<Int64>) async throws {
        for week in weeks.sorted() {
            for table in PostgresPartitions.tables {
                try await connection.query(
                    PostgresQuery(unsafeSQL: PostgresPartitions.createStatement(table, week: week)), logger: logger)
            }
        }
    }

    /// The start of the week (Monday 00:00 UTC) holding `ms`, as the partitions have them.
    public static func weekStart(_ ms: Int64) -> Int64 {
        PostgresPartitions.weekStart(ms)
    }

    /// Copies rows into `table` with one `COPY … FROM STDIN`: `next` gives the rows a batch at a time (each row the
    /// values of `columns`, in order) and nil at the end. Returns how many rows were sent.
    public func copy(into table: String, columns: [PostgresColumn], from next: () async throws -> [[TableValue]]?)
        async throws -> Int64
    {
        var sent: Int64 = 0
        try await connection.copyFrom(table: table, columns: columns.map(\.name), logger: logger) { writer in
            while let rows = try await next() {
                var text: [UInt8] = []
                text.reserveCapacity(rows.count &* 64)
                for row in rows {
                    guard row.count == columns.count else {
                        throw StorageError(
                            .invalidValue, "\(table): a row of \(row.count) values for \(columns.count) columns")
                    }
                    for (index, value) in row.enumerated() {
                        if index > 0 { text.append(UInt8(ascii: "\t")) }
                        try PostgresCopyText.append(value, as: columns[index], of: table, to: &text)
                    }
                    text.append(UInt8(ascii: "\n"))
                }
                try await writer.write(ByteBuffer(bytes: text))
                sent &+= Int64(rows.count)
            }
        }
        return sent
    }

    /// Writes `report_event_ids` from the copied reports: each report's claim on its event id, which ingest checks
    /// for retries (SQLite's `UNIQUE (project_id, event_id)` on `reports` is this table on PostgreSQL). Returns the
    /// rows written.
    public func deriveEventIDs() async throws -> Int64 {
        for try await count in try await connection.query(
            """
            WITH written AS (
                INSERT INTO report_event_ids (project_id, event_id, report_id, received_at)
                SELECT project_id, event_id, id, received_at FROM reports RETURNING 1)
            SELECT count(*) FROM written
            """, logger: logger
        ).decode(Int64.self) {
            return count
        }
        return 0
    }

    /// Moves every id sequence past the largest id its table holds, so that the next project, report or issue a node
    /// makes does not collide with a copied one. A sequence's column is the one it belongs to (identity columns), or
    /// else the one its name says (`reports_id_seq`: `reports.id`, which ingest fills with `nextval` itself).
    public func moveSequencesPastCopiedIDs() async throws {
        let tables = try await tables()
        let rows = try await connection.query(
            """
            SELECT s.relname::text, t.relname::text, a.attname::text
            FROM pg_class s
                LEFT JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.oid
                    AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
                LEFT JOIN pg_class t ON t.oid = d.refobjid
                LEFT JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
            WHERE s.relkind = 'S' AND s.relnamespace = to_regnamespace(current_schema())
            """, logger: logger)
        var sequences: [(sequence: String, table: String, column: String)] = []
        for try await (sequence, table, column) in rows.decode((String, String?, String?).self) {
            if let table, let column {
                sequences.append((sequence, table, column))
            } else if let (table, columns) = tables.first(where: { sequence.hasPrefix($0.key + "_") }),
                let column = columns.first(where: { sequence == "\(table)_\($0.name)_seq" })
            {
                sequences.append((sequence, table, column.name))
            }
        }
        for (sequence, table, column) in sequences where tables[table] != nil {
            let query = PostgresQuery(
                unsafeSQL: """
                    SELECT setval($1::regclass,
                        coalesce((SELECT max(\(PostgresBulkLoad.quoted(column))) FROM \(PostgresBulkLoad.quoted(table))), 0) + 1, false)
                    """,
                binds: PostgresBindings(values: [PostgresBulkLoad.quoted(sequence)]))
            try await connection.query(query, logger: logger)
        }
    }

    /// Gathers the planner's statistics of `tables` (they have none after a bulk load until autovacuum comes by).
    public func analyze(_ tables: [String]) async throws {
        guard !tables.isEmpty else { return }
        try await connection.query(
            PostgresQuery(unsafeSQL: "ANALYZE " + tables.sorted().map(PostgresBulkLoad.quoted).joined(separator: ", ")),
            logger: logger)
    }

    /// The rows of `table` (as this transaction sees them).
    public func count(_ table: String) async throws -> Int64 {
        for try await count in try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT count(*) FROM \(PostgresBulkLoad.quoted(table))"), logger: logger
        ).decode(Int64.self) {
            return count
        }
        return 0
    }

    /// Records this migrate (replacing the record of the last one): where the copy came from, when, and what it wrote.
    public func mark(source: String, at: Date, summary: String) async throws {
        try await connection.query("DELETE FROM faultline_migrate", logger: logger)
        try await connection.query(
            """
            INSERT INTO faultline_migrate (source, migrated_at, summary)
            VALUES (\(PostgresText.storable(source)), \(Millis.from(at)), \(PostgresText.storable(summary)))
            """, logger: logger)
    }

    /// `name` as a quoted identifier (table and column names come from the catalogs, but are quoted anyway).
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
