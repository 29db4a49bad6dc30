import FaultlineCore
import FaultlineHTTP
import Foundation
import GRDB
import PostgresNIO
import TestSupport
import Testing

@testable import PostgresStorage
@testable import SQLiteStorage

/// Issue #38: a database made by any earlier version upgrades to the current schema in one step, on both engines, and
/// keeps its data.
///
/// `Fixtures/upgrade/<engine>/<migration>.sql` is a database at that schema version with representative data
/// (`tools/upgrade/make-snapshots` makes them). Each is loaded, opened as a server opens it (every pending migration
/// applied), and read back: every table and column the snapshot had, every row, as canonical text. That text must
/// equal `<migration>.expected` beside the snapshot, committed and reviewed; and, whatever the expected file says,
/// every row of the snapshot must still be there unless a migration that ran declares that it rewrites that table
/// (`declaredRewrites`). A migration that loses or corrupts rows fails one or the other.
///
/// `FAULTLINE_RECORD_UPGRADE=1` writes the expected files instead of comparing (after a migration that changes
/// stored data on purpose: review the diff).
@Suite(.tags(.postgres), .provisioned) struct UpgradeSnapshotTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Fixtures/upgrade")
    static var recording: Bool { ProcessInfo.processInfo.environment["FAULTLINE_RECORD_UPGRADE"] == "1" }

    /// The versions that have a snapshot, oldest first.
    static func snapshots(_ engine: Engine) -> [String] {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: fixtures.appendingPathComponent(engine.rawValue).path))
            ?? []
        return migrations(engine).filter { names.contains($0 + ".sql") }
    }

    static func migrations(_ engine: Engine) -> [String] {
        engine == .sqlite ? SQLiteUpgrade.migrations : PostgresUpgrade.migrations
    }

    /// The tables each migration rewrites on purpose: their rows may change (the expected file says how); every other
    /// table keeps each row it had.
    static let declaredRewrites: [String: Set<String>] = [
        "v5-issues-health-alerts": ["reports"],
        "v11-report-modules": ["reports", "report_missing_debug_files"],
        "v24-hashed-rollup-users": [
            "issue_users", "issue_release_users", "issue_day_users", "health_day_users", "health_release_users",
        ],
        "v27-one-release": ReleaseMergeTables.all,
        "pg9-hashed-rollup-users": [
            "issue_users", "issue_release_users", "issue_day_users", "health_day_users", "health_release_users",
        ],
        "pg12-one-release": ReleaseMergeTables.all,
    ]

    enum ReleaseMergeTables {
        static let all: Set<String> = [
            "reports", "sessions", "report_modules", "alerts", "issues", "issue_releases", "issue_release_users",
            "health_days", "health_day_users", "health_releases", "health_release_users",
        ]
    }

    @Test(arguments: Engine.allCases) func everyMigrationHasASnapshotAndALineForMigrateCheck(_ engine: Engine) {
        // A new migration gets its snapshot with one command (tools/upgrade/make-snapshots) and its line in
        // SQLiteUpgrade.steps / PostgresUpgrade.steps.
        #expect(
            Self.migrations(engine).filter { !Self.snapshots(engine).contains($0) } == [],
            "run tools/upgrade/make-snapshots, review and commit Tests/StoreConformanceTests/Fixtures/upgrade")
        #expect(
            (engine == .sqlite ? SQLiteUpgrade.undescribed : PostgresUpgrade.undescribed) == [],
            "describe the migration in SQLiteUpgrade.steps / PostgresUpgrade.steps (what `migrate --check` prints)")
    }

    @Test(arguments: snapshots(.sqlite)) func aSQLiteSnapshotUpgradesKeepingItsRows(_ version: String) async throws {
        let folder = try TempFolder()
        let path = folder.path + "/faultline.sqlite"
        try SQLiteSchemaSnapshot.load(try Self.text(.sqlite, version, "sql"), into: path)
        let before = try SQLiteRows.read(path: path, only: nil)
        // The check says what the upgrade will do, and changes nothing.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let plan = try SQLiteUpgrade.plan(path: path)
        #expect(plan.current == version)
        #expect(plan.steps.map(\.identifier) == Array(SQLiteUpgrade.migrations.drop { $0 != version }.dropFirst()))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == bytes)

        let engine = try SQLiteEngine(path: path, identities: .hmacSHA256)
        #expect(try engine.appliedMigrations() == SQLiteUpgrade.migrations)
        try engine.close()
        let after = try SQLiteRows.read(path: path, only: before.columns)
        try Self.compare(.sqlite, version, before: before, after: after)
        // The full-text index answers for every search entry (the snapshot rebuilt it; v15 filled it on upgrade).
        let queue = try DatabaseQueue(path: path)
        let (entries, found) = try await queue.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM search_documents") ?? 0,
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM search_index WHERE search_index MATCH 'project:p1 OR project:p2'")
                    ?? 0
            )
        }
        try queue.close()
        #expect(found == entries, "\(found) of \(entries) search entries found")
        // Before v5 every report is queued again (so none has an entry yet); from v5 the processed ones have one.
        #expect((entries > 0) == (before.columns["issues"] != nil))
    }

    @Test(arguments: snapshots(.postgres)) func aPostgresSnapshotUpgradesKeepingItsRows(_ version: String) async throws
    {
        let (url, name) = try await PostgresServer.createDatabase()
        defer { Task { try? await PostgresServer.dropDatabase(name) } }
        let file = Self.fixtures.appendingPathComponent("postgres/\(version).sql").path
        try Command.check("psql", ["-v", "ON_ERROR_STOP=1", "-q", "-X", "-f", file, url])
        let before = try await PostgresRows.read(url: url, only: nil)
        let plan = try await PostgresUpgrade.plan(url: url)
        #expect(plan.current == version)
        #expect(plan.steps.map(\.identifier) == Array(PostgresUpgrade.migrations.drop { $0 != version }.dropFirst()))
        #expect(try await PostgresRows.read(url: url, only: nil) == before)

        let engine = try await PostgresEngine.open(url: url, identities: .hmacSHA256)
        let applied = try await engine.appliedMigrations()
        await engine.close()
        #expect(applied == PostgresUpgrade.migrations)
        let after = try await PostgresRows.read(url: url, only: before.columns)
        try Self.compare(.postgres, version, before: before, after: after)
    }

    static func text(_ engine: Engine, _ version: String, _ ext: String) throws -> String {
        try String(contentsOf: fixtures.appendingPathComponent("\(engine.rawValue)/\(version).\(ext)"), encoding: .utf8)
    }

    /// The upgraded rows against the expected file, and every snapshot row kept unless its table is declared rewritten.
    static func compare(_ engine: Engine, _ version: String, before: TableRows, after: TableRows) throws {
        // The projects' keys after the upgrade too: a version before identity keys gets random ones from it.
        let users = before.userIDs(keys: before.identityKeys + after.identityKeys)
        let text = after.rendered(users: users)
        let expected = fixtures.appendingPathComponent("\(engine.rawValue)/\(version).expected")
        if recording {
            try Data(text.utf8).write(to: expected)
        } else {
            let committed = try String(contentsOf: expected, encoding: .utf8)
            if committed != text {
                let old = committed.split(separator: "\n", omittingEmptySubsequences: false)
                let new = text.split(separator: "\n", omittingEmptySubsequences: false)
                let first = (0..<min(old.count, new.count)).first { old[$0] != new[$0] } ?? min(old.count, new.count)
                Issue.record(
                    """
                    \(version): the upgraded rows differ from \(expected.lastPathComponent) at line \(first + 1):
                    expected: \(first < old.count ? old[first] : "(end)")
                    actual:   \(first < new.count ? new[first] : "(end)")
                    (FAULTLINE_RECORD_UPGRADE=1 rewrites the expected files: only for a change made on purpose)
                    """)
            }
        }
        let ran = migrations(engine).drop { $0 != version }.dropFirst()
        let rewritten = ran.reduce(into: Set<String>()) { $0.formUnion(declaredRewrites[$1] ?? []) }
        for (table, rows) in before.rows where !rewritten.contains(table) {
            let kept = Set(after.rows[table]?.map { $0.canonical(users: users) } ?? [])
            for row in rows where !kept.contains(row.canonical(users: users)) {
                Issue.record("\(version): \(table) lost or changed the row \(row.canonical(users: users))")
            }
        }
    }
}

/// Every row of every table, each value as text, read the same way before and after an upgrade.
struct TableRows: Equatable {
    /// Each table's columns, in order.
    var columns: [String: [String]] = [:]
    var rows: [String: [Values]] = [:]
    /// The projects' identity keys (for `RollupUser.key`), read whatever columns are compared.
    var identityKeys: [[UInt8]] = []

    struct Values: Equatable {
        var pairs: [(String, String)]
        static func == (a: Values, b: Values) -> Bool { a.pairs.map { "\($0)=\($1)" } == b.pairs.map { "\($0)=\($1)" } }

        /// `column=value, …`, with each per-user rollup key written as the user it stands for.
        func canonical(users: [String: String]) -> String {
            pairs.map { name, value in "\(name)=\(users[value].map { "key(\($0))" } ?? value)" }
                .joined(separator: ", ")
        }
    }

    /// The user ids reports and sessions name, by the rollup key of each under each project's identity key: a rollup
    /// row reads `key(user-1)` whatever key the upgrade gave its project.
    func userIDs(keys: [[UInt8]]) -> [String: String] {
        var ids: [String: String] = [:]
        let names = ["user_key", "distinct_id"]
        var users: Set<String> = []
        for table in ["reports", "sessions"] {
            for row in rows[table] ?? [] {
                for (name, value) in row.pairs where names.contains(name) && value != "NULL" && !value.hasPrefix("h1:")
                {
                    users.insert(value)
                }
            }
        }
        for key in keys {
            let hasher = IdentityHashers.hmacSHA256.hasher(key: key)
            for user in users { ids[RollupUser.key(of: user, hasher: hasher)] = user }
        }
        return ids
    }

    /// Characters a value is written with as escapes (`\n`, `\x1f`): a row is one line, and U+001F separates
    /// PostgreSQL's values as read (`PostgresRows`). `postgres` is the escape in an `E'…'` literal.
    static let escapes: [(character: String, postgres: String, shown: String)] = [
        ("\n", "n", "\\n"), ("\u{1C}", "x1c", "\\x1c"), ("\u{1D}", "x1d", "\\x1d"), ("\u{1E}", "x1e", "\\x1e"),
        ("\u{1F}", "x1f", "\\x1f"),
    ]

    /// `text` with `escapes` written out.
    static func visible(_ text: String) -> String {
        escapes.reduce(text) { $0.replacingOccurrences(of: $1.character, with: $1.shown) }
    }

    /// Tables in name order, rows sorted: `== table (columns)`, a line per row; a table or column the upgrade dropped
    /// is named as dropped.
    func rendered(users: [String: String]) -> String {
        var lines: [String] = []
        for table in columns.keys.sorted() {
            lines.append("== \(table)")
            lines.append(contentsOf: (rows[table] ?? []).map { $0.canonical(users: users) }.sorted())
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

enum SQLiteRows {
    /// The rows of every table (but the migrations' own, and the full-text index, which is made from its content
    /// table); with `only`, the tables and columns named there, a missing one shown as dropped.
    static func read(path: String, only: [String: [String]]?) throws -> TableRows {
        let queue = try DatabaseQueue(path: path)
        defer { try? queue.close() }
        return try queue.read { db in
            var result = TableRows()
            let schema = try Row.fetchAll(
                db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
            let virtual = schema.filter { ($0["sql"] as String? ?? "").hasPrefix("CREATE VIRTUAL") }.map {
                $0["name"] as String
            }
            let present = schema.map { $0["name"] as String }.filter { name in
                name != "grdb_migrations" && !virtual.contains { name == $0 || name.hasPrefix($0 + "_") }
            }
            if try db.columns(in: "projects").contains(where: { $0.name == "identity_key" }) {
                result.identityKeys = try Data.fetchAll(
                    db, sql: "SELECT identity_key FROM projects WHERE identity_key IS NOT NULL"
                ).map { Array($0) }
            }
            for table in only.map({ Array($0.keys) }) ?? present {
                guard present.contains(table) else {
                    result.columns[table] = []
                    result.rows[table] = [TableRows.Values(pairs: [("table", "(dropped)")])]
                    continue
                }
                let existing = try db.columns(in: table).map(\.name)
                let wanted = only?[table] ?? existing
                result.columns[table] = wanted
                var rows: [TableRows.Values] = []
                for row in try Row.fetchAll(db, sql: "SELECT * FROM \"\(table)\"") {
                    rows.append(
                        TableRows.Values(
                            pairs: wanted.map { column in
                                guard existing.contains(column) else { return (column, "(dropped)") }
                                return (column, text(row[column] as DatabaseValue))
                            }))
                }
                result.rows[table] = rows
            }
            return result
        }
    }

    static func text(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: "NULL"
        case .int64(let int): String(int)
        case .double(let double): "\(double)"
        case .string(let string): TableRows.visible(string)
        case .blob(let data): "x'" + Hex.encode(Array(data)) + "'"
        }
    }
}

/// A row read back from PostgreSQL split into more or fewer values than it has columns.
struct UpgradeRowsError: Error, CustomStringConvertible {
    var table: String
    var values: Int
    var columns: Int
    var description: String { "\(table): a row read as \(values) values for \(columns) columns" }
}

enum PostgresRows {
    /// As `SQLiteRows.read`, on PostgreSQL: each partitioned table once (its partitions are where its rows live), each
    /// value as PostgreSQL writes it as text.
    static func read(url: String, only: [String: [String]]?) async throws -> TableRows {
        let database = try PostgresEngine(location: try PostgresLocation(url: url), maximumConnections: 1)
        await database.waitUntilRunning()
        do {
            let result = try await database.read { connection in try await read(connection, only: only) }
            await database.close()
            return result
        } catch {
            await database.close()
            throw error
        }
    }

    static func strings(_ connection: PostgresConnection, _ sql: String) async throws -> [String] {
        var out: [String] = []
        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            .decode(String?.self)
        {
            out.append(value ?? "NULL")
        }
        return out
    }

    static let logger = Logger(label: "upgrade-test")

    static func read(_ connection: PostgresConnection, only: [String: [String]]?) async throws -> TableRows {
        var result = TableRows()
        let present = try await strings(
            connection,
            """
            SELECT relname::text FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p')
                AND NOT relispartition AND relname <> 'faultline_migrations'
            """)
        let keyColumn = try await strings(
            connection,
            """
            SELECT count(*)::text FROM information_schema.columns WHERE table_schema = 'public'
                AND table_name = 'projects' AND column_name = 'identity_key'
            """)
        if keyColumn == ["1"] {
            result.identityKeys = try await strings(
                connection, "SELECT encode(identity_key, 'hex') FROM public.projects WHERE identity_key IS NOT NULL"
            ).map { hex in
                stride(from: 0, to: hex.count, by: 2).map { offset in
                    let start = hex.index(hex.startIndex, offsetBy: offset)
                    return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
                }
            }
        }
        for table in only.map({ Array($0.keys) }) ?? present {
            guard present.contains(table) else {
                result.columns[table] = []
                result.rows[table] = [TableRows.Values(pairs: [("table", "(dropped)")])]
                continue
            }
            let existing = try await strings(
                connection,
                """
                SELECT column_name::text FROM information_schema.columns WHERE table_schema = 'public'
                    AND table_name = '\(table)' ORDER BY ordinal_position
                """)
            let wanted = only?[table] ?? existing
            result.columns[table] = wanted
            let kept = wanted.filter(existing.contains)
            // One text per row: the values joined with a separator no value holds once the separators of stored
            // forms (`GroupingFacts.encoded`: U+001C…U+001F) and newlines are written out as escapes.
            let select =
                kept.isEmpty
                ? "''"
                : kept.map { column in
                    let escaped = TableRows.escapes.reduce("\"\(column)\"::text") { inner, escape in
                        "replace(\(inner), E'\\\(escape.postgres)', '\(escape.shown)')"
                    }
                    return "coalesce(\(escaped), 'NULL')"
                }.joined(separator: " || E'\\x1f' || ")
            var rows: [TableRows.Values] = []
            for line in try await strings(connection, "SELECT \(select) FROM public.\"\(table)\"") {
                var values =
                    kept.isEmpty
                    ? [] : line.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
                guard values.count == kept.count else {
                    throw UpgradeRowsError(table: table, values: values.count, columns: kept.count)
                }
                rows.append(
                    TableRows.Values(
                        pairs: wanted.map { column in
                            guard existing.contains(column), !values.isEmpty else { return (column, "(dropped)") }
                            return (column, values.removeFirst())
                        }))
            }
            result.rows[table] = rows
        }
        return result
    }
}
