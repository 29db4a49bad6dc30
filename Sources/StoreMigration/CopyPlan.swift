import FaultlineCore
import PostgresStorage
import SQLiteStorage

/// Which PostgreSQL table is filled from what in the SQLite database, in which order: the one place that knows both
/// schemas (Sources/Storage/Migrations.swift and Sources/PostgresStorage/PostgresMigrations.swift).
///
/// Most tables are copied column for column: the two schemas share table and column names, and times are integers
/// (milliseconds) on both, so a SQLite column becomes the PostgreSQL column of the same name (flags 0/1 become
/// booleans, blobs `bytea`). Where the schemas differ, a table has a rule of its own:
/// - `report_symbols`, `report_modules`: partitioned by their report's week on PostgreSQL, so each row takes its
///   report's `received_at`.
/// - `search_documents`: SQLite's FTS5 content rows become PostgreSQL's `tsvector` entries, written by
///   `PostgresSearchStore`'s own rule, as the symbolication store would have written them.
/// - `report_event_ids` (PostgreSQL only): every report's claim on its event id, derived from the copied reports.
/// - SQLite's FTS5 index (`search_index` and its shadow tables) and GRDB's `grdb_migrations` are not data.
///
/// `CopyPlan.make` checks the plan against both schemas as they are: a table or column that one side has and the plan
/// does not account for stops the migrate before anything is written, so that a later schema change cannot be left
/// out of the copy silently.
struct CopyPlan {
    /// One PostgreSQL table filled from the SQLite table of the same name.
    struct Table {
        /// The table, on both sides.
        var name: String
        /// The PostgreSQL columns written, in order.
        var columns: [PostgresColumn]
        /// The SQLite expressions read, in order (`t.` is the table, `r.` its report where joined).
        var select: [String]
        /// The SQLite join after `FROM name t`, if any.
        var join: String = ""
        /// The SQLite keyset: expressions among `select`, the table's primary key.
        var key: [String]
        /// Turns a row of `select` into a row of `columns` (nil: the same values).
        var transform: (@Sendable ([TableValue]) throws -> [TableValue])?
    }

    /// The tables copied, parents before the tables whose foreign keys name them.
    var tables: [Table]

    /// Tables whose rows are written on PostgreSQL from copied rows, with the SQLite table their count must equal.
    static let derived = ["report_event_ids": "reports"]

    /// SQLite tables that hold no data of their own: the FTS5 index over `search_documents` (rebuilt from it on
    /// PostgreSQL as `tsvector`s) and GRDB's migration bookkeeping.
    static let notData: Set<String> = [
        "search_index", "search_index_data", "search_index_idx", "search_index_content", "search_index_docsize",
        "search_index_config",
        "grdb_migrations",
    ]

    /// PostgreSQL columns no SQLite column feeds, left to their default: a report's claim by a node (none yet).
    static let targetOnly: Set<String> = ["reports.claimed_until"]

    /// The copy order: parents first (PostgreSQL checks each foreign key as the row arrives).
    static let order = [
        "projects", "credentials", "people", "memberships", "invites", "admin_sessions", "personal_tokens",
        "second_factors", "recovery_codes", "login_tickets", "alert_settings", "counters",
        "issues", "issue_releases", "issue_days", "issue_users", "issue_release_users", "issue_day_users", "issue_tags",
        "issue_tag_users", "issue_aliases", "issues_replaced", "grouping_rules", "regroups",
        "payloads", "reports", "report_symbols", "report_modules", "search_documents", "attachments",
        "sessions", "health_days", "health_day_users", "health_releases", "health_release_users", "client_reports",
        "quota_counts", "audit_log",
        "debug_files", "dif_uploads", "alerts", "webhook_deliveries",
        "alert_mail_preferences", "mail_digests", "mail_secrets",
    ]

    /// The plan for these schemas, or why there is none.
    static func make(source: [String: SQLiteTableInfo], target: [String: [PostgresColumn]]) throws -> CopyPlan {
        let unknownSource = Set(source.keys).subtracting(order).subtracting(notData)
        guard unknownSource.isEmpty else {
            throw MigrationError(
                "the SQLite database has tables this faultline does not know how to copy (\(unknownSource.sorted().joined(separator: ", "))): "
                    + "it was written by a newer faultline; migrate with that version")
        }
        let unknownTarget = Set(target.keys).subtracting(order).subtracting(derived.keys)
        guard unknownTarget.isEmpty else {
            throw MigrationError(
                "the PostgreSQL database has tables this faultline does not know how to fill (\(unknownTarget.sorted().joined(separator: ", "))): "
                    + "it was migrated by a newer faultline; migrate with that version")
        }
        var tables: [Table] = []
        for name in order {
            guard let from = source[name] else {
                throw MigrationError("the SQLite database has no table \(name): it is not a Faultline database")
            }
            guard let to = target[name] else { throw MigrationError("the PostgreSQL database has no table \(name)") }
            let table = try plan(name, from, to)
            let written = Set(table.columns.map(\.name))
            if let missing = to.first(where: { $0.required && !written.contains($0.name) }) {
                throw MigrationError("nothing in the SQLite database fills \(name).\(missing.name) on PostgreSQL")
            }
            tables.append(table)
        }
        return CopyPlan(tables: tables)
    }

    /// One table's rule (see the type's comment).
    static func plan(_ name: String, _ source: SQLiteTableInfo, _ target: [PostgresColumn]) throws -> Table {
        let columns = Dictionary(target.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        func column(_ name: String, of table: String) throws -> PostgresColumn {
            guard let column = columns[name] else {
                throw MigrationError(
                    "the PostgreSQL table \(table) has no column \(name), which the SQLite table holds")
            }
            return column
        }
        let key = source.primaryKey.map { "t.\($0)" }
        switch name {
        case "report_symbols", "report_modules":
            // The report's week: a row lives in the partition of its report's `received_at`.
            let copied = try source.columns.map { try column($0, of: name) }
            return Table(
                name: name, columns: copied + [try column("received_at", of: name)],
                select: source.columns.map { "t.\($0)" } + ["r.received_at"],
                join: "JOIN reports r ON r.id = t.report_id", key: key)
        case "search_documents":
            // SQLite's columns: report_id, project (the token p<id>), and the six fields of a SearchDocument.
            let fields = ["event", "user", "release", "error", "functions", "keys"]
            let known = Set(["report_id", "project"] + fields)
            if let unknown = source.columns.first(where: { !known.contains($0) }) {
                throw MigrationError(
                    "the SQLite table search_documents has a column this faultline does not know: \(unknown)")
            }
            return Table(
                name: name,
                columns: try ["report_id", "received_at", "project_id", "document"].map { try column($0, of: name) },
                select: ["t.report_id", "r.received_at", "r.project_id"] + fields.map { "t.\"\($0)\"" },
                join: "JOIN reports r ON r.id = t.report_id", key: ["t.report_id"], transform: searchEntry)
        default:
            let targetOnly = target.filter { !source.columns.contains($0.name) }.map { "\(name).\($0.name)" }
            if let unexpected = targetOnly.first(where: { !Self.targetOnly.contains($0) }) {
                throw MigrationError("no SQLite column fills \(unexpected) on PostgreSQL")
            }
            return Table(
                name: name, columns: try source.columns.map { try column($0, of: name) },
                select: source.columns.map { "t.\"\($0)\"" },
                key: key)
        }
    }

    /// A SQLite index row (report id, received at, project, six fields) as PostgreSQL's entry (report id, received at,
    /// project, tsvector). Each field is bounded as the worker bounds it now (`SearchDocument.bounded`): an entry indexed
    /// on SQLite under an older, looser limit would otherwise pass PostgreSQL's 1 MiB for a `tsvector` and stop the copy.
    @Sendable static func searchEntry(_ row: [TableValue]) throws -> [TableValue] {
        guard row.count == 9 else { throw MigrationError("search_documents: a row of \(row.count) values") }
        func text(_ value: TableValue) -> String {
            switch value {
            case .text(let text): text
            case .integer(let number): String(number)
            case .real(let number): String(number)
            case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
            case .null: ""
            }
        }
        let fields = row[3...].map { SearchDocument.bounded(text($0)) }
        let document = SearchDocument(
            event: fields[0], user: fields[1], release: fields[2], error: fields[3], functions: fields[4],
            keys: fields[5])
        return [row[0], row[1], row[2], .text(PostgresSearchStore.vector(document))]
    }
}

extension CopyPlan.Table {
    /// The SQLite statement reading the next batch after `after` (the last key read; none for the first batch):
    /// `limit` rows in key order.
    func batchSQL(after: Bool) -> String {
        let keyList = key.joined(separator: ", ")
        let keyTuple = key.count == 1 ? keyList : "(\(keyList))"
        let placeholders = key.count == 1 ? "?" : "(" + key.map { _ in "?" }.joined(separator: ", ") + ")"
        let condition = after ? " WHERE \(keyTuple) > \(placeholders)" : ""
        return
            "SELECT \(select.joined(separator: ", ")) FROM \"\(name)\" t \(join)\(condition) ORDER BY \(keyList) LIMIT ?"
    }

    /// Where each key expression is in `select`.
    var keyPositions: [Int] {
        key.compactMap { expression in
            select.firstIndex { $0 == expression || $0 == "t.\"\(expression.dropFirst(2))\"" }
        }
    }
}
