import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// People, their roles and invites on PostgreSQL (`people`, `memberships`, `invites`; migration `pg15-people`):
/// any node answers for a person another node invited or signed in.
public struct PostgresPeopleStore: PeopleStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    /// The columns of a ``PersonRow``.
    static let columns = "id, login, name, owner, password_hash, created_at"
    typealias PersonRow = (Int64, String, String, Bool, String?, Int64)

    /// The person of a row of ``columns``, with their memberships.
    static func person(_ row: PersonRow, _ connection: PostgresConnection, _ logger: Logger) async throws -> Person? {
        let (id, rawLogin, name, owner, hash, created) = row
        guard let login = PersonLogin(rawValue: rawLogin) else { return nil }
        var memberships: [Membership] = []
        for try await (project, rawRole) in try await connection.query(
            "SELECT project_id, role FROM memberships WHERE person_id = \(id) ORDER BY project_id", logger: logger
        ).decode((Int64, String).self) {
            if let role = ProjectRole(rawValue: rawRole) {
                memberships.append(Membership(project: ProjectID(rawValue: project), role: role))
            }
        }
        return Person(
            id: PersonID(id), login: login, name: name, owner: owner, passwordHash: hash,
            createdAt: Millis.date(created), memberships: memberships)
    }

    /// The people `query` selects (``columns``).
    static func people(_ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> [Person]
    {
        var rows: [PersonRow] = []
        for try await row in try await connection.query(query, logger: logger).decode(PersonRow.self) {
            rows.append(row)
        }
        var out: [Person] = []
        for row in rows {
            if let person = try await person(row, connection, logger) { out.append(person) }
        }
        return out
    }

    public func ensurePerson(login: PersonLogin, name: String, owner: Bool, at date: Date) async throws -> Person {
        let logger = database.logger
        return try await database.write { connection in
            try await connection.query(
                """
                INSERT INTO people (login, name, owner, created_at) VALUES (\(login.rawValue), \(name), \(owner), \(Millis.from(date)))
                ON CONFLICT (login) DO NOTHING
                """, logger: logger)
            guard
                let person = try await Self.people(
                    "SELECT \(unescaped: Self.columns) FROM people WHERE login = \(login.rawValue)",
                    connection, logger
                ).first
            else { throw StorageError(.conflict, "the person was not stored") }
            return person
        }
    }

    public func person(id: PersonID) async throws -> Person? {
        let logger = database.logger
        return try await database.read { connection in
            try await Self.people(
                "SELECT \(unescaped: Self.columns) FROM people WHERE id = \(id.rawValue)",
                connection, logger
            ).first
        }
    }

    public func person(login: PersonLogin) async throws -> Person? {
        let logger = database.logger
        return try await database.read { connection in
            try await Self.people(
                "SELECT \(unescaped: Self.columns) FROM people WHERE login = \(login.rawValue)",
                connection, logger
            ).first
        }
    }

    public func allPeople() async throws -> [Person] {
        let logger = database.logger
        return try await database.read { connection in
            try await Self.people(
                "SELECT \(unescaped: Self.columns) FROM people ORDER BY login", connection,
                logger)
        }
    }

    public func setRole(_ role: ProjectRole, person: PersonID, project: ProjectID) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            // Inserts only when both rows exist (a missing one leaves the SELECT empty).
            try await PostgresRows.count(
                connection.query(
                    """
                    INSERT INTO memberships (person_id, project_id, role)
                    SELECT p.id, j.id, \(role.rawValue) FROM people p, projects j
                    WHERE p.id = \(person.rawValue) AND j.id = \(project.rawValue)
                    ON CONFLICT (person_id, project_id) DO UPDATE SET role = excluded.role
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func removeMembership(person: PersonID, project: ProjectID) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    "DELETE FROM memberships WHERE person_id = \(person.rawValue) AND project_id = \(project.rawValue) RETURNING 1",
                    logger: logger)) > 0
        }
    }

    public func setOwner(_ owner: Bool, person: PersonID) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    "UPDATE people SET owner = \(owner) WHERE id = \(person.rawValue) RETURNING 1", logger: logger)) > 0
        }
    }

    public func removePerson(_ person: PersonID) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            // The cascade takes memberships, invites and sessions with the row, in this transaction.
            try await PostgresRows.count(
                connection.query("DELETE FROM people WHERE id = \(person.rawValue) RETURNING 1", logger: logger)) > 0
        }
    }

    public func createInvite(tokenHash: SecretHash, person: PersonID, createdAt: Date, expiresAt: Date) async throws {
        let logger = database.logger
        try await database.write { connection in
            try await connection.query(
                """
                INSERT INTO invites (token_hash, person_id, created_at, expires_at)
                VALUES (\(tokenHash.hex), \(person.rawValue), \(Millis.from(createdAt)), \(Millis.from(expiresAt)))
                """, logger: logger)
        }
    }

    public func invite(tokenHash: SecretHash, now: Date) async throws -> Invite? {
        let logger = database.logger
        return try await database.read { connection in
            for try await (person, expires) in try await connection.query(
                "SELECT person_id, expires_at FROM invites WHERE token_hash = \(tokenHash.hex) AND expires_at > \(Millis.from(now))",
                logger: logger
            ).decode((Int64, Int64).self) {
                return Invite(person: PersonID(person), expiresAt: Millis.date(expires))
            }
            return nil
        }
    }

    public func acceptInvite(tokenHash: SecretHash, passwordHash: String, name: String?, now: Date) async throws
        -> Person?
    {
        let logger = database.logger
        return try await database.write { connection in
            // DELETE … RETURNING claims the row: of two submissions of one link, the second finds none.
            var claimed: Int64?
            for try await person in try await connection.query(
                "DELETE FROM invites WHERE token_hash = \(tokenHash.hex) AND expires_at > \(Millis.from(now)) RETURNING person_id",
                logger: logger
            ).decode(Int64.self) {
                claimed = person
            }
            guard let person = claimed else { return nil }
            try await connection.query("DELETE FROM invites WHERE person_id = \(person)", logger: logger)
            try await connection.query(
                "UPDATE people SET password_hash = \(passwordHash) WHERE id = \(person)", logger: logger)
            if let name {
                try await connection.query("UPDATE people SET name = \(name) WHERE id = \(person)", logger: logger)
            }
            return try await Self.people(
                "SELECT \(unescaped: Self.columns) FROM people WHERE id = \(person)",
                connection, logger
            ).first
        }
    }

    public func createPersonSession(
        person: PersonID, tokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    ) async throws -> AdminSession? {
        let logger = database.logger
        let created = Millis.from(createdAt)
        let expires = Millis.from(expiresAt)
        return try await database.write { connection in
            // FOR SHARE holds the person's row until this transaction ends: a removal's DELETE waits for us and then
            // cascades to our session; or we wait for the removal and find no row.
            let exists = try await PostgresRows.count(
                connection.query("SELECT 1 FROM people WHERE id = \(person.rawValue) FOR SHARE", logger: logger))
            guard exists > 0 else { return nil }
            for try await id in try await connection.query(
                """
                INSERT INTO admin_sessions (token_hash, secret, created_at, expires_at, person_id)
                VALUES (\(tokenHash.hex), \(secret), \(created), \(expires), \(person.rawValue)) RETURNING id
                """, logger: logger
            ).decode(Int64.self) {
                return AdminSession(
                    id: AdminSessionID(id), createdAt: Millis.date(created), expiresAt: Millis.date(expires),
                    secret: secret, person: person)
            }
            throw StorageError(.conflict, "the session was not stored")
        }
    }
}
