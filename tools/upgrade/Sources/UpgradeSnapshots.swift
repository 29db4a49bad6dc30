import ArgumentParser
import FaultlineCore
import FaultlineHTTP
import PostgresStorage
import SQLiteStorage

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Makes the upgrade snapshots (issue #38): a database at an earlier schema version, filled with `SnapshotData`.
/// `tools/upgrade/make-snapshots` runs it for each version and writes the files; see docs/operations.md, "Upgrading".
@main
struct UpgradeSnapshots: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade-snapshots",
        abstract: "Make a database at an earlier schema version with representative data (the upgrade snapshots).",
        subcommands: [
            Versions.self, SQLite.self, Postgres.self, BenchFill.self, BenchStep.self, BenchSizes.self,
            BenchFillPostgres.self, BenchStepPostgres.self,
        ])

    /// Prints the migrations this build knows, one per line, oldest first.
    struct Versions: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "versions")
        @Argument(help: "sqlite or postgres") var engine: String

        func run() throws {
            let all = engine == "postgres" ? PostgresUpgrade.migrations : SQLiteUpgrade.migrations
            print(all.joined(separator: "\n"))
        }
    }

    /// Writes the SQLite snapshot of one version as SQL text.
    struct SQLite: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "sqlite")
        @Option(help: "The migration to stop after (the schema version).") var schema: String
        @Option(help: "The SQL file to write.") var out: String

        func run() throws {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent(
                "upgrade-snapshot-\(UUID().uuidString).sqlite"
            ).path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let first = SnapshotFill.firstVersion(
                of: schema, migrations: SQLiteUpgrade.migrations, oneRelease: SnapshotFill.oneRelease)
            let snapshot = try SQLiteSchemaSnapshot(path: path, upTo: first)
            var fill = SnapshotFill()
            try snapshot.execute(try Self.step(&fill, snapshot).joined(separator: ";\n"))
            if first != schema {
                try snapshot.migrate(upTo: schema)
                try snapshot.execute(try Self.step(&fill, snapshot).joined(separator: ";\n"))
            }
            let text = try snapshot.dump(
                header: "-- Faultline upgrade snapshot: SQLite at \(schema) (made by tools/upgrade/make-snapshots)")
            try snapshot.close()
            try Data(text.utf8).write(to: URL(fileURLWithPath: out))
        }

        /// The statements that fill `snapshot` at its current version (`SnapshotFill.statements`).
        static func step(_ fill: inout SnapshotFill, _ snapshot: SQLiteSchemaSnapshot) throws -> [String] {
            var tables: [String: SnapshotFill.Table] = [:]
            for table in SnapshotFill.tables(fill.rows) {
                guard let columns = try snapshot.columns(table) else { continue }
                tables[table] = SnapshotFill.Table(columns: columns, key: try snapshot.primaryKey(table))
            }
            return try fill.statements(
                applied: try snapshot.applied, hashedFrom: "v24-hashed-rollup-users", literal: sqliteLiteral,
                tables: tables)
        }
    }

    /// Fills an empty PostgreSQL database at one version (the script dumps it with `pg_dump`).
    struct Postgres: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "postgres")
        @Option(help: "The migration to stop after (the schema version).") var schema: String
        @Option(help: "The empty database: postgres://…") var url: String

        func run() async throws {
            let first = SnapshotFill.firstVersion(
                of: schema, migrations: PostgresUpgrade.migrations,
                oneRelease: SnapshotData.postgresTwins[SnapshotFill.oneRelease] ?? SnapshotFill.oneRelease)
            let snapshot = try await PostgresSchemaSnapshot(url: url, upTo: first, identities: .hmacSHA256)
            do {
                var fill = SnapshotFill(twins: SnapshotData.postgresTwins)
                var statements = try await Self.step(&fill, snapshot)
                if first != schema {
                    try await snapshot.execute(statements)
                    try await snapshot.migrate(upTo: schema)
                    statements = try await Self.step(&fill, snapshot)
                }
                try await snapshot.execute(statements + (try await Self.finish(snapshot)))
            } catch {
                await snapshot.close()
                throw error
            }
            await snapshot.close()
        }

        /// The statements that fill `snapshot` at its current version (`SnapshotFill.statements`).
        static func step(_ fill: inout SnapshotFill, _ snapshot: PostgresSchemaSnapshot) async throws -> [String] {
            var tables: [String: SnapshotFill.Table] = [:]
            for table in SnapshotFill.tables(fill.rows) {
                guard let columns = try await snapshot.columns(table) else { continue }
                tables[table] = SnapshotFill.Table(columns: columns, key: try await snapshot.primaryKey(table))
            }
            return try fill.statements(
                applied: try await snapshot.applied, hashedFrom: "pg9-hashed-rollup-users", literal: postgresLiteral,
                tables: tables)
        }

        /// After every row: sequences continue after the ids given, and the migrations' times are the snapshot's.
        static func finish(_ snapshot: PostgresSchemaSnapshot) async throws -> [String] {
            var statements: [String] = []
            // Identity columns were given explicit ids: their sequences continue after them, as a real database's do.
            for table in [
                "projects", "issues", "alerts", "webhook_deliveries", "admin_sessions", "people", "personal_tokens",
                "audit_log", "mail_digests",
            ] where try await snapshot.columns(table) != nil {
                statements.append(
                    "SELECT setval(pg_get_serial_sequence('\(table)', 'id'), (SELECT max(id) FROM \(table)))")
            }
            // A merged issue's number was the issue's: it is never given again.
            if try await snapshot.columns("issues_replaced") != nil {
                statements.append(
                    """
                    SELECT setval(pg_get_serial_sequence('issues', 'id'),
                        greatest((SELECT max(id) FROM issues), (SELECT max(issue_id) FROM issues_replaced)))
                    """)
            }
            // The same data gives the same dump: the migrations' own timestamps are the snapshot's clock, not now.
            statements.append("UPDATE faultline_migrations SET applied_at = \(SnapshotData.t0)")
            for sequence in ["payloads", "reports", "attachments"] where try await snapshot.columns(sequence) != nil {
                statements.append("SELECT setval('\(sequence)_id_seq', (SELECT max(id) FROM \(sequence)))")
            }
            return statements
        }
    }
}

/// `INSERT INTO table (columns) VALUES (…)` with the row's values for the columns the table has.
func insert(_ row: SnapshotRow, columns: [String], hashed: Bool, literal: (Value) -> String) -> String {
    let present = row.values.filter { columns.contains($0.0) }
    let values = present.map { sql($0.1, hashed: hashed, literal: literal) }
    return
        "INSERT INTO \(row.table) (\(present.map(\.0).joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
}

/// A value as SQL: a rollup's user as its keyed hash once the rollups are keyed (`hashed`), else `literal`.
func sql(_ value: Value, hashed: Bool, literal: (Value) -> String) -> String {
    guard case .user(let project, let id) = value else { return literal(value) }
    guard hashed, let key = SnapshotData.identityKeys[project] else { return literal(.text(id)) }
    let hasher = IdentityHashers.hmacSHA256.hasher(key: hexBytes(key))
    return literal(.text(RollupUser.key(of: id, hasher: hasher)))
}

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = hex.startIndex
    while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex) {
        bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
        index = next
    }
    return bytes
}

func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "''") + "'" }

func sqliteLiteral(_ value: Value) -> String {
    switch value {
    case .null: "NULL"
    case .int(let int): String(int)
    case .real(let real): "\(real)"
    case .text(let text): quoted(text)
    case .hex(let hex): "X'\(hex)'"
    case .bool(let flag): flag ? "1" : "0"
    case .user(_, let id): quoted(id)
    }
}

/// PostgreSQL reads an untyped quoted literal as the column's type: `'1'` as a boolean, `'\x…'` as bytea.
func postgresLiteral(_ value: Value) -> String {
    switch value {
    case .null: "NULL"
    case .int(let int): String(int)
    case .real(let real): "\(real)"
    case .text(let text): quoted(text)
    case .hex(let hex): "'\\x\(hex)'"
    case .bool(let flag): flag ? "true" : "false"
    case .user(_, let id): quoted(id)
    }
}
