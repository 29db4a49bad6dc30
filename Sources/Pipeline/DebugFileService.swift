import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a debug file upload was refused. The HTTP module maps codes to statuses.
public struct DebugFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not an ELF file, a Mach-O file, a ZIP of dSYMs or a source bundle, or one we cannot read (400). The code keeps
        /// its first name for the clients that test it.
        case notELF = "not_elf"
        /// The file has no GNU build-id (400).
        case noBuildID = "no_build_id"
        /// The file's build-id (or none of a fat file's slices' UUIDs) is not the one in the URL (400).
        case buildIDMismatch = "build_id_mismatch"
        /// Neither debug information nor code: nothing to serve (400).
        case nothingToServe = "nothing_to_serve"
        /// The project's debug-file quota would be exceeded (413).
        case quotaExceeded = "quota_exceeded"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code.rawValue): \(message)" }
}

/// A build-id and the kinds wanted of it (the missing-files question of `symupload`).
public struct DebugFileWant: Sendable, Equatable {
    public var buildID: BuildID
    public var kinds: Set<DebugFileKind>
    public init(buildID: BuildID, kinds: Set<DebugFileKind>) {
        self.buildID = buildID
        self.kinds = kinds
    }
}

/// A debug file that passed verification and was stored.
public struct AcceptedDebugFile: Sendable, Equatable {
    public var buildID: BuildID
    public var facts: DebugFileFacts
    /// The file's size in bytes.
    public var size: UInt64
    /// The SHA-256 of the file's bytes.
    public var sha256: ContentHash
    /// The index rows, one per kind the file serves.
    public var stored: [StoredDebugFile]
}

/// Debug-file uploads and lookups: verification (an ELF whose build-id matches), quota, storage.
///
/// Files belong to the project that uploaded them (see `DebugFileStore`): every lookup names the project,
/// and the answer to an upload describes the caller's own file (its size, kinds and SHA-256).
public struct DebugFileService: Sendable {
    let store: any DebugFileStore
    let inspector: any DebugFileInspecting
    let hasher: any ContentHashing
    let clock: any WallClock
    /// Bytes of debug files a project may keep.
    public let quotaBytes: UInt64
    /// Called after a debug file is stored, with `replaced` true when it took the place of a different file of
    /// the project (queues the reports that lacked it, or used the old one, for symbolication again).
    let onStored: @Sendable (_ project: ProjectID, _ buildID: BuildID, _ replaced: Bool) async -> Void
    /// Runs an upload's inspection or splitting somewhere and returns its answer.
    public typealias Offload =
        @Sendable (_ work: @escaping @Sendable () throws -> any Sendable) async throws -> any Sendable
    /// Where uploads are inspected and split: checking a source bundle or expanding a ZIP of dSYMs inflates every file in
    /// it, seconds of CPU that must not hold the request's executor (the composition root passes a `BlockingWorkPool`);
    /// by default, in place.
    let offload: Offload
    /// Reads the file the debug information calls `path` from the source bundle stored at `bundlePath` (nil: the
    /// bundle lacks it); throws when the bundle cannot be read.
    public typealias SourceReader = @Sendable (_ path: String, _ bundlePath: String) async throws -> [UInt8]?
    /// How stored source bundles are read (the composition root passes a `SourceBundleCache`, which parses each
    /// bundle once and inflates off the request's executor); by default no bundle can be read.
    let sourceReader: SourceReader

    public init(
        store: any DebugFileStore, inspector: any DebugFileInspecting, hasher: any ContentHashing, clock: any WallClock,
        quotaBytes: UInt64, offload: @escaping Offload = { try $0() },
        sourceReader: @escaping SourceReader = { _, _ in
            throw DebugFileError(.notELF, "source bundles are not read here")
        },
        onStored: @escaping @Sendable (ProjectID, BuildID, Bool) async -> Void = { _, _, _ in }
    ) {
        self.store = store
        self.offload = offload
        self.sourceReader = sourceReader
        self.inspector = inspector
        self.hasher = hasher
        self.clock = clock
        self.quotaBytes = quotaBytes
        self.onStored = onStored
    }

    /// A temporary file for the HTTP edge to write an upload into.
    public func temporaryUpload() throws -> TemporaryUpload { try store.temporaryUpload() }

    /// Forgets a temporary upload that could not be completed.
    public func discard(_ upload: TemporaryUpload) { store.discard(upload) }

    /// A SHA-256 computation for the bytes of an upload as they are written.
    public func contentDigester() -> any ContentDigesting { hasher.sha256() }

    /// Bytes an upload may still write for `project` before it cannot fit the quota, counting the project's
    /// files of `replacing` (the build-id in the URL) as freed, since a new upload replaces them.
    public func uploadAllowance(project: Project, replacing: BuildID?) async throws -> UInt64 {
        let used = try await store.bytesUsed(project: project.id, excluding: replacing)
        return quotaBytes > used ? quotaBytes - used : 0
    }

    /// The quota error for `project`, as answered while streaming and after.
    public func quotaError(_ project: Project, wouldUse: UInt64? = nil) -> DebugFileError {
        let detail = wouldUse.map { ", and this file would make it \($0 >> 20) MiB" } ?? ""
        return DebugFileError(
            .quotaExceeded, "project \(project.slug) has a \(quotaBytes >> 20) MiB debug-file quota\(detail)")
    }

    /// Hashes a completed upload that was not hashed while it was written.
    public func received(_ upload: TemporaryUpload) throws -> ReceivedDebugFile {
        var st = stat()
        guard stat(upload.path, &st) == 0 else { throw DebugFileError(.notELF, "the upload cannot be read") }
        return ReceivedDebugFile(
            upload: upload, sha256: try hasher.sha256(ofFileAt: upload.path), size: UInt64(clamping: st.st_size))
    }

    /// Verifies and stores a completed upload for `project`; the temporary file is consumed either way.
    ///
    /// - Parameters:
    ///   - claimed: the build-id in the URL; the file's own must match.
    ///   - name: the client's file name, kept for people only.
    public func accept(_ file: ReceivedDebugFile, claimed: BuildID, project: Project, name: String?) async throws
        -> [StoredDebugFile]
    {
        try await acceptAll(file, claimed: claimed, project: project, name: name).flatMap(\.stored)
    }

    /// Verifies and stores a completed upload that may hold several debug files: a fat Mach-O is stored one slice a file,
    /// a ZIP of dSYMs one Mach-O image (slice) a file, each under its own build-id with the same checks, quota and
    /// isolation as a single file; anything else is one file. Every piece is checked before any is stored, so a damaged
    /// slice refuses the whole upload, and the pieces are stored all or none (`DebugFileStore.storeAll`), so one past
    /// the quota does too. The temporary file (and every piece) is consumed either way.
    ///
    /// - Parameters:
    ///   - claimed: the build-id in the URL (nil: the route names none); a single file's must match, and one of the
    ///     pieces' must.
    ///   - name: the client's file name, kept for people only.
    /// - Returns: one accepted file per piece, in the container's order.
    public func acceptAll(_ file: ReceivedDebugFile, claimed: BuildID?, project: Project, name: String?) async throws
        -> [AcceptedDebugFile]
    {
        let upload = file.upload
        let pieces: [DebugFilePiece]?
        do {
            pieces = try await offloaded { [inspector, store] in
                var made: [TemporaryUpload] = []
                do {
                    return try inspector.split(path: upload.path, name: name) {
                        let piece = try store.temporaryUpload()
                        made.append(piece)
                        return piece
                    }
                } catch {
                    for piece in made { store.discard(piece) }
                    throw error
                }
            }
        } catch {
            store.discard(upload)
            throw DebugFileError(
                .notELF,
                "the upload is not an ELF or Mach-O file, a ZIP of dSYMs or a source bundle that can be read: \(error)")
        }
        guard let pieces else {
            return [try await verifyAndStore(file, claimed: claimed, project: project, name: name)]
        }
        store.discard(upload)
        var checked: [DebugFileToStore] = []
        do {
            for piece in pieces {
                let facts = try await inspected(piece.upload)
                let buildID = try Self.verify(facts, claimed: nil)
                checked.append(
                    DebugFileToStore(try received(piece.upload), facts: facts, buildID: buildID, name: piece.name))
            }
            if let claimed, !checked.contains(where: { $0.buildID == claimed }) {
                let found = checked.map(\.buildID.rawValue).joined(separator: ", ")
                throw DebugFileError(.buildIDMismatch, "none of the file's build-ids (\(found)) is \(claimed)")
            }
        } catch {
            for piece in pieces { store.discard(piece.upload) }
            throw error
        }
        return try await keep(checked, project: project)
    }

    /// `work`'s answer, run where `offload` runs it.
    func offloaded<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        guard let value = try await offload(work) as? T else {
            throw DebugFileError(.notELF, "the upload could not be inspected")
        }
        return value
    }

    /// Verifies and stores a completed upload whose build-id is not known in advance (a file sentry-cli
    /// had assembled from chunks): the same checks and the same store as `symupload`'s uploads. The
    /// temporary file is consumed either way.
    public func accept(_ file: ReceivedDebugFile, project: Project, name: String?) async throws -> AcceptedDebugFile {
        try await verifyAndStore(file, claimed: nil, project: project, name: name)
    }

    /// What a file's headers say, for a stored file (nil when it cannot be read); what its upload checked is not
    /// checked again (`DebugFileInspecting.inspectStored`), so this stays cheap on a request's executor.
    public func facts(ofFileAt path: String) -> DebugFileFacts? { try? inspector.inspectStored(path: path) }

    func verifyAndStore(_ file: ReceivedDebugFile, claimed: BuildID?, project: Project, name: String?) async throws
        -> AcceptedDebugFile
    {
        let facts = try await inspected(file.upload)
        let buildID: BuildID
        do {
            buildID = try Self.verify(facts, claimed: claimed)
        } catch {
            store.discard(file.upload)
            throw error
        }
        let accepted = try await keep(
            [DebugFileToStore(file, facts: facts, buildID: buildID, name: name)], project: project)
        guard let one = accepted.first else { throw StorageError(.conflict, "a stored debug file gave no outcome") }
        return one
    }

    /// The facts of an upload, inspected where `offload` runs it; the upload is discarded when it cannot be read.
    func inspected(_ upload: TemporaryUpload) async throws -> DebugFileFacts {
        do {
            return try await offloaded { [inspector] in try inspector.inspect(path: upload.path) }
        } catch {
            store.discard(upload)
            throw DebugFileError(
                .notELF, "the upload is not an ELF or Mach-O file or a source bundle that can be read: \(error)")
        }
    }

    /// The build-id a file is stored under, once its facts pass: it has one, it is the claimed one, it serves a kind.
    static func verify(_ facts: DebugFileFacts, claimed: BuildID?) throws -> BuildID {
        guard let buildID = facts.buildID else {
            let why: String
            switch facts.format {
            case .sourceBundle: why = "the source bundle's manifest names no code_id (the GNU build-id of its binary)"
            case .macho: why = "the Mach-O file has no LC_UUID (or an all-zero one)"
            case .elf: why = "the file has no GNU build-id note (link with -Wl,--build-id)"
            }
            throw DebugFileError(.noBuildID, why)
        }
        if let claimed, buildID != claimed {
            throw DebugFileError(.buildIDMismatch, "the file's build-id is \(buildID), not \(claimed)")
        }
        guard !facts.kinds.isEmpty else {
            throw DebugFileError(.nothingToServe, "the file holds neither DWARF debug information nor code")
        }
        return buildID
    }

    /// Stores verified files, each under its build-id, all or none (`DebugFileStore.storeAll`): one past the quota
    /// leaves none of them kept, so a retry after freeing space starts clean. Every temporary file is consumed either
    /// way.
    /// - Returns: one accepted file per piece, in order.
    func keep(_ pieces: [DebugFileToStore], project: Project) async throws -> [AcceptedDebugFile] {
        let outcomes: [DebugFileStoreOutcome]
        do {
            outcomes = try await store.storeAll(pieces, project: project.id, quotaBytes: quotaBytes, at: clock.now())
        } catch {
            for piece in pieces { store.discard(piece.file.upload) }
            throw error
        }
        var accepted: [AcceptedDebugFile] = []
        for (piece, outcome) in zip(pieces, outcomes) {
            switch outcome {
            case .quotaExceeded(let wouldUse):
                throw quotaError(project, wouldUse: wouldUse)
            case .stored(let stored, let replaced):
                await onStored(project.id, piece.buildID, replaced)
                accepted.append(
                    AcceptedDebugFile(
                        buildID: piece.buildID, facts: piece.facts, size: piece.file.size, sha256: piece.file.sha256,
                        stored: stored))
            }
        }
        return accepted
    }

    /// Which of `wanted` the project does not have yet (only the kinds still missing are returned).
    public func missing(_ wanted: [DebugFileWant], project: Project) async throws -> [DebugFileWant] {
        var out: [DebugFileWant] = []
        for want in wanted {
            let have = try await store.kinds(of: want.buildID, project: project.id)
            let lacking = want.kinds.subtracting(have)
            if !lacking.isEmpty { out.append(DebugFileWant(buildID: want.buildID, kinds: lacking)) }
        }
        return out
    }

    public func list(project: Project, limit: Int = 1000) async throws -> [StoredDebugFile] {
        try await store.list(project: project.id, limit: limit)
    }

    /// The stored file for a debuginfod request; `project == nil` searches every project.
    public func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String? {
        try await store.path(of: buildID, kind: kind, project: project)
    }

    /// The file the debug information calls `path`, from the source bundle stored at `bundlePath` (a path
    /// `path(of:kind:project:)` gave for the caller's project); nil when the bundle lacks it.
    /// - Throws: when the bundle cannot be read.
    public func sourceFile(_ path: String, inBundleAt bundlePath: String) async throws -> [UInt8]? {
        try await sourceReader(path, bundlePath)
    }
}
