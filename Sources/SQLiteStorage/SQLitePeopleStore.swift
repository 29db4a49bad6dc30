import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// People, their roles and invites on SQLite (`people`, `memberships`, `invites`; migration `v30-people`). Sessions
/// of a person are rows of `admin_sessions` with their `person_id`.
public struct SQLitePeopleStore: PeopleStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    static let personColumns = "id, login, name, owner, password_hash, created_at"

    /// The person of a `personColumns` row, with their memberships read in `db`.
    static func person(_ row: Row, _ db: Database) throws -> Person? {
        let id: Int64 = row["id"]
        guard let login = PersonLogin(rawValue: row["login"]) else { return nil }
        let memberships = try Row.fetchAll(
            db, sql: "SELECT project_id, role FROM memberships WHERE person_id = ? ORDER BY project_id", arguments: [id]
        ).compactMap { row -> Membership? in
            guard let role = ProjectRole(rawValue: row["role"]) else { return nil }
            return Membership(project: ProjectID(rawValue: row["project_id"]), role: role)
        }
        return Person(
            id: PersonID(id), login: login, name: row["name"], owner: (row["owner"] as Int64) != 0,
            passwordHash: row["password_hash"], createdAt: Millis.date(row["created_at"]), memberships: memberships)
    }

    static func person(id: Int64, _ db: Database) throws -> Person? {
        guard let row = try Row.fetchOne(db, sql: "SELECT \(personColumns) FROM people WHERE id = ?", arguments: [id])
        else { return nil }
        return try person(row, db)
    }

    public func ensurePerson(login: PersonLogin, name: String, owner: Bool, at date: Date) async throws -> Person {
        try await database.pool.write { db in
            try db.execute(
                sql:
                    "INSERT INTO people (login, name, owner, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (login) DO NOTHING",
                arguments: [login.rawValue, name, owner ? 1 : 0, Millis.from(date)])
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT \(Self.personColumns) FROM people WHERE login = ?", arguments: [login.rawValue]),
                let person = try Self.person(row, db)
            else { throw StorageError(.conflict, "the person was not stored") }
            return person
        }
    }

    public func person(id: PersonID) async throws -> Person? {
        try await database.pool.read { db in try Self.person(id: id.rawValue, db) }
    }

    public func person(login: PersonLogin) async throws -> Person? {
        try await database.pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT \(Self.personColumns) FROM people WHERE login = ?", arguments: [login.rawValue])
            else { return nil }
            return try Self.person(row, db)
        }
    }

    public func allPeople() async throws -> [Person] {
        try await database.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT \(Self.personColumns) FROM people ORDER BY login").compactMap {
                try Self.person($0, db)
            }
        }
    }

    public func setRole(_ role: ProjectRole, person: PersonID, project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            let both = try Int.fetchOne(
                db,
                sql: "SELECT (SELECT count(*) FROM people WHERE id = ?) + (SELECT count(*) FROM projects WHERE id = ?)",
                arguments: [person.rawValue, project.rawValue])
            guard both == 2 else { return false }
            try db.execute(
                sql: """
                    INSERT INTO memberships (person_id, project_id, role) VALUES (?, ?, ?)
                    ON CONFLICT (person_id, project_id) DO UPDATE SET role = excluded.role
                    """, arguments: [person.rawValue, project.rawValue, role.rawValue])
            return true
        }
    }

    public func removeMembership(person: PersonID, project: ProjectID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "DELETE FROM memberships WHERE person_id = ? AND project_id = ?",
                arguments: [person.rawValue, project.rawValue])
            return db.changesCount > 0
        }
    }

    public func setOwner(_ owner: Bool, person: PersonID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE people SET owner = ? WHERE id = ?", arguments: [owner ? 1 : 0, person.rawValue])
            return db.changesCount > 0
        }
    }

    public func removePerson(_ person: PersonID) async throws -> Bool {
        try await database.pool.write { db in
            // The cascade deletes these too; said explicitly so that a database opened without foreign keys still
            // signs the person out.
            try db.execute(sql: "DELETE FROM admin_sessions WHERE person_id = ?", arguments: [person.rawValue])
            try db.execute(sql: "DELETE FROM invites WHERE person_id = ?", arguments: [person.rawValue])
            try db.execute(sql: "DELETE FROM memberships WHERE person_id = ?", arguments: [person.rawValue])
            try db.execute(sql: "DELETE FROM people WHERE id = ?", arguments: [person.rawValue])
            return db.changesCount > 0
        }
    }

    public func createInvite(tokenHash: SecretHash, person: PersonID, createdAt: Date, expiresAt: Date) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "INSERT INTO invites (token_hash, person_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
                arguments: [tokenHash.hex, person.rawValue, Millis.from(createdAt), Millis.from(expiresAt)])
        }
    }

    public func invite(tokenHash: SecretHash, now: Date) async throws -> Invite? {
        try await database.pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT person_id, expires_at FROM invites WHERE token_hash = ? AND expires_at > ?",
                    arguments: [tokenHash.hex, Millis.from(now)])
            else { return nil }
            return Invite(person: PersonID(row["person_id"]), expiresAt: Millis.date(row["expires_at"]))
        }
    }

    public func acceptInvite(tokenHash: SecretHash, passwordHash: String, name: String?, now: Date) async throws
        -> Person?
    {
        try await database.pool.write { db in
            guard
                let personID = try Int64.fetchOne(
                    db, sql: "SELECT person_id FROM invites WHERE token_hash = ? AND expires_at > ?",
                    arguments: [tokenHash.hex, Millis.from(now)])
            else { return nil }
            // Every link of this person ends: the one used, and any sent before it.
            try db.execute(sql: "DELETE FROM invites WHERE person_id = ?", arguments: [personID])
            try db.execute(
                sql: "UPDATE people SET password_hash = ? WHERE id = ?", arguments: [passwordHash, personID])
            if let name {
                try db.execute(sql: "UPDATE people SET name = ? WHERE id = ?", arguments: [name, personID])
            }
            return try Self.person(id: personID, db)
        }
    }

    public func createPersonSession(
        person: PersonID, tokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    ) async throws -> AdminSession? {
        try await database.pool.write { db in
            // One writer: a removal (which deletes the person's sessions) is wholly before or after this transaction.
            guard
                try Int.fetchOne(db, sql: "SELECT count(*) FROM people WHERE id = ?", arguments: [person.rawValue]) == 1
            else { return nil }
            let record = try SQLiteAdminSessionStore.Record(
                id: nil, tokenHash: tokenHash.hex, secret: secret, createdAt: Millis.from(createdAt),
                expiresAt: Millis.from(expiresAt), personID: person.rawValue
            ).insertAndFetch(db)
            guard let session = record.session else { throw StorageError(.conflict, "the session was not stored") }
            return session
        }
    }
}
