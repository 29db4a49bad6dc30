import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Dashboard sessions on SQLite (`admin_sessions`, migrations `v9-admin-sessions` and `v30-people`).
public struct SQLiteAdminSessionStore: AdminSessionStore {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    /// One row of `admin_sessions`.
    struct Record: Codable, FetchableRecord, PersistableRecord {
        static let databaseTableName = "admin_sessions"
        var id: Int64?
        var tokenHash: String
        var secret: String
        var createdAt: Int64
        var expiresAt: Int64
        /// The person signed in (migration `v30-people`); nil for the admin token's sessions.
        var personID: Int64?

        enum CodingKeys: String, CodingKey {
            case id, tokenHash = "token_hash", secret, createdAt = "created_at", expiresAt = "expires_at",
                personID = "person_id"
        }
        enum Columns {
            static let id = Column(CodingKeys.id)
            static let tokenHash = Column(CodingKeys.tokenHash)
            static let expiresAt = Column(CodingKeys.expiresAt)
        }

        var session: AdminSession? {
            guard let id else { return nil }
            return AdminSession(
                id: AdminSessionID(id), createdAt: Millis.date(createdAt), expiresAt: Millis.date(expiresAt),
                secret: secret, person: personID.map(PersonID.init(rawValue:)))
        }
    }

    public func createSession(
        tokenHash: SecretHash, adminTokenHash: SecretHash, secret: String, createdAt: Date, expiresAt: Date
    )
        async throws -> AdminSession?
    {
        try await database.pool.write { db in
            // One writer: a rotation (which deletes every session) is wholly before or after this transaction.
            guard try SQLiteProjectStore.isAdminTokenHash(adminTokenHash, db) else { return nil }
            let record = try Record(
                id: nil, tokenHash: tokenHash.hex, secret: secret, createdAt: Millis.from(createdAt),
                expiresAt: Millis.from(expiresAt), personID: nil
            ).insertAndFetch(db)
            guard let session = record.session else { throw StorageError(.conflict, "the session was not stored") }
            return session
        }
    }

    public func session(tokenHash: SecretHash, now: Date) async throws -> AdminSession? {
        let now = Millis.from(now)
        return try await database.pool.read { db in
            try Record.filter(Record.Columns.tokenHash == tokenHash.hex && Record.Columns.expiresAt > now).fetchOne(db)?
                .session
        }
    }

    public func revokeSession(tokenHash: SecretHash) async throws {
        _ = try await database.pool.write { db in
            try Record.filter(Record.Columns.tokenHash == tokenHash.hex).deleteAll(db)
        }
    }

    @discardableResult
    public func pruneSessions(expiredBefore date: Date) async throws -> Int {
        let cutoff = Millis.from(date)
        return try await database.pool.write { db in
            try Record.filter(Record.Columns.expiresAt <= cutoff).deleteAll(db)
        }
    }
}
