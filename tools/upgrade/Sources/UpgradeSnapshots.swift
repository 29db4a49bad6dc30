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
            let snapshot = try SQLiteSchemaSnapshot(path: path, upTo: schema)
            let hashed = snapshot.applied.contains("v24-hashed-rollup-users")
            var statements: [String] = []
            for row in SnapshotData.rows {
                if let since = row.since, !snapshot.applied.contains(since) { continue }
                guard let columns = try snapshot.columns(row.table) else { continue }
                statements.append(insert(row, columns: columns, hashed: hashed, literal: sqliteLiteral))
            }
            for (table, statement) in SnapshotData.updates where try snapshot.columns(table) != nil {
                statements.append(statement)
            }
            try snapshot.execute(statements.joined(separator: ";\n"))
            let text = try snapshot.dump(
                header: "-- Faultline upgrade snapshot: SQLite at \(schema) (made by tools/upgrade/make-snapshots)")
            try snapshot.close()
            try Data(text.utf8).write(to: URL(fileURLWithPath: out))
        }
    }

    /// Fills an empty PostgreSQL database at one version (the script dumps it with `pg_dump`).
    struct Postgres: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "postgres")
        @Option(help: "The migration to stop after (the schema version).") var schema: String
        @Option(help: "The empty database: postgres://…") var url: String

        func run() async throws {
            let snapshot = try await PostgresSchemaSnapshot(url: url, upTo: schema, identities: .hmacSHA256)
            let hashed = snapshot.applied.contains("pg9-hashed-rollup-users")
            var statements: [String] = []
            for row in SnapshotData.rows {
                if let twin = row.since.flatMap({ SnapshotData.postgresTwins[$0] }), !snapshot.applied.contains(twin) {
                    continue
                }
                guard let columns = try await snapshot.columns(row.table) else { continue }
                statements.append(insert(row, columns: columns, hashed: hashed, literal: postgresLiteral))
            }
            for (table, statement) in SnapshotData.updates where try await snapshot.columns(table) != nil {
                statements.append(statement)
            }
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
            do {
                try await snapshot.execute(statements)
            } catch {
                await snapshot.close()
                throw error
            }
            await snapshot.close()
        }
    }
}

/// `INSERT INTO table (columns) VALUES (…)` with the row's values for the columns the table has.
func insert(_ row: SnapshotRow, columns: [String], hashed: Bool, literal: (Value) -> String) -> String {
    let present = row.values.filter { columns.contains($0.0) }
    let values = present.map { name, value -> String in
        if case .user(let project, let id) = value {
            guard hashed, let key = SnapshotData.identityKeys[project] else { return literal(.text(id)) }
            let hasher = IdentityHashers.hmacSHA256.hasher(key: hexBytes(key))
            return literal(.text(RollupUser.key(of: id, hasher: hasher)))
        }
        return literal(value)
    }
    return
        "INSERT INTO \(row.table) (\(present.map(\.0).joined(separator: ", "))) VALUES (\(values.joined(separator: ", ")))"
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
