import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// sentry-cli's debug-file upload: chunks in, files assembled from them, stored by `DebugFileService`.
///
/// Files are identified by the SHA-1 of their bytes, per project: chunks live under the project's own folder
/// (`chunks/<project id>/…`), `dif_uploads` rows are keyed by project and checksum, and an assembled file is
/// stored as the project's own debug file. Another project's chunks or files are never "already there": a
/// project that offers the same checksum uploads its own chunks. A file assembled once is answered `ok`
/// from `dif_uploads` ever after, so a second run of `sentry-cli debug-files upload` sends nothing. A file
/// `symupload` stored already is recognised by its debug id and checksum (the stored file is hashed once)
/// and needs no upload either.
///
/// Assembly is synchronous and planned before a byte is written (`ChunkAssemblyPlan`): the chunk list is
/// screened (length, repeats), then the chunks' stored sizes must add up to a file within the size limit and
/// what the project's quota has left (less what its running assembles may write), and the first bytes must
/// begin an ELF file or a source bundle, as a `PUT` upload's do. Only then are the chunks concatenated into a
/// temporary file of the debug-file store, never past the planned size, while the file's SHA-1 is computed;
/// then the file goes through exactly the verification and storage of a `symupload` upload (ELF, build-id,
/// quota, requeue for symbolication). Two assembles of the same file at once cannot interfere: the second is
/// answered `assembling` (sentry-cli asks again) until the first is done; so is a file of a project that has
/// `limits.maxParallelAssembles` running. Chunks of an assembled file are removed at
/// once, unless another file of the same request still needs them; whatever is left (abandoned uploads,
/// failed files) is removed by `sweep(now:)` after `limits.chunkLifetime`.
public struct ChunkUploadService: Sendable {
    let chunks: any ChunkStore
    let uploads: any DifUploadStore
    let debugFiles: DebugFileService
    let hasher: any ChecksumHashing
    let clock: any WallClock
    let telemetry: Telemetry?
    public let limits: ChunkUploadLimits
    let inFlight = InFlightAssembles()

    public init(
        chunks: any ChunkStore, uploads: any DifUploadStore, debugFiles: DebugFileService, hasher: any ChecksumHashing,
        clock: any WallClock, telemetry: Telemetry? = nil, limits: ChunkUploadLimits = ChunkUploadLimits()
    ) {
        self.chunks = chunks
        self.uploads = uploads
        self.debugFiles = debugFiles
        self.hasher = hasher
        self.clock = clock
        self.telemetry = telemetry
        self.limits = limits
    }

    // MARK: Chunks

    /// Verifies and stores the chunks of one request, one at a time as they are decoded (so a request holds
    /// at most one chunk in memory).
    /// - Throws: `ChunkUploadError` for a chunk that does not match its name, is too large, or one too many;
    ///   chunks before it are kept (they are valid).
    public func receive<Chunks: AsyncSequence>(_ incoming: Chunks, project: Project) async throws -> ChunkReceipt
    where Chunks.Element == UploadedChunk {
        telemetry?.count(Telemetry.Name.chunkUploadRequests)
        var receipt = ChunkReceipt(stored: 0, duplicates: 0)
        defer {
            telemetry?.count(Telemetry.Name.chunksReceived, by: receipt.stored, [("outcome", "stored")])
            telemetry?.count(Telemetry.Name.chunksReceived, by: receipt.duplicates, [("outcome", "duplicate")])
        }
        var count = 0
        for try await chunk in incoming {
            count += 1
            guard count <= limits.chunksPerRequest else {
                throw ChunkUploadError(.tooMany, "at most \(limits.chunksPerRequest) chunks per request")
            }
            guard chunk.bytes.count <= limits.chunkSize else {
                throw ChunkUploadError(
                    .chunkTooLarge, "chunk \(chunk.claimed) is larger than the chunk size (\(limits.chunkSize) bytes)")
            }
            let actual = hasher.sha1(chunk.bytes)
            guard actual == chunk.claimed else {
                throw ChunkUploadError(
                    .checksumMismatch,
                    "chunk \(chunk.claimed): its bytes have the SHA-1 \(actual); the file name must be the SHA-1 of the uncompressed chunk"
                )
            }
            if try chunks.put(chunk.claimed, bytes: chunk.bytes, project: project.id) {
                receipt.stored += 1
            } else {
                receipt.duplicates += 1
            }
        }
        return receipt
    }

    // MARK: Assemble

    /// Answers sentry-cli's assemble request: for each file, `ok` when it is stored, `not_found` with the
    /// chunks still to upload, or the outcome of assembling it now.
    ///
    /// - Parameter maxFileBytes: the largest debug file the server accepts.
    /// - Throws: `ChunkUploadError.tooMany` past `limits.maxFilesPerAssemble` files; storage failures.
    public func assemble(_ files: [DifAssembleRequest], project: Project, maxFileBytes: UInt64) async throws
        -> [DifAssembleResult]
    {
        guard files.count <= limits.maxFilesPerAssemble else {
            throw ChunkUploadError(.tooMany, "at most \(limits.maxFilesPerAssemble) files per assemble request")
        }
        var results: [DifAssembleResult] = []
        var assembledChunks = Set<ChunkChecksum>()
        for file in files {
            let (result, assembled) = try await assembleOne(file, project: project, maxFileBytes: maxFileBytes)
            telemetry?.count(Telemetry.Name.difAssemble, [("state", result.state.rawValue)])
            results.append(result)
            if assembled { assembledChunks.formUnion(file.chunks) }
        }
        // A chunk another file of this request still waits for stays until that file is done (or swept).
        var stillNeeded = Set<ChunkChecksum>()
        for (file, result) in zip(files, results) where result.state != .ok { stillNeeded.formUnion(file.chunks) }
        chunks.remove(assembledChunks.subtracting(stillNeeded).sorted(), project: project.id)
        return results
    }

    /// One file; `assembled` is true when its chunks were turned into a stored file just now.
    ///
    /// Nothing is written until `ChunkAssemblyPlan` says so: the list is screened before any chunk is looked up,
    /// then the chunks' stored sizes, the first bytes, the quota left and the assemblies running decide, and the
    /// writer is held to the planned size.
    func assembleOne(_ file: DifAssembleRequest, project: Project, maxFileBytes: UInt64) async throws
        -> (result: DifAssembleResult, assembled: Bool)
    {
        if let record = try await uploads.record(project: project.id, checksum: file.checksum), record.state == .ok,
            let dif = record.dif, try await stillStored(dif, project: project)
        {
            return (DifAssembleResult(checksum: file.checksum, state: .ok, dif: dif), false)
        }
        let planLimits = limits.assemblyLimits(maxFileBytes: maxFileBytes)
        if let refusal = ChunkAssemblyPlan.screen(file.chunks, limits: planLimits) {
            return (try await refuse(file, refusal, project: project), false)
        }
        var unique: [ChunkChecksum] = []
        var seen = Set<ChunkChecksum>()
        for chunk in file.chunks where seen.insert(chunk).inserted { unique.append(chunk) }
        let sizes = try chunks.sizes(unique, project: project.id)
        if sizes.count < unique.count {
            // Nothing uploaded yet: perhaps the project has this very file from symupload.
            if sizes.isEmpty, let dif = try await recognise(file, project: project) {
                return (DifAssembleResult(checksum: file.checksum, state: .ok, dif: dif), false)
            }
            return (
                DifAssembleResult(
                    checksum: file.checksum, state: .notFound, missingChunks: unique.filter { sizes[$0] == nil }), false
            )
        }
        let head: ChunkAssemblyPlan.Head
        do {
            head = try self.head(of: file.chunks, project: project)
        } catch ChunkStoreError.missing {
            // Swept since its size was read: ask for whatever is gone now.
            let gone = try chunks.missing(unique, project: project.id)
            return (DifAssembleResult(checksum: file.checksum, state: .notFound, missingChunks: gone), false)
        }
        var replacing: BuildID?
        if case .debugFile(let buildID) = head { replacing = buildID }
        let quotaLeft = try await debugFiles.uploadAllowance(project: project, replacing: replacing)

        let key = InFlightAssembles.Key(project: project.id, checksum: file.checksum)
        let decision = inFlight.claim(key) { running in
            ChunkAssemblyPlan.decide(
                file.chunks, stored: sizes, head: head, quotaLeft: quotaLeft, running: running, limits: planLimits)
        }
        let plannedBytes: UInt64
        switch decision {
        case .write(let bytes): plannedBytes = bytes
        case .missing(let gone):
            return (DifAssembleResult(checksum: file.checksum, state: .notFound, missingChunks: gone), false)
        case .wait: return (DifAssembleResult(checksum: file.checksum, state: .assembling), false)
        case .refuse(let refusal): return (try await refuse(file, refusal, project: project), false)
        }
        defer { inFlight.release(key) }

        let upload = try debugFiles.temporaryUpload()
        let digest = hasher.sha1()
        let content = debugFiles.contentDigester()
        let size: UInt64
        do {
            size = try await chunks.concatenate(
                file.chunks, project: project.id, into: upload.path, maxBytes: plannedBytes
            ) {
                digest.update($0)
                content.update($0)
            }
        } catch let error as ChunkStoreError {
            debugFiles.discard(upload)
            switch error {
            case .missing:
                // Swept or removed while we read: ask for whatever is gone now.
                let gone = try chunks.missing(unique, project: project.id)
                return (DifAssembleResult(checksum: file.checksum, state: .notFound, missingChunks: gone), false)
            case .tooLarge:
                // A chunk grew since its size was read (replaced on disk): not the planned file.
                return (
                    try await fail(
                        file, project: project, "the chunks changed while the file was assembled; upload again"), false
                )
            }
        } catch {
            debugFiles.discard(upload)
            throw error
        }
        let actual = digest.finalize()
        guard actual == file.checksum else {
            debugFiles.discard(upload)
            // Every chunk matched its own name, so the list of chunks is wrong: drop them so a new run starts over.
            chunks.remove(unique, project: project.id)
            return (
                try await fail(
                    file, project: project,
                    "the chunks add up to a file whose SHA-1 is \(actual), not \(file.checksum); they were discarded, upload again"
                ),
                false
            )
        }
        let accepted: AcceptedDebugFile
        do {
            // A fat Mach-O is stored one slice a file (sentry-cli splits them itself); the answer describes the slice the
            // client named, else the first.
            let all = try await debugFiles.acceptAll(
                ReceivedDebugFile(upload: upload, sha256: content.finalize(), size: size), claimed: nil,
                project: project,
                name: Self.objectName(file.name))
            let wanted = file.debugID.flatMap(DifIdentifiers.normalized(debugID:))
            guard
                let named = all.first(where: {
                    DifIdentifiers.debugID(of: $0.buildID, format: $0.facts.format) == wanted
                }) ?? all.first
            else { throw DebugFileError(.nothingToServe, "the file holds no debug file") }
            accepted = named
        } catch let error as DebugFileError {
            return (try await fail(file, project: project, "not stored: \(error.message)"), false)
        }
        let dif = describe(accepted.facts, buildID: accepted.buildID, size: accepted.size, file: file)
        try await uploads.save(
            DifUploadRecord(
                project: project.id, checksum: file.checksum, name: file.name, debugID: file.debugID,
                buildID: accepted.buildID,
                state: .ok, detail: nil, dif: dif, updatedAt: clock.now()))
        return (DifAssembleResult(checksum: file.checksum, state: .ok, dif: dif), true)
    }

    /// An `ok` record counts only while the project still has a debug file of that build-id: if the store
    /// ever loses it, the file is asked for again instead of being reported as on the server.
    /// A source bundle counts only while the project still has its bundle (not merely the binary's symbols).
    func stillStored(_ dif: DifDescription, project: Project) async throws -> Bool {
        let kinds: Set<DebugFileKind> = dif.objectClass == .src ? [.sources] : DebugFileKind.elfKinds
        let lacking = try await debugFiles.missing([DebugFileWant(buildID: dif.codeID, kinds: kinds)], project: project)
        return lacking.first?.kinds != kinds
    }

    /// The most first bytes of a file read to check it before it is written: the ELF header, the program
    /// headers and the build-id note of every linker's output sit well within them.
    static let headBytes = 64 << 10

    /// What the file's first bytes say: up to `headBytes` from its first chunks (one, for sentry-cli's files).
    func head(of listed: [ChunkChecksum], project: Project) throws -> ChunkAssemblyPlan.Head {
        var bytes: [UInt8] = []
        for chunk in listed where bytes.count < Self.headBytes {
            bytes += try chunks.head(of: chunk, project: project.id, maxBytes: Self.headBytes - bytes.count)
        }
        do {
            return .debugFile(try debugFiles.inspector.inspectHead(bytes))
        } catch {
            return .notADebugFile("\(error)")
        }
    }

    /// Records and answers a file refused by its plan.
    func refuse(_ file: DifAssembleRequest, _ refusal: ChunkAssemblyPlan.Refusal, project: Project) async throws
        -> DifAssembleResult
    {
        try await fail(file, project: project, refusal.description)
    }

    /// Records and answers a failed file.
    func fail(_ file: DifAssembleRequest, project: Project, _ detail: String) async throws -> DifAssembleResult {
        try await uploads.save(
            DifUploadRecord(
                project: project.id, checksum: file.checksum, name: file.name, debugID: file.debugID, buildID: nil,
                state: .error,
                detail: detail, dif: nil, updatedAt: clock.now()))
        return DifAssembleResult(checksum: file.checksum, state: .error, detail: detail)
    }

    /// A file the project stored earlier (with `symupload`) that is byte for byte the one offered: same
    /// debug id, a size that fits its chunk count, the same SHA-1. Recorded as assembled when found.
    func recognise(_ file: DifAssembleRequest, project: Project) async throws -> DifDescription? {
        guard let debugID = file.debugID, let wanted = DifIdentifiers.normalized(debugID: debugID) else { return nil }
        let chunkSize = UInt64(limits.chunkSize)
        let sizes = (UInt64(file.chunks.count - 1) * chunkSize + 1)...(UInt64(file.chunks.count) * chunkSize)
        for (prefix, format) in DifIdentifiers.candidatePrefixes(ofDebugID: debugID) {
            for buildID in try await uploads.storedBuildIDs(project: project.id, hexPrefix: prefix, limit: 8)
            where DifIdentifiers.debugID(of: buildID, format: format) == wanted {
                if let dif = try await recognise(file, buildID: buildID, format: format, sizes: sizes, project: project)
                {
                    return dif
                }
            }
        }
        return nil
    }

    /// The stored file of `buildID` (of `format`) that is byte for byte `file`, recorded as assembled; nil when none is.
    func recognise(
        _ file: DifAssembleRequest, buildID: BuildID, format: DebugFileFormat, sizes: ClosedRange<UInt64>,
        project: Project
    ) async throws -> DifDescription? {
        var hashed = Set<String>()
        for kind in DebugFileKind.allCases {
            guard let path = try await debugFiles.path(of: buildID, kind: kind, project: project.id),
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? UInt64,
                sizes.contains(size),
                hashed.insert(path).inserted,
                let sum = try? hasher.sha1(ofFileAt: path), sum == file.checksum,
                let facts = debugFiles.facts(ofFileAt: path), facts.format == format || facts.format == .sourceBundle
            else { continue }
            let dif = describe(facts, buildID: buildID, size: size, file: file)
            try await uploads.save(
                DifUploadRecord(
                    project: project.id, checksum: file.checksum, name: file.name, debugID: file.debugID,
                    buildID: buildID,
                    state: .ok, detail: nil, dif: dif, updatedAt: clock.now()))
            return dif
        }
        return nil
    }

    func describe(_ facts: DebugFileFacts, buildID: BuildID, size: UInt64, file: DifAssembleRequest) -> DifDescription {
        DifDescription(
            id: file.checksum.rawValue, debugID: DifIdentifiers.debugID(of: buildID, format: facts.format),
            codeID: buildID,
            cpuName: facts.architecture, objectName: Self.objectName(file.name), size: size, sha1: file.checksum,
            createdAt: clock.now(),
            objectClass: DifObjectClass.of(facts), features: facts.features, format: facts.format)
    }

    /// The base name of a client-sent name, at most 255 bytes: a label for people, never a path.
    static func objectName(_ name: String) -> String {
        let base = name.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? name
        return IngestLimits.truncate(base.isEmpty ? "unnamed" : base, toBytes: 255)
    }

    // MARK: Sweep

    /// Removes chunks unused for `limits.chunkLifetime`; returns how many.
    @discardableResult
    public func sweep(now: Date) throws -> Int {
        let removed = try chunks.sweep(unusedSince: now.addingTimeInterval(-limits.chunkLifetime))
        telemetry?.count(Telemetry.Name.chunksSwept, by: removed)
        return removed
    }
}

/// The assembles running now and the bytes each was planned to write, so that a second request for the same
/// file waits instead of racing, a project runs a bounded number at once, and their planned sizes together stay
/// within its quota (each plan is made under the lock, seeing the others).
final class InFlightAssembles: Sendable {
    struct Key: Hashable, Sendable {
        var project: ProjectID
        var checksum: ChunkChecksum
    }
    let running = Mutex<[Key: UInt64]>([:])

    /// Decides with `plan`, shown the project's running assembles; a `.write` claims `key` (the caller must
    /// `release` it after), anything else claims nothing.
    func claim(_ key: Key, plan: (ChunkAssemblyPlan.Running) -> ChunkAssemblyPlan.Decision)
        -> ChunkAssemblyPlan.Decision
    {
        running.withLock { running in
            var now = ChunkAssemblyPlan.Running(sameFile: running[key] != nil)
            for (other, bytes) in running where other.project == key.project {
                now.count += 1
                now.bytes = now.bytes.addingReportingOverflow(bytes).overflow ? .max : now.bytes + bytes
            }
            let decision = plan(now)
            if case .write(let bytes) = decision { running[key] = bytes }
            return decision
        }
    }

    func release(_ key: Key) { _ = running.withLock { $0.removeValue(forKey: key) } }
}
