import FaultlineCore
import PostgresNIO

/// The audit trail on PostgreSQL (`audit_log`, migration `pg19-audit`): rows are only added; any node reads what
/// another recorded.
public struct PostgresAuditTrail: AuditTrail {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    @discardableResult public func record(_ entry: AuditEntry) async throws -> Int64 {
        let actor = entry.origin.actor
        let logger = database.logger
        return try await database.write { connection in
            let rows = try await connection.query(
                """
                INSERT INTO audit_log (project_id, at, actor_kind, actor_person_id, actor_name, actor_token, address,
                    kind, subject, before_value, after_value)
                VALUES (\(entry.project?.rawValue), \(Millis.from(entry.at)), \(actor.kind), \(actor.person?.rawValue),
                    \(actor.storedName), \(actor.storedToken), \(entry.origin.address), \(entry.kind.rawValue),
                    \(entry.subject), \(entry.before), \(entry.after))
                RETURNING id
                """, logger: logger)
            for try await id in rows.decode(Int64.self) { return id }
            throw StorageError(.conflict, "the audit entry was not stored")
        }
    }

    public func entries(_ query: AuditQuery) async throws -> [AuditRecord] {
        var arguments = PostgresArguments()
        var conditions: [String] = []
        if let project = query.project { conditions.append("project_id = \(arguments.bind(project.rawValue))") }
        if let kind = query.kind, let prefix = query.kindPrefix {
            conditions.append("(kind = \(arguments.bind(kind)) OR starts_with(kind, \(arguments.bind(prefix))))")
        }
        if let before = query.before { conditions.append("id < \(arguments.bind(before))") }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        // The limit is bound before the statement takes the bindings.
        let sql = """
            SELECT id, project_id, at, actor_kind, actor_person_id, actor_name, actor_token, address, kind,
                subject, before_value, after_value
            FROM audit_log \(filter) ORDER BY id DESC LIMIT \(arguments.bind(query.limit))
            """
        let statement = arguments.query(sql)
        typealias Row = (
            Int64, Int64?, Int64, String, Int64?, String?, String?, String?, String, String?, String?, String?
        )
        let logger = database.logger
        return try await database.read { connection in
            var out: [AuditRecord] = []
            for try await row in try await connection.query(statement, logger: logger).decode(Row.self) {
                let record = AuditRecord(
                    id: row.0, project: row.1, at: row.2, actorKind: row.3, actorPerson: row.4, actorName: row.5,
                    actorToken: row.6, address: row.7, kind: row.8, subject: row.9, before: row.10, after: row.11)
                if let record { out.append(record) }
            }
            return out
        }
    }
}
