import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// A debug-file store whose quota use (debug files and stored minidumps, as the engines count them) is set by the test,
/// and that records what it was asked.
final class UsageDebugFileStore: DebugFileStore {
    let inner: MemoryDebugFileStore
    let used = Mutex<[ProjectID: UInt64]>([:])
    let asked = Mutex<[(ProjectID, BuildID?)]>([])
    init() throws { inner = try MemoryDebugFileStore() }
    func temporaryUpload() throws -> TemporaryUpload { try inner.temporaryUpload() }
    func discard(_ upload: TemporaryUpload) { inner.discard(upload) }
    func store(
        _ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
        quotaBytes: UInt64, at date: Date
    ) async throws -> DebugFileStoreOutcome {
        try await inner.store(
            file, facts: facts, buildID: buildID, project: project, name: name, quotaBytes: quotaBytes, at: date)
    }
    func storeAll(_ files: [DebugFileToStore], project: ProjectID, quotaBytes: UInt64, at date: Date) async throws
        -> [DebugFileStoreOutcome]
    {
        try await inner.storeAll(files, project: project, quotaBytes: quotaBytes, at: date)
    }
    func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind> {
        try await inner.kinds(of: buildID, project: project)
    }
    func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile] {
        try await inner.list(project: project, limit: limit)
    }
    func bytesUsed(project: ProjectID, excluding: BuildID?) async throws -> UInt64 {
        asked.withLock { $0.append((project, excluding)) }
        return used.withLock { $0[project] ?? 0 }
    }
    func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? { nil }
}

/// Minidumps share the project's debug-file quota: `DebugFileService.minidumpBytesAllowed` and
/// `checkMinidumpQuota`, which the minidump routes call before storing a dump.
@Suite struct MinidumpQuotaTests {
    let project = Project(
        id: ProjectID(7), slug: ProjectSlug("native")!, createdAt: Date(timeIntervalSince1970: 0),
        rateLimitPerSecond: 10)

    func service(_ store: UsageDebugFileStore, quotaMiB: UInt64 = 1) -> DebugFileService {
        DebugFileService(
            store: store, inspector: TextInspector(), hasher: FakeContentHasher(), clock: ManualClock(),
            quotaBytes: quotaMiB << 20)
    }

    @Test func aDumpFitsWhenTheProjectsFilesDumpsAndItFitTheQuota() async throws {
        let store = try UsageDebugFileStore()
        let service = service(store)
        // Given 1 MiB of quota, of which the project's debug files and stored dumps use 1 MiB − 100 bytes…
        store.used.withLock { $0[project.id] = (1 << 20) - 100 }
        // …a 100-byte dump fits exactly; 101 bytes do not.
        #expect(try await service.minidumpBytesAllowed(project: project, adding: 100))
        #expect(!(try await service.minidumpBytesAllowed(project: project, adding: 101)))
        try await service.checkMinidumpQuota(project: project, adding: 100)
        // The use asked for is the project's whole use (no build-id left out).
        #expect(store.asked.withLock { $0.allSatisfy { $0.0 == project.id && $0.1 == nil } })
        // Another project's use is its own.
        #expect(
            try await service.minidumpBytesAllowed(
                project: Project(
                    id: ProjectID(8), slug: ProjectSlug("other")!, createdAt: Date(), rateLimitPerSecond: 1),
                adding: 1 << 20))
    }

    @Test func aDumpOverTheQuotaIsRefusedWithAnErrorNamingTheQuota() async throws {
        let store = try UsageDebugFileStore()
        let service = service(store, quotaMiB: 2)
        store.used.withLock { $0[project.id] = 2 << 20 }
        do {
            try await service.checkMinidumpQuota(project: project, adding: 1)
            Issue.record("a dump over the quota was allowed")
        } catch let error as IngestError {
            #expect(error.code == .quotaExceeded)
            #expect(error.message.contains("project native has a 2 MiB quota for debug files and minidumps"))
            #expect(error.message.contains("--debug-file-quota-mb"))
            #expect(error.message.contains("would make its use 3 MiB"))
            #expect(error.retryAfter == DebugFileService.minidumpRetryAfter)
        }
    }

    @Test func hostileSizesNeitherWrapNorPass() async throws {
        let store = try UsageDebugFileStore()
        let service = service(store)
        // A use already at the top: any dump is refused rather than the sum wrapping to a small number.
        store.used.withLock { $0[project.id] = .max }
        #expect(!(try await service.minidumpBytesAllowed(project: project, adding: 1)))
        #expect(!(try await service.minidumpBytesAllowed(project: project, adding: Int.max)))
        // A negative size (a caller's bug) counts as nothing, never as room.
        store.used.withLock { $0[project.id] = (1 << 20) + 1 }
        #expect(!(try await service.minidumpBytesAllowed(project: project, adding: -5)))
        store.used.withLock { $0[project.id] = 0 }
        #expect(try await service.minidumpBytesAllowed(project: project, adding: -5))
    }
}

/// `ProjectService.configureMinidumps`: the setting is stored, read back, and the authentication cache forgets the
/// project, so a running server applies it at once.
@Suite struct MinidumpSettingTests {
    @Test func theSettingIsStoredAndTheCachedProjectForgotten() async throws {
        let store = MemoryProjectStore()
        let service = ProjectService(
            store: store, hasher: ReversingHasher(), generator: CountingGenerator(), clock: ManualClock())
        let created = try await service.create(slug: ProjectSlug("native")!)
        #expect(created.project.minidumps == .untilProcessed)
        // The ingest key's project is cached by the first lookup.
        #expect(try await service.authenticate(created.ingestKey, as: .ingest)?.minidumps == .untilProcessed)

        let changed = try await service.configureMinidumps(slug: ProjectSlug("native")!, by: .cli, .retentionPeriod)
        #expect(changed?.minidumps == .retentionPeriod)
        #expect(try await service.project(slug: ProjectSlug("native")!)?.minidumps == .retentionPeriod)
        #expect(try await service.authenticate(created.ingestKey, as: .ingest)?.minidumps == .retentionPeriod)
        #expect(try await service.configureMinidumps(slug: ProjectSlug("missing")!, by: .cli, .retentionPeriod) == nil)
    }
}
