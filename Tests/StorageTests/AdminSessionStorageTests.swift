import FaultlineCore
import Foundation
import Storage
import Testing

/// Dashboard sessions on a real SQLite file (migration `v9-admin-sessions`).
@Suite struct AdminSessionStorageTests {
    static let hashA = SecretHash(hex: String(repeating: "a", count: 64))
    static let hashB = SecretHash(hex: String(repeating: "b", count: 64))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func sessionsAreFoundByHashUntilTheyExpireOrAreRevoked() async throws {
        let db = try TempDatabase()
        let store = SQLiteAdminSessionStore(database: db.database)
        let secret = String(repeating: "5", count: 64)
        let a = try await store.createSession(tokenHash: Self.hashA, secret: secret, createdAt: Self.start, expiresAt: Self.start + 3600)
        let b = try await store.createSession(tokenHash: Self.hashB, secret: secret, createdAt: Self.start, expiresAt: Self.start + 60)
        #expect(a.id != b.id)
        // The stable id and the per-session secret come back as stored.
        let found = try #require(try await store.session(tokenHash: Self.hashA, now: Self.start + 10))
        #expect(found == a)
        #expect(found.secret == secret)
        // Expired: not found, then pruned.
        #expect(try await store.session(tokenHash: Self.hashB, now: Self.start + 60) == nil)
        #expect(try await store.pruneSessions(expiredBefore: Self.start + 61) == 1)
        // Revoked: gone at once.
        try await store.revokeSession(tokenHash: Self.hashA)
        #expect(try await store.session(tokenHash: Self.hashA, now: Self.start + 10) == nil)
    }

    @Test func replacingTheAdminTokenEndsEverySession() async throws {
        let db = try TempDatabase()
        let store = SQLiteAdminSessionStore(database: db.database)
        _ = try await store.createSession(
            tokenHash: Self.hashA, secret: String(repeating: "5", count: 64), createdAt: Self.start, expiresAt: Self.start + 3600)
        try await SQLiteProjectStore(database: db.database).setAdminTokenHash(Self.hashB, at: Self.start)
        #expect(try await store.session(tokenHash: Self.hashA, now: Self.start + 1) == nil)
    }

    @Test func theTableRefusesMalformedRows() async throws {
        let db = try TempDatabase()
        let store = SQLiteAdminSessionStore(database: db.database)
        await #expect(throws: (any Error).self) {
            try await store.createSession(
                tokenHash: SecretHash(hex: "short"), secret: String(repeating: "5", count: 64), createdAt: Self.start,
                expiresAt: Self.start + 1)
        }
        await #expect(throws: (any Error).self) {
            try await store.createSession(
                tokenHash: Self.hashA, secret: String(repeating: "5", count: 64), createdAt: Self.start, expiresAt: Self.start - 1)
        }
    }
}
