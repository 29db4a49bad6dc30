import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Personal API tokens on PostgreSQL (`personal_tokens`, migration `pg18-personal-tokens-totp`): a token made on one
/// node works on every node at once, and a revocation ends it everywhere at once.
extension PostgresPeopleStore: PersonalTokenStore {
    static let tokenColumns = "id, person_id, name, scopes, created_at, last_used_at, expires_at"
    typealias TokenRow = (Int64, Int64, String, String, Int64, Int64?, Int64?)

    static func token(_ row: TokenRow) -> PersonalToken {
        let (id, person, name, scopes, created, used, expires) = row
        return PersonalToken(
            id: PersonalTokenID(id), person: PersonID(person), name: name, scopes: TokenScope.decode(scopes),
            createdAt: Millis.date(created), lastUsedAt: used.map(Millis.date), expiresAt: expires.map(Millis.date))
    }

    static func tokens(_ query: PostgresQuery, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> [PersonalToken]
    {
        var out: [PersonalToken] = []
        for try await row in try await connection.query(query, logger: logger).decode(TokenRow.self) {
            out.append(token(row))
        }
        return out
    }

    public func createToken(
        person: PersonID, name: String, scopes: Set<TokenScope>, tokenHash: SecretHash, createdAt: Date,
        expiresAt: Date?
    ) async throws -> PersonalToken? {
        let logger = database.logger
        let created = Millis.from(createdAt)
        let expires = expiresAt.map(Millis.from)
        return try await database.write { connection in
            // FOR SHARE: a removal waits for this transaction (then cascades to the token), or we find no person.
            let exists = try await PostgresRows.count(
                connection.query("SELECT 1 FROM people WHERE id = \(person.rawValue) FOR SHARE", logger: logger))
            guard exists > 0 else { return nil }
            return try await Self.tokens(
                """
                INSERT INTO personal_tokens (person_id, name, token_hash, scopes, created_at, expires_at)
                VALUES (\(person.rawValue), \(name), \(tokenHash.hex), \(TokenScope.encode(scopes)), \(created), \(expires))
                RETURNING \(unescaped: Self.tokenColumns)
                """, connection, logger
            ).first
        }
    }

    public func useToken(tokenHash: SecretHash, now: Date) async throws -> (PersonalToken, Person)? {
        let logger = database.logger
        let nowMillis = Millis.from(now)
        let found = try await database.read { connection -> (PersonalToken, Person)? in
            guard
                let token = try await Self.tokens(
                    """
                    SELECT \(unescaped: Self.tokenColumns) FROM personal_tokens
                    WHERE token_hash = \(tokenHash.hex) AND (expires_at IS NULL OR expires_at > \(nowMillis))
                    """, connection, logger
                ).first,
                let person = try await Self.people(
                    "SELECT \(unescaped: Self.columns) FROM people WHERE id = \(token.person.rawValue)", connection,
                    logger
                ).first
            else { return nil }
            return (token, person)
        }
        guard let found else { return nil }
        if found.0.lastUsedAt.map({ now.timeIntervalSince($0) >= 60 }) ?? true {
            try await database.write { connection in
                try await connection.query(
                    "UPDATE personal_tokens SET last_used_at = \(nowMillis) WHERE id = \(found.0.id.rawValue)",
                    logger: logger)
            }
        }
        return found
    }

    public func tokens(of person: PersonID?) async throws -> [PersonalToken] {
        let logger = database.logger
        let id = person?.rawValue
        return try await database.read { connection in
            try await Self.tokens(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM personal_tokens
                WHERE \(id)::bigint IS NULL OR person_id = \(id) ORDER BY id DESC
                """, connection, logger)
        }
    }

    public func revokeToken(_ id: PersonalTokenID, of person: PersonID?) async throws -> Bool {
        let logger = database.logger
        let owner = person?.rawValue
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM personal_tokens WHERE id = \(id.rawValue) AND (\(owner)::bigint IS NULL OR person_id = \(owner))
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }
}

/// A person's own changes on PostgreSQL: password (`people.password_hash`), second factor (`second_factors`,
/// `recovery_codes`).
extension PostgresPeopleStore: AccountStore {
    public func setPassword(person: PersonID, passwordHash: String, keeping keep: AdminSessionID?) async throws -> Bool
    {
        let logger = database.logger
        let kept = keep?.rawValue
        return try await database.write { connection in
            let changed = try await PostgresRows.count(
                connection.query(
                    "UPDATE people SET password_hash = \(passwordHash) WHERE id = \(person.rawValue) RETURNING 1",
                    logger: logger))
            guard changed > 0 else { return false }
            try await connection.query(
                """
                DELETE FROM admin_sessions WHERE person_id = \(person.rawValue) AND id IS DISTINCT FROM \(kept)::bigint
                """, logger: logger)
            return true
        }
    }

    public func secondFactor(of person: PersonID) async throws -> SecondFactor? {
        let logger = database.logger
        return try await database.read { connection in
            for try await (secret, confirmed, step, left) in try await connection.query(
                """
                SELECT secret, confirmed_at, last_step,
                       (SELECT count(*) FROM recovery_codes WHERE person_id = \(person.rawValue))
                FROM second_factors WHERE person_id = \(person.rawValue)
                """, logger: logger
            ).decode((String, Int64?, Int64, Int64).self) {
                return SecondFactor(
                    secret: secret, confirmed: confirmed != nil, lastStep: step, recoveryCodesLeft: Int(left))
            }
            return nil
        }
    }

    public func beginSecondFactor(person: PersonID, secret: String) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            let exists = try await PostgresRows.count(
                connection.query("SELECT 1 FROM people WHERE id = \(person.rawValue) FOR SHARE", logger: logger))
            guard exists > 0 else { return false }
            return try await PostgresRows.count(
                connection.query(
                    """
                    INSERT INTO second_factors (person_id, secret) VALUES (\(person.rawValue), \(secret))
                    ON CONFLICT (person_id) DO UPDATE SET secret = excluded.secret, last_step = 0
                    WHERE second_factors.confirmed_at IS NULL
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func confirmSecondFactor(person: PersonID, step: Int64, recoveryCodeHashes: [SecretHash], at date: Date)
        async throws -> Bool
    {
        let logger = database.logger
        let hashes = recoveryCodeHashes.map(\.hex)
        return try await database.write { connection in
            let changed = try await PostgresRows.count(
                connection.query(
                    """
                    UPDATE second_factors SET confirmed_at = \(Millis.from(date)), last_step = \(step)
                    WHERE person_id = \(person.rawValue) AND confirmed_at IS NULL RETURNING 1
                    """, logger: logger))
            guard changed > 0 else { return false }
            try await connection.query(
                "DELETE FROM recovery_codes WHERE person_id = \(person.rawValue)", logger: logger)
            try await connection.query(
                """
                INSERT INTO recovery_codes (person_id, code_hash)
                SELECT \(person.rawValue), h FROM unnest(\(hashes)::text[]) AS h ON CONFLICT DO NOTHING
                """, logger: logger)
            return true
        }
    }

    public func useSecondFactorStep(person: PersonID, step: Int64) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    """
                    UPDATE second_factors SET last_step = \(step)
                    WHERE person_id = \(person.rawValue) AND last_step < \(step) AND confirmed_at IS NOT NULL
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func useRecoveryCode(person: PersonID, hash: SecretHash) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM recovery_codes WHERE person_id = \(person.rawValue) AND code_hash = \(hash.hex)
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func removeSecondFactor(person: PersonID) async throws -> Bool {
        let logger = database.logger
        return try await database.write { connection in
            try await connection.query(
                "DELETE FROM recovery_codes WHERE person_id = \(person.rawValue)", logger: logger)
            return try await PostgresRows.count(
                connection.query(
                    "DELETE FROM second_factors WHERE person_id = \(person.rawValue) RETURNING 1", logger: logger)) > 0
        }
    }

    // Login tickets (`login_tickets`, migration `pg22-login-tickets`).

    public func createLoginTicket(_ ticket: SecretHash, person: PersonID, expiresAt: Date, now: Date) async throws {
        let logger = database.logger
        let (hash, nowMS, expires) = (ticket.hex, Millis.from(now), Millis.from(expiresAt))
        try await database.write { connection in
            try await connection.query("DELETE FROM login_tickets WHERE expires_at <= \(nowMS)", logger: logger)
            try await connection.query(
                """
                INSERT INTO login_tickets (ticket_hash, person_id, expires_at)
                VALUES (\(hash), \(person.rawValue), \(expires))
                """, logger: logger)
        }
    }

    public func loginTicket(_ ticket: SecretHash, now: Date) async throws -> PersonID? {
        let logger = database.logger
        let (hash, nowMS) = (ticket.hex, Millis.from(now))
        return try await database.read { connection in
            for try await person in try await connection.query(
                "SELECT person_id FROM login_tickets WHERE ticket_hash = \(hash) AND expires_at > \(nowMS)",
                logger: logger
            ).decode(Int64.self) {
                return PersonID(person)
            }
            return nil
        }
    }

    public func spendLoginTicket(_ ticket: SecretHash, person: PersonID, now: Date) async throws -> Bool {
        let logger = database.logger
        let (hash, nowMS) = (ticket.hex, Millis.from(now))
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query(
                    """
                    DELETE FROM login_tickets
                    WHERE ticket_hash = \(hash) AND person_id = \(person.rawValue) AND expires_at > \(nowMS)
                    RETURNING 1
                    """, logger: logger)) > 0
        }
    }

    public func failLoginTicket(_ ticket: SecretHash, limit: Int) async throws {
        let logger = database.logger
        let hash = ticket.hex
        try await database.write { connection in
            try await connection.query(
                "UPDATE login_tickets SET failures = failures + 1 WHERE ticket_hash = \(hash)", logger: logger)
            try await connection.query(
                "DELETE FROM login_tickets WHERE ticket_hash = \(hash) AND failures >= \(limit)", logger: logger)
        }
    }
}
