import FaultlineCore
import Foundation
import Synchronization
import Testing

@testable import Pipeline

// MARK: Fakes (pure logic tests; Storage has the real stores, FaultlineHTTP the real SHA-1)

/// A stand-in for SHA-1: deterministic 160 bits from FNV-1a with five seeds. The service only compares
/// digests, so any deterministic function tests its logic.
struct FakeHasher: ChecksumHashing {
    final class Digest: SHA1Digesting {
        var bytes: [UInt8] = []
        func update(_ more: [UInt8]) { bytes += more }
        func finalize() -> ChunkChecksum { FakeHasher.checksum(bytes) }
    }
    func sha1() -> any SHA1Digesting { Digest() }
    func sha1(ofFileAt path: String) throws -> ChunkChecksum {
        FakeHasher.checksum(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }
    static func checksum(_ bytes: [UInt8]) -> ChunkChecksum {
        var hex = ""
        for seed in 0..<5 {
            var h: UInt32 = 2_166_136_261 &+ UInt32(seed)
            for b in bytes { h = (h ^ UInt32(b)) &* 16_777_619 }
            hex += String(format: "%08x", h)
        }
        return ChunkChecksum(hex)!
    }
}

final class MemoryChunkStore: ChunkStore {
    let state = Mutex<(chunks: [String: [UInt8]], sweptBefore: Date?)>(([:], nil))
    /// When set, `concatenate` waits here (to hold an assemble in flight).
    let gate = Mutex<AsyncStream<Void>?>(nil)

    func key(_ c: ChunkChecksum, _ p: ProjectID) -> String { "\(p.rawValue)/\(c.rawValue)" }
    func put(_ checksum: ChunkChecksum, bytes: [UInt8], project: ProjectID) throws -> Bool {
        state.withLock { s in
            if s.chunks[key(checksum, project)] != nil { return false }
            s.chunks[key(checksum, project)] = bytes
            return true
        }
    }
    func missing(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum] {
        state.withLock { s in checksums.filter { s.chunks[key($0, project)] == nil } }
    }
    func sizes(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum: UInt64] {
        state.withLock { s in
            var sizes: [ChunkChecksum: UInt64] = [:]
            for c in checksums { if let bytes = s.chunks[key(c, project)] { sizes[c] = UInt64(bytes.count) } }
            return sizes
        }
    }
    func head(of checksum: ChunkChecksum, project: ProjectID, maxBytes: Int) throws -> [UInt8] {
        guard let bytes = state.withLock({ $0.chunks[key(checksum, project)] }) else {
            throw ChunkStoreError.missing(checksum)
        }
        return Array(bytes.prefix(maxBytes))
    }
    func concatenate(
        _ checksums: [ChunkChecksum], project: ProjectID, into path: String, maxBytes: UInt64,
        observe: ([UInt8]) throws -> Void
    ) async throws -> UInt64 {
        if let gate = gate.withLock({ $0 }) {
            for await _ in gate { break }
        }
        var out: [UInt8] = []
        for checksum in checksums {
            guard let bytes = state.withLock({ $0.chunks[key(checksum, project)] }) else {
                throw ChunkStoreError.missing(checksum)
            }
            guard UInt64(out.count + bytes.count) <= maxBytes else { throw ChunkStoreError.tooLarge }
            try observe(bytes)
            out += bytes
        }
        try Data(out).write(to: URL(fileURLWithPath: path))
        return UInt64(out.count)
    }
    func remove(_ checksums: [ChunkChecksum], project: ProjectID) {
        state.withLock { s in for c in checksums { s.chunks[key(c, project)] = nil } }
    }
    func sweep(unusedSince date: Date) throws -> Int {
        state.withLock { s in
            s.sweptBefore = date
            let n = s.chunks.count
            s.chunks = [:]
            return n
        }
    }
    var count: Int { state.withLock { $0.chunks.count } }
    func has(_ c: ChunkChecksum) -> Bool { state.withLock { $0.chunks[key(c, ProjectID(1))] != nil } }
}

final class MemoryDifUploadStore: DifUploadStore {
    let records = Mutex<[String: DifUploadRecord]>([:])
    let reads = Mutex(0)
    func record(project: ProjectID, checksum: ChunkChecksum) async throws -> DifUploadRecord? {
        reads.withLock { $0 += 1 }
        return records.withLock { $0["\(project.rawValue)/\(checksum.rawValue)"] }
    }
    func save(_ record: DifUploadRecord) async throws {
        records.withLock { $0["\(record.project.rawValue)/\(record.checksum.rawValue)"] = record }
    }
    func storedBuildIDs(project: ProjectID, hexPrefix: String, limit: Int) async throws -> [BuildID] { [] }
}

/// Debug files in a temp folder, the index in memory.
final class MemoryDebugFileStore: DebugFileStore {
    let folder: String
    let rows = Mutex<[StoredDebugFile]>([])
    init() throws {
        folder =
            FileManager.default.temporaryDirectory.appendingPathComponent("faultline-pipeline-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: folder) }
    func temporaryUpload() throws -> TemporaryUpload {
        let path = folder + "/" + UUID().uuidString
        FileManager.default.createFile(atPath: path, contents: nil)
        return TemporaryUpload(path: path)
    }
    func discard(_ upload: TemporaryUpload) { try? FileManager.default.removeItem(atPath: upload.path) }
    func store(
        _ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
        quotaBytes: UInt64, at date: Date
    ) async throws -> DebugFileStoreOutcome {
        defer { discard(file.upload) }
        let new = facts.kinds.sorted().map {
            StoredDebugFile(
                project: project, buildID: buildID, kind: $0, size: file.size, sha256: file.sha256,
                architecture: facts.architecture, fileType: facts.fileType, features: facts.features, name: name,
                uploadedAt: date)
        }
        rows.withLock { rows in
            for row in new
            where !rows.contains(where: { $0.buildID == row.buildID && $0.kind == row.kind && $0.project == project }) {
                rows.append(row)
            }
        }
        return .stored(new, replaced: false)
    }
    func storeAll(_ files: [DebugFileToStore], project: ProjectID, quotaBytes: UInt64, at date: Date) async throws
        -> [DebugFileStoreOutcome]
    {
        var outcomes: [DebugFileStoreOutcome] = []
        for file in files {
            outcomes.append(
                try await store(
                    file.file, facts: file.facts, buildID: file.buildID, project: project, name: file.name,
                    quotaBytes: quotaBytes, at: date))
        }
        return outcomes
    }
    func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind> {
        Set(rows.withLock { $0.filter { $0.buildID == buildID && $0.project == project }.map(\.kind) })
    }
    func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile] { rows.withLock { $0 } }
    func bytesUsed(project: ProjectID, excluding: BuildID?) async throws -> UInt64 { 0 }
    func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? { nil }
}

/// A stand-in for SHA-256 in unit tests: FNV-1a, spread over 32 bytes (content naming only, nothing secret).
struct FakeContentHasher: ContentHashing {
    final class Digester: ContentDigesting {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func update(_ bytes: [UInt8]) { for b in bytes { hash = (hash ^ UInt64(b)) &* 0x100_0000_01b3 } }
        func finalize() -> ContentHash {
            ContentHash(digest: (0..<32).map { UInt8(truncatingIfNeeded: hash >> (UInt64($0 % 8) * 8)) })!
        }
    }
    func sha256() -> any ContentDigesting { Digester() }
    func sha256(ofFileAt path: String) throws -> ContentHash {
        let digest = Digester()
        digest.update(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        return digest.finalize()
    }
}

/// Reads "ELF <build-id> <kinds,…> <file type>" files; anything else is not ELF.
struct TextInspector: DebugFileInspecting {
    struct NotELF: Error {}
    func inspect(path: String) throws -> DebugFileFacts {
        let words = (try String(contentsOfFile: path, encoding: .utf8)).split(separator: " ").map(String.init)
        guard words.count == 4, words[0] == "ELF" else { throw NotELF() }
        return DebugFileFacts(
            buildID: BuildID(words[1]),
            kinds: Set(words[2].split(separator: ",").compactMap { DebugFileKind(rawValue: String($0)) }),
            architecture: "x86_64", fileType: words[3], features: ["symtab", "debug"], compressedDebugSections: false)
    }
    func inspectHead(_ head: [UInt8]) throws -> BuildID? {
        guard head.starts(with: Array("ELF ".utf8)) else { throw NotELF() }
        return nil
    }
}

struct Fixture {
    let chunks = MemoryChunkStore()
    let uploads = MemoryDifUploadStore()
    let files: MemoryDebugFileStore
    let clock = ManualClock()
    let service: ChunkUploadService
    let project = Project(
        id: ProjectID(1), slug: ProjectSlug("app")!, createdAt: Date(timeIntervalSince1970: 0), rateLimitPerSecond: 10)

    init(limits: ChunkUploadLimits = ChunkUploadLimits(chunkSize: 8), quotaBytes: UInt64 = 1 << 30) throws {
        files = try MemoryDebugFileStore()
        service = ChunkUploadService(
            chunks: chunks, uploads: uploads,
            debugFiles: DebugFileService(
                store: files, inspector: TextInspector(), hasher: FakeContentHasher(), clock: clock,
                quotaBytes: quotaBytes),
            hasher: FakeHasher(), clock: clock, limits: limits)
    }

    /// A file cut into chunks of the fixture's chunk size.
    func file(_ text: String, name: String = "build/crashy.debug") -> (
        request: DifAssembleRequest, chunks: [UploadedChunk]
    ) {
        let bytes = Array(text.utf8)
        let pieces = stride(from: 0, to: bytes.count, by: 8).map { Array(bytes[$0..<min(bytes.count, $0 + 8)]) }
        let chunks = pieces.map { UploadedChunk(claimed: FakeHasher.checksum($0), bytes: $0) }
        return (
            DifAssembleRequest(
                checksum: FakeHasher.checksum(bytes), name: name, debugID: nil, chunks: chunks.map(\.claimed)), chunks
        )
    }

    func send(_ chunks: [UploadedChunk]) async throws -> ChunkReceipt {
        try await service.receive(
            AsyncStream { c in
                for chunk in chunks { c.yield(chunk) }
                c.finish()
            }, project: project)
    }

    func assemble(_ requests: [DifAssembleRequest]) async throws -> [DifAssembleResult] {
        try await service.assemble(requests, project: project, maxFileBytes: 1 << 20)
    }
}

let buildID = "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"

// MARK: Tests

@Suite struct ChunkUploadServiceTests {
    @Test func missingChunksThenAssembledThenAnsweredFromTheRecord() async throws {
        let f = try Fixture()
        let (request, chunks) = f.file("ELF \(buildID) debuginfo shared_object")
        #expect(chunks.count == 9)  // 68 bytes in chunks of 8

        // Given nothing uploaded, the server asks for every chunk.
        let first = try await f.assemble([request])
        #expect(
            first == [
                DifAssembleResult(checksum: request.checksum, state: .notFound, missingChunks: chunks.map(\.claimed))
            ])

        // When the chunks arrive (one twice), then assemble answers ok with the dif.
        #expect(try await f.send(chunks + [chunks[0]]) == ChunkReceipt(stored: 9, duplicates: 1))
        let second = try await f.assemble([request])
        #expect(second.map(\.state) == [.ok])
        let dif = try #require(second.first?.dif)
        #expect(dif.debugID == "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1")
        #expect(dif.codeID.rawValue == buildID)
        #expect(dif.objectClass == .dbg)
        #expect(dif.objectName == "crashy.debug")
        #expect(dif.size == UInt64("ELF \(buildID) debuginfo shared_object".utf8.count))
        #expect(dif.sha1 == request.checksum)
        // The file is in the debug-file store, its chunks are gone.
        #expect(f.files.rows.withLock { $0.map(\.kind) } == [.debuginfo])
        #expect(f.chunks.count == 0)

        // A re-run needs no chunks: the record answers.
        let third = try await f.assemble([request])
        #expect(third == second)
        #expect(f.uploads.records.withLock { $0.values.map(\.state) } == [.ok])

        // Should the debug-file store ever lose the file, the record no longer counts: the chunks are asked for.
        f.files.rows.withLock { $0 = [] }
        #expect(try await f.assemble([request]).first?.missingChunks == chunks.map(\.claimed))
    }

    @Test func chunksMustMatchTheirNamesAndLimits() async throws {
        let f = try Fixture(limits: ChunkUploadLimits(chunkSize: 8, chunksPerRequest: 4))
        let good = UploadedChunk(claimed: FakeHasher.checksum([1, 2, 3]), bytes: [1, 2, 3])
        let lying = UploadedChunk(claimed: FakeHasher.checksum([1, 2, 3]), bytes: [1, 2, 4])
        let error = await #expect(throws: ChunkUploadError.self) { try await f.send([good, lying]) }
        #expect(error?.code == .checksumMismatch)
        #expect(f.chunks.count == 1)  // the valid chunk before it is kept

        let big = [UInt8](repeating: 7, count: 9)
        let tooLarge = await #expect(throws: ChunkUploadError.self) {
            try await f.send([UploadedChunk(claimed: FakeHasher.checksum(big), bytes: big)])
        }
        #expect(tooLarge?.code == .chunkTooLarge)

        let five = (0..<5).map { UploadedChunk(claimed: FakeHasher.checksum([UInt8($0)]), bytes: [UInt8($0)]) }
        let tooMany = await #expect(throws: ChunkUploadError.self) { try await f.send(five) }
        #expect(tooMany?.code == .tooMany)
    }

    @Test func aFileThatIsNotADebugFileIsAnErrorWithADetail() async throws {
        let f = try Fixture()
        let (request, chunks) = f.file("this is a source bundle, not ELF")
        _ = try await f.send(chunks)
        let result = try await f.assemble([request])
        #expect(result.first?.state == .error)
        #expect(result.first?.detail?.contains("not an ELF or Mach-O file") == true)
        #expect(f.uploads.records.withLock { $0.values.first?.state } == .error)
        // The chunks stay (until swept), so a new run does not upload them again to get the same answer.
        #expect(f.chunks.count == chunks.count)

        let noBuildID = f.file("ELF nothex debuginfo shared_object")
        _ = try await f.send(noBuildID.chunks)
        #expect(try await f.assemble([noBuildID.request]).first?.detail?.contains("build-id") == true)
    }

    @Test func chunksThatDoNotAddUpToTheFileAreDropped() async throws {
        let f = try Fixture()
        let (request, chunks) = f.file("ELF \(buildID) debuginfo shared_object")
        _ = try await f.send(chunks)
        var wrong = request
        wrong.chunks.swapAt(1, 2)  // the first bytes still begin the file
        let result = try await f.assemble([wrong])
        #expect(result.first?.state == .error)
        #expect(result.first?.detail?.contains("upload again") == true)
        #expect(f.chunks.count == 0)
        #expect(try await f.assemble([request]).first?.missingChunks.count == chunks.count)
    }

    @Test func emptyAndOversizedFilesAreRefused() async throws {
        let f = try Fixture()
        let empty = DifAssembleRequest(checksum: FakeHasher.checksum([]), name: "empty", debugID: nil, chunks: [])
        #expect(try await f.assemble([empty]).first?.detail?.contains("empty") == true)
        let huge = DifAssembleRequest(
            checksum: FakeHasher.checksum([9]), name: "huge", debugID: nil,
            chunks: Array(repeating: FakeHasher.checksum([9]), count: (1 << 20) / 8 + 1))
        #expect(try await f.assemble([huge]).first?.detail?.contains("larger than") == true)
        let tooMany = await #expect(throws: ChunkUploadError.self) {
            try await Fixture(limits: ChunkUploadLimits(chunkSize: 8, maxFilesPerAssemble: 1)).assemble([empty, huge])
        }
        #expect(tooMany?.code == .tooMany)
    }

    @Test func aChunkAnotherFileStillNeedsIsKept() async throws {
        let f = try Fixture()
        let shared = "ELF \(buildID) "
        let a = f.file(shared + "executable shared_object", name: "a")
        let b = f.file(shared + "debuginfo shared_object", name: "b")
        #expect(a.chunks[0] == b.chunks[0])  // the first 8 bytes are the same chunk
        _ = try await f.send(a.chunks + Array(b.chunks.dropLast()))
        let results = try await f.assemble([a.request, b.request])
        #expect(results.map(\.state) == [.ok, .notFound])
        #expect(results[1].missingChunks == [b.chunks.last!.claimed])
        #expect(f.chunks.has(a.chunks[0].claimed))  // b still needs it
        _ = try await f.send([b.chunks.last!])
        #expect(try await f.assemble([a.request, b.request]).map(\.state) == [.ok, .ok])
        #expect(f.chunks.count == 0)
    }

    @Test func concurrentAssemblesOfOneFileDoNotRace() async throws {
        let f = try Fixture()
        let (request, chunks) = f.file("ELF \(buildID) debuginfo,executable executable")
        _ = try await f.send(chunks)
        let (gate, open) = AsyncStream<Void>.makeStream()
        f.chunks.gate.withLock { $0 = gate }

        // Given one assemble held inside concatenation…
        let service = f.service
        let project = f.project
        let first = Task { try await service.assemble([request], project: project, maxFileBytes: 1 << 20) }
        while f.uploads.reads.withLock({ $0 }) == 0 { await Task.yield() }
        try await Task.sleep(for: .milliseconds(50))
        // …a second one for the same file is told to wait, and touches nothing.
        f.chunks.gate.withLock { $0 = nil }
        #expect(try await f.assemble([request]).map(\.state) == [.assembling])
        #expect(f.chunks.count == chunks.count)
        open.yield()
        #expect(try await first.value.map(\.state) == [.ok])
        #expect(try await f.assemble([request]).map(\.state) == [.ok])
        #expect(f.files.rows.withLock { $0.count } == 2)
    }

    @Test func aProjectsRunningAssemblesBoundTheNextOnesCountAndQuota() async throws {
        let a = "ELF \(buildID) debuginfo,executable executable"
        let b = "ELF 0123456789abcdef debuginfo shared_object"  // no chunk in common with `a`
        for (parallel, quota, expected) in [
            (1, UInt64(1 << 30), DifAssembleResult.State.assembling),  // one at a time: ask again
            (2, UInt64(a.utf8.count + b.utf8.count - 1), .error),  // two fit the count, not the quota together
        ] {
            let f = try Fixture(
                limits: ChunkUploadLimits(chunkSize: 8, maxParallelAssembles: parallel), quotaBytes: quota)
            let (first, second) = (f.file(a, name: "a"), f.file(b, name: "b"))
            _ = try await f.send(first.chunks + second.chunks)
            let (gate, open) = AsyncStream<Void>.makeStream()
            f.chunks.gate.withLock { $0 = gate }
            // Given one file held inside concatenation…
            let (service, project) = (f.service, f.project)
            let held = Task { try await service.assemble([first.request], project: project, maxFileBytes: 1 << 20) }
            while f.uploads.reads.withLock({ $0 }) == 0 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(50))
            f.chunks.gate.withLock { $0 = nil }
            // …another file of the project waits for it, or is refused for the bytes it would add to the running one's.
            let result = try await f.assemble([second.request])
            #expect(result.map(\.state) == [expected], "parallel \(parallel)")
            if expected == .error { #expect(result.first?.detail?.contains("quota") == true) }
            open.yield()
            #expect(try await held.value.map(\.state) == [.ok])
            // Once it is done, the other one goes through (the quota counts only what is stored: nothing, here).
            if expected == .assembling { #expect(try await f.assemble([second.request]).map(\.state) == [.ok]) }
        }
    }

    @Test func sweepRemovesChunksOlderThanTheirLifetime() async throws {
        let f = try Fixture(limits: ChunkUploadLimits(chunkSize: 8, chunkLifetime: 3600))
        _ = try await f.send(f.file("abc").chunks)
        #expect(try f.service.sweep(now: f.clock.now()) == 1)
        #expect(f.chunks.state.withLock { $0.sweptBefore } == f.clock.now().addingTimeInterval(-3600))
    }

    @Test func debugIDsAreTheBuildIDAsALittleEndianGUID() {
        #expect(DifIdentifiers.debugID(of: BuildID(buildID)!) == "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1")
        // Shorter build-ids (lld's 8-byte --build-id=fast) are zero-padded.
        #expect(DifIdentifiers.debugID(of: BuildID("0123456789abcdef")!) == "67452301-ab89-efcd-0000-000000000000")
        // The inverse gives the build-id's first 16 bytes; an age suffix and case are ignored.
        #expect(
            DifIdentifiers.buildIDPrefix(ofDebugID: "EF1AA1AB-E7F7-E2E9-E1BC-84464F53A7E1-0")
                == String(buildID.prefix(32)))
        #expect(
            DifIdentifiers.buildIDPrefix(ofDebugID: "ef1aa1abe7f7e2e9e1bc84464f53a7e1") == String(buildID.prefix(32)))
        #expect(DifIdentifiers.buildIDPrefix(ofDebugID: "not-a-guid") == nil)
    }

    @Test func aMachODebugIDIsItsUUIDUnswapped() {
        // sentry-cli's debug_id of a Mach-O slice is its LC_UUID, lower-case and hyphenated, in file order.
        let uuid = BuildID("4c4c44c155553144a18d19088842705b")!
        #expect(DifIdentifiers.debugID(of: uuid, format: .macho) == "4c4c44c1-5555-3144-a18d-19088842705b")
        #expect(DifIdentifiers.debugID(of: uuid, format: .elf) == "c1444c4c-5555-4431-a18d-19088842705b")
        // A debug id can name an ELF build-id (swapped) or a Mach-O UUID (as it is): both are looked up.
        let candidates = DifIdentifiers.candidatePrefixes(ofDebugID: "4C4C44C1-5555-3144-A18D-19088842705B-0")
        #expect(candidates.map(\.prefix) == ["c1444c4c55554431a18d19088842705b", "4c4c44c155553144a18d19088842705b"])
        #expect(candidates.map(\.format) == [.elf, .macho])
        #expect(DifIdentifiers.candidatePrefixes(ofDebugID: "nope").isEmpty)
    }
}
