import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a debug file upload was refused. The HTTP module maps codes to statuses.
public struct DebugFileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not an ELF file, or one we cannot read (400).
        case notELF = "not_elf"
        /// The file has no GNU build-id (400).
        case noBuildID = "no_build_id"
        /// The file's build-id is not the one in the URL (400).
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
    /// The index rows, one per kind the file serves.
    public var stored: [StoredDebugFile]
}

/// Debug-file uploads and lookups: verification (an ELF whose build-id matches), quota, storage.
public struct DebugFileService: Sendable {
    let store: any DebugFileStore
    let inspector: any DebugFileInspecting
    let clock: any WallClock
    /// Bytes of debug files a project may keep.
    public let quotaBytes: UInt64
    /// Called after a debug file is stored (queues the reports that lacked it for symbolication again).
    let onStored: @Sendable (ProjectID, BuildID) async -> Void

    public init(store: any DebugFileStore, inspector: any DebugFileInspecting, clock: any WallClock, quotaBytes: UInt64,
                onStored: @escaping @Sendable (ProjectID, BuildID) async -> Void = { _, _ in }) {
        self.store = store
        self.inspector = inspector
        self.clock = clock
        self.quotaBytes = quotaBytes
        self.onStored = onStored
    }

    /// A temporary file for the HTTP edge to write an upload into.
    public func temporaryUpload() throws -> TemporaryUpload { try store.temporaryUpload() }

    /// Forgets a temporary upload that could not be completed.
    public func discard(_ upload: TemporaryUpload) { store.discard(upload) }

    /// Verifies and stores a completed upload for `project`; the temporary file is consumed either way.
    ///
    /// - Parameters:
    ///   - claimed: the build-id in the URL; the file's own must match.
    ///   - name: the client's file name, kept for people only.
    public func accept(_ upload: TemporaryUpload, claimed: BuildID, project: Project, name: String?) async throws -> [StoredDebugFile] {
        try await verifyAndStore(upload, claimed: claimed, project: project, name: name).stored
    }

    /// Verifies and stores a completed upload whose build-id is not known in advance (a file sentry-cli
    /// had assembled from chunks): the same checks and the same store as `symupload`'s uploads. The
    /// temporary file is consumed either way.
    public func accept(_ upload: TemporaryUpload, project: Project, name: String?) async throws -> AcceptedDebugFile {
        try await verifyAndStore(upload, claimed: nil, project: project, name: name)
    }

    /// What a file's headers say, for a stored file (nil when it cannot be read).
    public func facts(ofFileAt path: String) -> DebugFileFacts? { try? inspector.inspect(path: path) }

    func verifyAndStore(_ upload: TemporaryUpload, claimed: BuildID?, project: Project, name: String?) async throws -> AcceptedDebugFile {
        let facts: DebugFileFacts
        do {
            facts = try inspector.inspect(path: upload.path)
        } catch {
            store.discard(upload)
            throw DebugFileError(.notELF, "the upload is not an ELF file that can be read: \(error)")
        }
        do {
            guard let buildID = facts.buildID else {
                throw DebugFileError(.noBuildID, "the file has no GNU build-id note (link with -Wl,--build-id)")
            }
            if let claimed, buildID != claimed {
                throw DebugFileError(.buildIDMismatch, "the file's build-id is \(buildID), not \(claimed)")
            }
            guard !facts.kinds.isEmpty else {
                throw DebugFileError(.nothingToServe, "the file holds neither DWARF debug information nor code")
            }
            let size = UInt64((try? FileManager.default.attributesOfItem(atPath: upload.path)[.size] as? UInt64) ?? 0)
            let have = try await store.kinds(of: buildID, project: project.id)
            let newKinds = facts.kinds.subtracting(have)
            if !newKinds.isEmpty {
                let used = try await store.bytesUsed(project: project.id)
                guard used + size * UInt64(newKinds.count) <= quotaBytes else {
                    throw DebugFileError(
                        .quotaExceeded,
                        "project \(project.slug) uses \(used >> 20) MiB of its \(quotaBytes >> 20) MiB debug-file quota")
                }
            }
            let stored = try await store.store(upload, facts: facts, buildID: buildID, project: project.id, name: name, at: clock.now())
            await onStored(project.id, buildID)
            return AcceptedDebugFile(buildID: buildID, facts: facts, size: size, stored: stored)
        } catch {
            store.discard(upload)
            throw error
        }
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
}
