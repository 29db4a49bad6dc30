import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dashboard sessions on PostgreSQL (`admin_sessions`): any node answers for a session another node made.
public struct PostgresAdminSessionStore: AdminSessionStore {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    public func createSession(
        tokenHash: SecretHash, adminTokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    )
        async throws -> AdminSession?
    {
        let logger = database.logger
        let created = Millis.from(createdAt)
        let expires = Millis.from(expiresAt)
        return try await database.write { connection in
            // FOR SHARE holds the admin credential's row until this transaction ends: a rotation's DELETE of it waits
            // for us, then its DELETE of admin_sessions sees our row; or we wait for the rotation and find no row.
            let current = try await PostgresRows.count(
                connection.query(
                    "SELECT 1 FROM credentials WHERE hash = \(adminTokenHash.hex) AND kind = 'admin' FOR SHARE",
                    logger: logger))
            guard current > 0 else { return nil }
            let rows = try await connection.query(
                """
                INSERT INTO admin_sessions (token_hash, secret, created_at, expires_at)
                VALUES (\(tokenHash.hex), \(secret), \(created), \(expires)) RETURNING id
                """, logger: logger)
            for try await id in rows.decode(Int64.self) {
                return AdminSession(
                    id: AdminSessionID(id), createdAt: Millis.date(created), expiresAt: Millis.date(expires),
                    secret: secret)
            }
            throw StorageError(.conflict, "the session was not stored")
        }
    }

    public func session(tokenHash: SecretHash, now: Date) async throws -> AdminSession? {
        let logger = database.logger
        let now = Millis.from(now)
        return try await database.read { connection in
            let rows = try await connection.query(
                "SELECT id, created_at, expires_at, secret, person_id FROM admin_sessions WHERE token_hash = \(tokenHash.hex) AND expires_at > \(now)",
                logger: logger)
            for try await (id, created, expires, secret, person) in rows.decode(
                (Int64, Int64, Int64, String, Int64?).self)
            {
                return AdminSession(
                    id: AdminSessionID(id), createdAt: Millis.date(created), expiresAt: Millis.date(expires),
                    secret: secret, person: person.map(PersonID.init(rawValue:)))
            }
            return nil
        }
    }

    public func revokeSession(tokenHash: SecretHash) async throws {
        let logger = database.logger
        try await database.write { connection in
            try await connection.query("DELETE FROM admin_sessions WHERE token_hash = \(tokenHash.hex)", logger: logger)
        }
    }

    @discardableResult
    public func pruneSessions(expiredBefore date: Date) async throws -> Int {
        let logger = database.logger
        let cutoff = Millis.from(date)
        return try await database.write { connection in
            try await PostgresRows.count(
                connection.query("DELETE FROM admin_sessions WHERE expires_at <= \(cutoff) RETURNING 1", logger: logger)
            )
        }
    }
}

/// Small helpers over row sequences.
enum PostgresRows {
    /// How many rows `rows` has (for `… RETURNING 1`: how many rows a statement changed).
    static func count(_ rows: PostgresRowSequence) async throws -> Int {
        var count = 0
        for try await _ in rows { count &+= 1 }
        return count
    }
}
