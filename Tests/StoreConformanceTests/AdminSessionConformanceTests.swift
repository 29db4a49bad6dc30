import FaultlineCore
import Foundation
import Testing

/// Dashboard sessions (AdminSessionStore), on each engine.
@Suite struct AdminSessionConformanceTests {
    static let hashA = SecretHash(hex: String(repeating: "a", count: 64))
    static let hashB = SecretHash(hex: String(repeating: "b", count: 64))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let secret = String(repeating: "5", count: 64)

    @Test(arguments: Engine.allCases) func sessionsAreFoundByHashUntilTheyExpireOrAreRevoked(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let store = stores.adminSessions
            let a = try await store.createSession(tokenHash: Self.hashA, secret: Self.secret, createdAt: Self.start, expiresAt: Self.start + 3600)
            let b = try await store.createSession(tokenHash: Self.hashB, secret: Self.secret, createdAt: Self.start, expiresAt: Self.start + 60)
            #expect(a.id != b.id)
            // The stable id and the per-session secret come back as stored.
            let found = try #require(try await store.session(tokenHash: Self.hashA, now: Self.start + 10))
            #expect(found == a)
            #expect(found.secret == Self.secret)
            // Expired: not found, then pruned.
            #expect(try await store.session(tokenHash: Self.hashB, now: Self.start + 60) == nil)
            #expect(try await store.pruneSessions(expiredBefore: Self.start + 61) == 1)
            // Revoked: gone at once.
            try await store.revokeSession(tokenHash: Self.hashA)
            #expect(try await store.session(tokenHash: Self.hashA, now: Self.start + 10) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func replacingTheAdminTokenEndsEverySession(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            _ = try await stores.adminSessions.createSession(
                tokenHash: Self.hashA, secret: Self.secret, createdAt: Self.start, expiresAt: Self.start + 3600)
            try await stores.projects.setAdminTokenHash(Self.hashB, at: Self.start)
            #expect(try await stores.adminSessions.session(tokenHash: Self.hashA, now: Self.start + 1) == nil)
        }
    }

    @Test(arguments: Engine.allCases) func theTableRefusesMalformedRows(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            await #expect(throws: (any Error).self) {
                try await stores.adminSessions.createSession(
                    tokenHash: SecretHash(hex: "short"), secret: Self.secret, createdAt: Self.start, expiresAt: Self.start + 1)
            }
            await #expect(throws: (any Error).self) {
                try await stores.adminSessions.createSession(
                    tokenHash: Self.hashA, secret: Self.secret, createdAt: Self.start, expiresAt: Self.start - 1)
            }
        }
    }
}
