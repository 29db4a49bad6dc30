import FaultlineCore
import GRDB

/// The audit trail on SQLite (`audit_log`, migration `v34-audit`): rows are only added.
public struct SQLiteAuditTrail: AuditTrail {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    @discardableResult public func record(_ entry: AuditEntry) async throws -> Int64 {
        let actor = entry.origin.actor
        return try await database.pool.write { db in
            try db.execute(
                sql: """
                    INSERT INTO audit_log (project_id, at, actor_kind, actor_person_id, actor_name, actor_token, address,
                        kind, subject, before_value, after_value)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    entry.project?.rawValue, Millis.from(entry.at), actor.kind, actor.person?.rawValue,
                    actor.storedName, actor.storedToken, entry.origin.address, entry.kind.rawValue, entry.subject,
                    entry.before, entry.after,
                ])
            return db.lastInsertedRowID
        }
    }

    public func entries(_ query: AuditQuery) async throws -> [AuditRecord] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let project = query.project {
            conditions.append("project_id = ?")
            _ = arguments.append(contentsOf: [project.rawValue])
        }
        if let kind = query.kind, let prefix = query.kindPrefix {
            conditions.append("(kind = ? OR substr(kind, 1, ?) = ?)")
            _ = arguments.append(contentsOf: [kind, prefix.utf8.count, prefix])
        }
        if let before = query.before {
            conditions.append("id < ?")
            _ = arguments.append(contentsOf: [before])
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        _ = arguments.append(contentsOf: [query.limit])
        let bound = arguments
        return try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, project_id, at, actor_kind, actor_person_id, actor_name, actor_token, address, kind,
                        subject, before_value, after_value
                    FROM audit_log \(filter) ORDER BY id DESC LIMIT ?
                    """, arguments: bound
            ).compactMap { row in
                AuditRecord(
                    id: row["id"], project: row["project_id"], at: row["at"], actorKind: row["actor_kind"],
                    actorPerson: row["actor_person_id"], actorName: row["actor_name"], actorToken: row["actor_token"],
                    address: row["address"], kind: row["kind"], subject: row["subject"], before: row["before_value"],
                    after: row["after_value"])
            }
        }
    }
}
