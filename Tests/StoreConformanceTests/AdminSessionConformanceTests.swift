import FaultlineCore
import Foundation
import Testing

/// Dashboard sessions (AdminSessionStore), on each engine.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct AdminSessionConformanceTests {
    static let hashA = SecretHash(hex: String(repeating: "a", count: 64))
    static let hashB = SecretHash(hex: String(repeating: "b", count: 64))
    static let start = Date(timeIntervalSince1970: 1_800_000_000)
    static let secret = String(repeating: "5", count: 64)
    static let admin = SecretHash(hex: String(repeating: "c", count: 64))
    static let replacedAdmin = SecretHash(hex: String(repeating: "d", count: 64))

    @Test(arguments: Engine.allCases) func sessionsAreFoundByHashUntilTheyExpireOrAreRevoked(_ engine: Engine)
        async throws
    {
        try await withStores(engine) { stores in
            let store = stores.adminSessions
            try await stores.projects.setAdminTokenHash(Self.admin, at: Self.start)
            let a = try #require(
                try await store.createSession(
                    tokenHash: Self.hashA, adminTokenHash: Self.admin, secret: Self.secret, createdAt: Self.start,
                    expiresAt: Self.start + 3600))
            let b = try #require(
                try await store.createSession(
                    tokenHash: Self.hashB, adminTokenHash: Self.admin, secret: Self.secret, createdAt: Self.start,
                    expiresAt: Self.start + 60))
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
            try await stores.projects.setAdminTokenHash(Self.replacedAdmin, at: Self.start)
            _ = try #require(
                try await stores.adminSessions.createSession(
                    tokenHash: Self.hashA, adminTokenHash: Self.replacedAdmin, secret: Self.secret,
                    createdAt: Self.start,
                    expiresAt: Self.start + 3600))
            try await stores.projects.setAdminTokenHash(Self.admin, at: Self.start)
            #expect(try await stores.adminSessions.session(tokenHash: Self.hashA, now: Self.start + 1) == nil)
        }
    }

    /// Issue #39 finding 9: a login checked against a token that was replaced since (another process's rotation, or a
    /// cached answer) must not leave a session behind.
    @Test(arguments: Engine.allCases) func aSessionIsStoredOnlyForTheCurrentAdminToken(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            try await stores.projects.setAdminTokenHash(Self.replacedAdmin, at: Self.start)
            try await stores.projects.setAdminTokenHash(Self.admin, at: Self.start + 1)
            let stale = try await stores.adminSessions.createSession(
                tokenHash: Self.hashA, adminTokenHash: Self.replacedAdmin, secret: Self.secret,
                createdAt: Self.start + 2,
                expiresAt: Self.start + 3600)
            #expect(stale == nil)
            #expect(try await stores.adminSessions.session(tokenHash: Self.hashA, now: Self.start + 3) == nil)
            // With no admin token at all (a fresh install before `admin-token`), no session either.
            let none = try await stores.adminSessions.createSession(
                tokenHash: Self.hashB, adminTokenHash: Self.hashB, secret: Self.secret, createdAt: Self.start + 2,
                expiresAt: Self.start + 3600)
            #expect(none == nil)
        }
    }

    @Test(arguments: Engine.allCases) func theTableRefusesMalformedRows(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            try await stores.projects.setAdminTokenHash(Self.admin, at: Self.start)
            await #expect(throws: (any Error).self) {
                try await stores.adminSessions.createSession(
                    tokenHash: SecretHash(hex: "short"), adminTokenHash: Self.admin, secret: Self.secret,
                    createdAt: Self.start, expiresAt: Self.start + 1)
            }
            await #expect(throws: (any Error).self) {
                try await stores.adminSessions.createSession(
                    tokenHash: Self.hashA, adminTokenHash: Self.admin, secret: Self.secret, createdAt: Self.start,
                    expiresAt: Self.start - 1)
            }
        }
    }
}
