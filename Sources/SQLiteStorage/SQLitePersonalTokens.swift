import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Personal API tokens on SQLite (`personal_tokens`, migration `v33-personal-tokens-totp`).
extension SQLitePeopleStore: PersonalTokenStore {
    static let tokenColumns = "id, person_id, name, scopes, created_at, last_used_at, expires_at"

    static func token(_ row: Row) -> PersonalToken {
        PersonalToken(
            id: PersonalTokenID(row["id"]), person: PersonID(row["person_id"]), name: row["name"],
            scopes: TokenScope.decode(row["scopes"]), createdAt: Millis.date(row["created_at"]),
            lastUsedAt: (row["last_used_at"] as Int64?).map(Millis.date),
            expiresAt: (row["expires_at"] as Int64?).map(Millis.date))
    }

    public func createToken(
        person: PersonID, name: String, scopes: Set<TokenScope>, tokenHash: SecretHash, createdAt: Date,
        expiresAt: Date?
    ) async throws -> PersonalToken? {
        try await database.pool.write { db in
            guard
                try Int.fetchOne(db, sql: "SELECT count(*) FROM people WHERE id = ?", arguments: [person.rawValue]) == 1
            else { return nil }
            try db.execute(
                sql: """
                    INSERT INTO personal_tokens (person_id, name, token_hash, scopes, created_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    person.rawValue, name, tokenHash.hex, TokenScope.encode(scopes), Millis.from(createdAt),
                    expiresAt.map(Millis.from),
                ])
            let row = try Row.fetchOne(
                db, sql: "SELECT \(Self.tokenColumns) FROM personal_tokens WHERE id = ?",
                arguments: [db.lastInsertedRowID])
            return row.map(Self.token)
        }
    }

    public func useToken(tokenHash: SecretHash, now: Date) async throws -> (PersonalToken, Person)? {
        let nowMillis = Millis.from(now)
        let found = try await database.pool.read { db -> (PersonalToken, Person)? in
            guard
                let row = try Row.fetchOne(
                    db,
                    sql: """
                        SELECT \(Self.tokenColumns) FROM personal_tokens
                        WHERE token_hash = ? AND (expires_at IS NULL OR expires_at > ?)
                        """, arguments: [tokenHash.hex, nowMillis])
            else { return nil }
            let token = Self.token(row)
            guard let person = try Self.person(id: token.person.rawValue, db) else { return nil }
            return (token, person)
        }
        guard let found else { return nil }
        if found.0.lastUsedAt.map({ now.timeIntervalSince($0) >= 60 }) ?? true {
            try await database.pool.write { db in
                try db.execute(
                    sql: "UPDATE personal_tokens SET last_used_at = ? WHERE id = ?",
                    arguments: [nowMillis, found.0.id.rawValue])
            }
        }
        return found
    }

    public func tokens(of person: PersonID?) async throws -> [PersonalToken] {
        try await database.pool.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.tokenColumns) FROM personal_tokens WHERE ? IS NULL OR person_id = ?
                    ORDER BY id DESC
                    """, arguments: [person?.rawValue, person?.rawValue]
            ).map(Self.token)
        }
    }

    public func revokeToken(_ id: PersonalTokenID, of person: PersonID?) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "DELETE FROM personal_tokens WHERE id = ? AND (? IS NULL OR person_id = ?)",
                arguments: [id.rawValue, person?.rawValue, person?.rawValue])
            return db.changesCount > 0
        }
    }
}

/// A person's own changes on SQLite: password (`people.password_hash`), second factor (`second_factors`,
/// `recovery_codes`).
extension SQLitePeopleStore: AccountStore {
    public func setPassword(person: PersonID, passwordHash: String, keeping keep: AdminSessionID?) async throws -> Bool
    {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE people SET password_hash = ? WHERE id = ?", arguments: [passwordHash, person.rawValue])
            guard db.changesCount > 0 else { return false }
            try db.execute(
                sql: "DELETE FROM admin_sessions WHERE person_id = ? AND id IS NOT ?",
                arguments: [person.rawValue, keep?.rawValue])
            return true
        }
    }

    public func secondFactor(of person: PersonID) async throws -> SecondFactor? {
        try await database.pool.read { db in
            guard
                let row = try Row.fetchOne(
                    db, sql: "SELECT secret, confirmed_at, last_step FROM second_factors WHERE person_id = ?",
                    arguments: [person.rawValue])
            else { return nil }
            let left =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM recovery_codes WHERE person_id = ?", arguments: [person.rawValue])
                ?? 0
            return SecondFactor(
                secret: row["secret"], confirmed: (row["confirmed_at"] as Int64?) != nil, lastStep: row["last_step"],
                recoveryCodesLeft: left)
        }
    }

    public func beginSecondFactor(person: PersonID, secret: String) async throws -> Bool {
        try await database.pool.write { db in
            guard
                try Int.fetchOne(db, sql: "SELECT count(*) FROM people WHERE id = ?", arguments: [person.rawValue]) == 1
            else { return false }
            try db.execute(
                sql: """
                    INSERT INTO second_factors (person_id, secret) VALUES (?, ?)
                    ON CONFLICT (person_id) DO UPDATE SET secret = excluded.secret, last_step = 0
                    WHERE second_factors.confirmed_at IS NULL
                    """, arguments: [person.rawValue, secret])
            return db.changesCount > 0
        }
    }

    public func confirmSecondFactor(person: PersonID, step: Int64, recoveryCodeHashes: [SecretHash], at date: Date)
        async throws -> Bool
    {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE second_factors SET confirmed_at = ?, last_step = ?
                    WHERE person_id = ? AND confirmed_at IS NULL
                    """, arguments: [Millis.from(date), step, person.rawValue])
            guard db.changesCount > 0 else { return false }
            try db.execute(sql: "DELETE FROM recovery_codes WHERE person_id = ?", arguments: [person.rawValue])
            for hash in recoveryCodeHashes {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO recovery_codes (person_id, code_hash) VALUES (?, ?)",
                    arguments: [person.rawValue, hash.hex])
            }
            return true
        }
    }

    public func useSecondFactorStep(person: PersonID, step: Int64) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: """
                    UPDATE second_factors SET last_step = ?
                    WHERE person_id = ? AND last_step < ? AND confirmed_at IS NOT NULL
                    """, arguments: [step, person.rawValue, step])
            return db.changesCount > 0
        }
    }

    public func useRecoveryCode(person: PersonID, hash: SecretHash) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "DELETE FROM recovery_codes WHERE person_id = ? AND code_hash = ?",
                arguments: [person.rawValue, hash.hex])
            return db.changesCount > 0
        }
    }

    public func removeSecondFactor(person: PersonID) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM recovery_codes WHERE person_id = ?", arguments: [person.rawValue])
            try db.execute(sql: "DELETE FROM second_factors WHERE person_id = ?", arguments: [person.rawValue])
            return db.changesCount > 0
        }
    }

    // Login tickets (`login_tickets`, migration `v37-login-tickets`).

    public func createLoginTicket(_ ticket: SecretHash, person: PersonID, expiresAt: Date, now: Date) async throws {
        try await database.pool.write { db in
            try db.execute(sql: "DELETE FROM login_tickets WHERE expires_at <= ?", arguments: [Millis.from(now)])
            try db.execute(
                sql: "INSERT INTO login_tickets (ticket_hash, person_id, expires_at) VALUES (?, ?, ?)",
                arguments: [ticket.hex, person.rawValue, Millis.from(expiresAt)])
        }
    }

    public func loginTicket(_ ticket: SecretHash, now: Date) async throws -> PersonID? {
        try await database.pool.read { db in
            try Int64.fetchOne(
                db, sql: "SELECT person_id FROM login_tickets WHERE ticket_hash = ? AND expires_at > ?",
                arguments: [ticket.hex, Millis.from(now)]
            ).map(PersonID.init(rawValue:))
        }
    }

    public func spendLoginTicket(_ ticket: SecretHash, person: PersonID, now: Date) async throws -> Bool {
        try await database.pool.write { db in
            try db.execute(
                sql: "DELETE FROM login_tickets WHERE ticket_hash = ? AND person_id = ? AND expires_at > ?",
                arguments: [ticket.hex, person.rawValue, Millis.from(now)])
            return db.changesCount > 0
        }
    }

    public func failLoginTicket(_ ticket: SecretHash, limit: Int) async throws {
        try await database.pool.write { db in
            try db.execute(
                sql: "UPDATE login_tickets SET failures = failures + 1 WHERE ticket_hash = ?", arguments: [ticket.hex])
            try db.execute(
                sql: "DELETE FROM login_tickets WHERE ticket_hash = ? AND failures >= ?",
                arguments: [ticket.hex, limit])
        }
    }
}
