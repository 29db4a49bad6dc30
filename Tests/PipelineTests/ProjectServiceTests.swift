import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// An in-memory project store (pure logic tests only; Storage has the SQLite one).
final class MemoryProjectStore: ProjectStore {
    let state = Mutex<(projects: [Project], credentials: [SecretHash: (CredentialKind, ProjectID?)], lookups: Int)>(
        ([], [:], 0))
    func createProject(
        slug: ProjectSlug, ingestKeyHash: SecretHash, uploadTokenHash: SecretHash, createdAt: Date,
        rateLimitPerSecond: Double
    ) async throws -> Project {
        state.withLock { s in
            let p = Project(
                id: ProjectID(Int64(s.projects.count + 1)), slug: slug, createdAt: createdAt,
                rateLimitPerSecond: rateLimitPerSecond)
            s.projects.append(p)
            s.credentials[ingestKeyHash] = (.ingest, p.id)
            s.credentials[uploadTokenHash] = (.upload, p.id)
            return p
        }
    }
    func allProjects() async throws -> [Project] { state.withLock { $0.projects } }
    func project(slug: ProjectSlug) async throws -> Project? {
        state.withLock { $0.projects.first { $0.slug == slug } }
    }
    func project(id: ProjectID) async throws -> Project? { state.withLock { $0.projects.first { $0.id == id } } }
    func project(credential hash: SecretHash, kind: CredentialKind, at now: Date) async throws -> Project? {
        state.withLock { s in
            s.lookups += 1
            guard let (k, id) = s.credentials[hash], k == kind else { return nil }
            return s.projects.first { $0.id == id }
        }
    }
    /// Old secrets are kept without an end here (the engines' conformance tests check the end).
    func replaceCredential(
        _ kind: CredentialKind, of project: ProjectID, with hash: SecretHash, oldAcceptedUntil: Date?, at now: Date
    ) async throws -> Bool {
        state.withLock { s in
            guard s.projects.contains(where: { $0.id == project }) else { return false }
            if oldAcceptedUntil.map({ $0 <= now }) ?? true {
                s.credentials = s.credentials.filter { !($0.value.0 == kind && $0.value.1 == project) }
            }
            s.credentials[hash] = (kind, project)
            return true
        }
    }
    func setAdminTokenHash(_ hash: SecretHash, at date: Date) async throws {
        state.withLock { s in
            s.credentials = s.credentials.filter { $0.value.0 != .admin }
            s.credentials[hash] = (.admin, nil)
        }
    }
    func isAdminTokenHash(_ hash: SecretHash) async throws -> Bool {
        state.withLock { $0.credentials[hash]?.0 == .admin }
    }
    func setPrivacy(_ settings: PrivacySettings, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].privacy = settings
            return true
        }
    }
    func setInAppRules(_ rules: InAppRules, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].inApp = rules
            return true
        }
    }
    func setMinidumpRetention(_ retention: MinidumpRetention, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].minidumps = retention
            return true
        }
    }
    func setCrashFreeTargets(_ targets: CrashFreeTargets, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].targets = targets
            return true
        }
    }

    func setEventQuotas(_ quotas: EventQuotas, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].quotas = quotas
            return true
        }
    }

    func setTracker(_ tracker: IssueTracker?, for project: ProjectID) async throws -> Bool {
        state.withLock { s in
            guard let i = s.projects.firstIndex(where: { $0.id == project }) else { return false }
            s.projects[i].tracker = tracker
            return true
        }
    }
}

struct ReversingHasher: SecretHashing {
    func hash(_ secret: String) -> SecretHash { SecretHash(hex: "h:" + String(secret.reversed())) }
}

final class CountingGenerator: SecretGenerating {
    let counter = Mutex(0)
    func randomHex(bytes: Int) -> String {
        let n = counter.withLock {
            $0 += 1; return $0
        }
        return String(repeating: String(n % 10), count: bytes * 2)
    }
}

@Suite struct ProjectServiceTests {
    @Test func createsSecretsThatAuthenticateOnlyAsTheirKind() async throws {
        let store = MemoryProjectStore()
        let service = ProjectService(
            store: store, hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock())
        let creds = try await service.create(slug: ProjectSlug("app")!)
        #expect(creds.ingestKey.count == 32)
        #expect(creds.uploadToken.hasPrefix("flu_"))
        #expect(creds.ingestKey != creds.uploadToken)
        // Only hashes reach the store.
        #expect(store.state.withLock { $0.credentials.keys.allSatisfy { $0.hex.hasPrefix("h:") } })
        #expect(try await service.authenticate(creds.ingestKey, as: .ingest) == creds.project)
        #expect(try await service.authenticate(creds.ingestKey, as: .upload) == nil)
        #expect(try await service.authenticate(creds.uploadToken, as: .upload) == creds.project)
        #expect(try await service.authenticate("wrong", as: .ingest) == nil)
    }

    @Test func successfulLookupsAreCachedForAMinute() async throws {
        let store = MemoryProjectStore()
        let clock = ManualClock()
        let service = ProjectService(
            store: store, hasher: ReversingHasher(), generator: CountingGenerator(), clock: clock)
        let creds = try await service.create(slug: ProjectSlug("app")!)
        for _ in 0..<5 { _ = try await service.authenticate(creds.ingestKey, as: .ingest) }
        #expect(store.state.withLock { $0.lookups } == 1)
        clock.advance(61)
        _ = try await service.authenticate(creds.ingestKey, as: .ingest)
        #expect(store.state.withLock { $0.lookups } == 2)
    }

    @Test func theAdminTokenIsNeverCachedSoAnotherProcessCanReplaceIt() async throws {
        // Two services over one store: the server and a CLI run of `faultline admin-token`.
        let store = MemoryProjectStore()
        let server = ProjectService(
            store: store, hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock())
        let cli = ProjectService(
            store: store, hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock())
        let first = try await cli.rotateAdminToken()
        #expect(try await server.isAdmin(first))
        _ = try await cli.rotateAdminToken()
        #expect(try await server.isAdmin(first) == false)
    }

    @Test func rotatingAKeyRecordsWhoAndTheOldKeysEndButNeverTheKey() async throws {
        let trail = AlertMailPreferencesTests.Trail()
        let clock = ManualClock()
        let service = ProjectService(
            store: MemoryProjectStore(), hasher: ReversingHasher(), generator: CountingGenerator(), clock: clock,
            audit: trail)
        let creds = try await service.create(slug: ProjectSlug("app")!)
        let ann = AuditOrigin(actor: .cli, address: "192.0.2.1")
        // Given: the old key cached by a successful lookup.
        #expect(try await service.authenticate(creds.uploadToken, as: .upload) == creds.project)

        let ingest = try #require(try await service.rotate(.ingest, slug: creds.project.slug, keepOldDays: 7, by: ann))
        #expect(ingest.secret.count == 32 && ingest.secret != creds.ingestKey)
        #expect(ingest.oldAcceptedUntil == clock.now().addingTimeInterval(7 * 86_400))
        #expect(try await service.authenticate(ingest.secret, as: .ingest) == creds.project)
        let upload = try #require(try await service.rotate(.upload, slug: creds.project.slug, keepOldDays: 7, by: ann))
        #expect(upload.secret.hasPrefix("flu_") && upload.oldAcceptedUntil == nil, "an upload token is cut at once")
        // The cache is emptied: the old token is refused at once in this process.
        #expect(try await service.authenticate(creds.uploadToken, as: .upload) == nil)

        let entries = trail.recorded.withLock { $0 }.filter { $0.kind.rawValue.hasSuffix("_rotated") }
        #expect(entries.map(\.kind) == [.projectIngestKeyRotated, .projectUploadTokenRotated])
        #expect(entries.allSatisfy { $0.origin == ann && $0.subject == "app" && $0.project == creds.project.id })
        #expect(entries.first?.after?.hasPrefix("old key accepted until ") == true)
        #expect(entries.last?.after == "old key refused at once")
        for entry in entries {
            for secret in [ingest.secret, upload.secret, creds.ingestKey, creds.uploadToken] {
                #expect(![entry.subject, entry.before, entry.after].contains { $0?.contains(secret) == true })
            }
        }
    }

    @Test func aRotationOutsideItsBoundsChangesNothing() async throws {
        let service = ProjectService(
            store: MemoryProjectStore(), hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock()
        )
        let creds = try await service.create(slug: ProjectSlug("app")!)
        for days in [-1, KeyRotation.maxKeepOldDays + 1] {
            await #expect(
                throws: ProjectError(.invalidGracePeriod, "the old key's days must be a whole number from 0 to 90")
            ) {
                try await service.rotate(.ingest, slug: creds.project.slug, keepOldDays: days, by: .cli)
            }
        }
        await #expect(throws: ProjectError.self) {
            try await service.rotate(.admin, slug: creds.project.slug, by: .cli)
        }
        #expect(try await service.rotate(.ingest, slug: ProjectSlug("nope")!, by: .cli) == nil)
        #expect(try await service.authenticate(creds.ingestKey, as: .ingest) == creds.project)
    }

    @Test func rotatingTheAdminTokenRevokesTheOldOne() async throws {
        let service = ProjectService(
            store: MemoryProjectStore(), hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock()
        )
        let first = try await service.rotateAdminToken()
        #expect(try await service.isAdmin(first))
        let second = try await service.rotateAdminToken()
        #expect(try await service.isAdmin(second))
        #expect(try await service.isAdmin(first) == false)
    }
}
