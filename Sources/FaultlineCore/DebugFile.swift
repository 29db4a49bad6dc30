#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a stored debug file can be asked for (the debuginfod names).
public enum DebugFileKind: String, Sendable, Codable, CaseIterable, Comparable {
    /// DWARF debug information: an unstripped binary or a split debug file.
    case debuginfo
    /// The program's code: the executable or shared library, stripped or not.
    case executable
    /// A source bundle (Sentry's `SYSB` format): the source files the binary with this build-id was built
    /// from, for source context on the dashboard and debuginfod's `/buildid/{id}/source/{path}`. Never used
    /// to symbolicate.
    case sources

    /// The kinds an ELF file can serve (what `symupload` asks about when it names no kinds).
    public static let elfKinds: Set<DebugFileKind> = [.debuginfo, .executable]

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// The container format of a stored debug file.
public enum DebugFileFormat: String, Sendable, Codable {
    case elf
    /// A thin Mach-O image (a dSYM's DWARF file, an executable, a dylib): stored files are never fat.
    case macho
    /// Sentry's `SYSB` source bundle.
    case sourceBundle = "sourcebundle"
}

/// What a debug file's headers say, as far as storage and symbolication care.
public struct DebugFileFacts: Sendable, Equatable {
    /// An ELF file's GNU build-id, a Mach-O image's LC_UUID (32 hex digits in file order), a bundle's `code_id`.
    public var buildID: BuildID?
    /// The kinds this one file can serve (an unstripped `-g` binary serves both).
    public var kinds: Set<DebugFileKind>
    public var architecture: String
    /// `executable`, `shared_object`, …
    public var fileType: String
    /// `symtab`, `debug`, `unwind` (sentry-cli's names).
    public var features: [String]
    public var compressedDebugSections: Bool
    public var format: DebugFileFormat

    public init(
        buildID: BuildID?, kinds: Set<DebugFileKind>, architecture: String, fileType: String, features: [String],
        compressedDebugSections: Bool, format: DebugFileFormat = .elf
    ) {
        self.format = format
        self.buildID = buildID
        self.kinds = kinds
        self.architecture = architecture
        self.fileType = fileType
        self.features = features
        self.compressedDebugSections = compressedDebugSections
    }
}

/// The SHA-256 of a debug file's bytes: 64 lowercase hex digits. Debug-file blobs on disk are named by it,
/// so it is validated strictly (it can never contain `/` or `..`).
///
/// Two uploads share a stored blob only when their hashes are equal, never because their build-ids are:
/// a build-id is a claim made by whoever linked the file, a content hash is a fact about its bytes.
public struct ContentHash: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String
    /// Validates `value`; nil unless it is exactly 64 hex digits.
    public init?(_ value: some StringProtocol) {
        guard value.utf8.count == 64 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(64)
        for b in value.utf8 {
            guard let lower = Hex.lowercasedHexDigit(b) else { return nil }
            out.append(lower)
        }
        rawValue = String(decoding: out, as: UTF8.self)
    }
    /// The hash of a 32-byte digest.
    public init?(digest: some Collection<UInt8>) {
        guard digest.count == 32 else { return nil }
        self.init(Hex.encode(digest))
    }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// One SHA-256 computation fed piece by piece (as an upload streams in).
public protocol ContentDigesting: AnyObject {
    func update(_ bytes: [UInt8])
    func finalize() -> ContentHash
}

/// SHA-256 of debug files. Passed in: the implementation (swift-crypto) lives in the HTTP module.
public protocol ContentHashing: Sendable {
    /// A new, empty SHA-256 computation.
    func sha256() -> any ContentDigesting
    /// The SHA-256 of a file on disk, read in pieces.
    func sha256(ofFileAt path: String) throws -> ContentHash
}

/// A stored debug file as listed for a project.
public struct StoredDebugFile: Sendable, Equatable {
    public var project: ProjectID
    public var buildID: BuildID
    public var kind: DebugFileKind
    /// The size of this project's file in bytes.
    public var size: UInt64
    /// The SHA-256 of this project's file (the blob it owns).
    public var sha256: ContentHash
    public var architecture: String
    public var fileType: String
    public var features: [String]
    /// The file name the uploader gave, for people; never used as a path.
    public var name: String?
    public var uploadedAt: Date

    public init(
        project: ProjectID, buildID: BuildID, kind: DebugFileKind, size: UInt64, sha256: ContentHash,
        architecture: String, fileType: String, features: [String], name: String?, uploadedAt: Date
    ) {
        self.project = project
        self.buildID = buildID
        self.kind = kind
        self.size = size
        self.sha256 = sha256
        self.architecture = architecture
        self.fileType = fileType
        self.features = features
        self.name = name
        self.uploadedAt = uploadedAt
    }
}

/// A file being uploaded: written by the HTTP edge, then handed to the debug-file service.
public struct TemporaryUpload: Sendable, Equatable {
    /// Where the bytes are; inside the data folder, named by the store, never by the client.
    public let path: String
    public init(path: String) { self.path = path }
}

/// One debug file an upload was split into (`DebugFileInspecting.split`).
public struct DebugFilePiece: Sendable, Equatable {
    /// The piece's bytes, in a temporary file of the store.
    public var upload: TemporaryUpload
    /// A name for people: the upload's name with the architecture, or the path inside an archive.
    public var name: String?
    public init(upload: TemporaryUpload, name: String?) {
        self.upload = upload
        self.name = name
    }
}

/// Reads the headers of a file on disk.
public protocol DebugFileInspecting: Sendable {
    /// Throws when the file is not a debug file it can read (an ELF file, a thin Mach-O or a source bundle).
    func inspect(path: String) throws -> DebugFileFacts
    /// Splits an upload that holds several debug files into them: a fat Mach-O into its slices, a ZIP archive of
    /// dSYMs into the Mach-O images in it (fat ones split too). Each piece is written to a file `newFile` gives.
    /// - Parameter name: the upload's name, for the pieces' names.
    /// - Returns: nil when the upload is one debug file (inspect it as it is).
    /// - Throws: when the container is damaged or hostile, or holds no debug file; the pieces written so far are the
    ///   caller's to discard (they were all returned through `newFile`).
    func split(path: String, name: String?, newFile: () throws -> TemporaryUpload) throws -> [DebugFilePiece]?
    /// Checks the first bytes of a file (`head`, as many as the caller has, treated as all it will see) the way
    /// `inspect` would, so that a file that cannot be a debug file is refused before it is written out.
    /// - Returns: the build-id, when the first bytes hold it (an ELF `PT_NOTE` near the start).
    /// - Throws: when the first bytes cannot begin a debug file `inspect` accepts.
    func inspectHead(_ head: [UInt8]) throws -> BuildID?
    /// What a stored file's headers say. The file was checked whole when it was stored, so an implementation may
    /// skip the checks that cost time (a source bundle's files are not inflated again): a request that looks at a
    /// stored file must not cost what its upload did.
    func inspectStored(path: String) throws -> DebugFileFacts
}

extension DebugFileInspecting {
    /// By default, `inspect(path:)`.
    public func inspectStored(path: String) throws -> DebugFileFacts { try inspect(path: path) }
    /// By default, every upload is one debug file.
    public func split(path: String, name: String?, newFile: () throws -> TemporaryUpload) throws -> [DebugFilePiece]? {
        nil
    }
}

/// A completed upload and what the HTTP edge learned while it streamed in.
public struct ReceivedDebugFile: Sendable, Equatable {
    public var upload: TemporaryUpload
    /// The SHA-256 of the bytes written.
    public var sha256: ContentHash
    /// Bytes written.
    public var size: UInt64
    public init(upload: TemporaryUpload, sha256: ContentHash, size: UInt64) {
        self.upload = upload
        self.sha256 = sha256
        self.size = size
    }
}

/// What `DebugFileStore.store` did.
public enum DebugFileStoreOutcome: Sendable, Equatable {
    /// Stored: one row per kind. `replaced` is true when the project had a different file (another content
    /// hash) for one of these kinds before: its reports that used the build-id need symbolicating again.
    case stored([StoredDebugFile], replaced: Bool)
    /// Nothing changed: the project's files would take `wouldUse` bytes, more than its quota.
    case quotaExceeded(wouldUse: UInt64)
}

/// One verified file of an upload, to store under `buildID` (`DebugFileStore.storeAll`).
public struct DebugFileToStore: Sendable {
    public var file: ReceivedDebugFile
    public var facts: DebugFileFacts
    public var buildID: BuildID
    /// The client's file name, kept for people only.
    public var name: String?
    public init(_ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, name: String?) {
        (self.file, self.facts, self.buildID, self.name) = (file, facts, buildID, name)
    }
}

/// Debug files on disk, content addressed by SHA-256, and which project owns which (per build-id and kind).
///
/// Every method takes the project: a project sees, replaces and is charged for its own files only. Two
/// projects share a blob on disk only when their files are byte for byte the same.
public protocol DebugFileStore: Sendable {
    /// A new, empty temporary file for an upload.
    func temporaryUpload() throws -> TemporaryUpload
    /// Deletes a temporary upload (after a failure).
    func discard(_ upload: TemporaryUpload)
    /// Moves the upload into the blob store (or reuses the identical blob) and records it as `project`'s file
    /// for every kind in `facts.kinds`, replacing the project's earlier file of that build-id and kind (newest
    /// wins). The quota is checked in the same transaction: the project's distinct blobs after the change, with its
    /// stored minidumps, must fit in `quotaBytes`. Atomic: a reader sees the old state or the new one.
    func store(
        _ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
        quotaBytes: UInt64, at date: Date
    ) async throws -> DebugFileStoreOutcome
    /// Stores the files of one upload (a fat Mach-O's slices, a ZIP's dSYMs) all or none, in one transaction: each as
    /// `store` stores it, its quota counted with the files before it. The first that would not fit refuses them all
    /// (`[.quotaExceeded(wouldUse:)]`, that file's figure) and nothing changes, so a client never finds half of an
    /// upload kept; otherwise one `.stored` outcome per file, in order. Every temporary file is consumed either way.
    func storeAll(_ files: [DebugFileToStore], project: ProjectID, quotaBytes: UInt64, at date: Date) async throws
        -> [DebugFileStoreOutcome]
    /// The kinds of `buildID` that `project` has.
    func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind>
    /// Every debug file of `project`, newest first.
    func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile]
    /// The project's quota use: bytes of the distinct blobs `project` owns, leaving out the files of `excluding` (the
    /// build-id an upload may replace), plus its stored minidumps (`MinidumpStore.minidumpBytes`), which count
    /// against the same quota.
    func bytesUsed(project: ProjectID, excluding: BuildID?) async throws -> UInt64
    /// The path of `project`'s stored file of `kind` for `buildID`. With `project == nil` (admin token, public
    /// debuginfod) the file of the oldest project (lowest id) that has one, so the answer never depends on
    /// who uploaded last.
    func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String?
}

extension DebugFileStore {
    /// `storeAll` of the one file: how both engines store a single upload.
    public func store(
        _ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
        quotaBytes: UInt64, at date: Date
    ) async throws -> DebugFileStoreOutcome {
        let outcomes = try await storeAll(
            [DebugFileToStore(file, facts: facts, buildID: buildID, name: name)], project: project,
            quotaBytes: quotaBytes, at: date)
        guard let outcome = outcomes.first else { throw StorageError(.conflict, "a stored debug file gave no outcome") }
        return outcome
    }
}

/// What `DebugFileStore.store` decides, the same on every engine: the rows one file gives a project, whether they fit
/// its quota, and, row by row against what the project held before, what changed. The stores apply it inside their
/// transaction (they read the previous blobs and write the rows; this decides).
public struct DebugFileChange: Sendable {
    /// One row per kind the file serves, in kind order.
    public let rows: [StoredDebugFile]
    /// The kinds whose earlier file had other bytes (a replacement: reports made with it are redone).
    public private(set) var replacedKinds: [DebugFileKind] = []
    /// The kinds the project had no file of before (see `DebugDataRank.requeuesSameRank`).
    public private(set) var addedKinds: [DebugFileKind] = []
    /// The blobs the project's rows named before and no longer do (removed once no row names them).
    public private(set) var released: Set<ContentHash> = []
    let size: UInt64
    let sha256: ContentHash

    public init(
        _ file: ReceivedDebugFile, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
        at date: Date
    ) {
        size = file.size
        sha256 = file.sha256
        rows = facts.kinds.sorted().map { kind in
            StoredDebugFile(
                project: project, buildID: buildID, kind: kind, size: file.size, sha256: file.sha256,
                architecture: facts.architecture,
                fileType: facts.fileType, features: facts.features, name: name, uploadedAt: date)
        }
    }

    /// The kinds the rows are for.
    public var kinds: [DebugFileKind] { rows.map(\.kind) }

    /// `.quotaExceeded` when this file and the project's other distinct blobs (`others` bytes, leaving out the rows
    /// this file replaces and its own blob) do not fit in `quota`; nil when they fit. Sizes come from uploads: a sum
    /// past `UInt64.max` is refused, never wrapped.
    public func refusal(others: UInt64, quota: UInt64) -> DebugFileStoreOutcome? {
        let (total, overflow) = others.addingReportingOverflow(size)
        return !overflow && total <= quota ? nil : .quotaExceeded(wouldUse: overflow ? .max : total)
    }

    /// Notes the blob the project's row of `kind` named before (`previous`: nil without a row, possibly not a hash
    /// when the row had none). Returns whether this row changes what the project holds in a way that takes a change
    /// sequence value: new or other bytes, except for a source bundle, which resolves no address. The same bytes again
    /// change nothing, and must not make reports in flight be redone.
    public mutating func note(previous: String?, for kind: DebugFileKind) -> Bool {
        if previous == nil { addedKinds.append(kind) }
        if let previous, previous != sha256.rawValue {
            replacedKinds.append(kind)
            if let old = ContentHash(previous) { released.insert(old) }
        }
        return previous != sha256.rawValue && kind != .sources
    }

    /// What `store` answers once the rows are written.
    public var outcome: DebugFileStoreOutcome { .stored(rows, replaced: !replacedKinds.isEmpty) }
}
