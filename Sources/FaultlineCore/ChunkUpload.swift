#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// sentry-cli's chunked upload (`sentry-cli debug-files upload`): files are cut into chunks named by the
// SHA-1 of their bytes, the chunks are uploaded, then the server is asked to assemble each file (named
// by the SHA-1 of the whole file) from its chunks. See docs/sentry.md.

/// A SHA-1 checksum as sentry-cli sends it: 40 hex digits, normalised to lowercase.
///
/// Chunk files on disk are named by it, so it is validated strictly: it can never contain `/` or `..`.
public struct ChunkChecksum: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String
    /// Validates `value`; nil unless it is exactly 40 hex digits.
    public init?(_ value: some StringProtocol) {
        guard value.utf8.count == 40 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(40)
        for b in value.utf8 {
            guard let lower = Hex.lowercasedHexDigit(b) else { return nil }
            out.append(lower)
        }
        rawValue = String(decoding: out, as: UTF8.self)
    }
    /// The checksum of a 20-byte digest.
    public init?(digest: some Collection<UInt8>) {
        guard digest.count == 20 else { return nil }
        self.init(Hex.encode(digest))
    }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// What kind of object a debug file is, in Sentry's words (`data.type` of a dif).
///
/// sentry-cli 3.8.2 refuses any other value ("unknown object class"), so this set is closed.
public enum DifObjectClass: String, Sendable, Codable, CaseIterable {
    case none, rel, exe, lib, dump, dbg, src, other

    /// The class of a debug file from what its headers say: a source bundle is `src`; for an ELF file, a file without code but with DWARF is a debug
    /// companion (`objcopy --only-keep-debug`, whatever its `e_type`); otherwise `ET_EXEC` is `exe`, `ET_DYN`
    /// (shared libraries and PIE executables alike) is `lib`, `ET_REL` is `rel`, `ET_CORE` is `dump`.
    public static func of(_ facts: DebugFileFacts) -> DifObjectClass {
        if facts.kinds == [.sources] { return .src }
        if !facts.kinds.contains(.executable), facts.kinds.contains(.debuginfo) { return .dbg }
        switch facts.fileType {
        case "executable": return .exe
        case "shared_object", "dylib", "bundle": return .lib
        case "relocatable", "object": return .rel
        case "core": return .dump
        default: return .other
        }
    }

    /// How sentry-cli names the class when it prints a result (`elf library`, `elf debug companion`).
    public var humanName: String {
        switch self {
        case .none: "file"
        case .rel: "object"
        case .exe: "executable"
        case .lib: "library"
        case .dump: "core dump"
        case .dbg: "debug companion"
        case .src: "source bundle"
        case .other: "file"
        }
    }
}

/// A debug file assembled from chunks and stored, described the way Sentry's API describes one (`dif`).
public struct DifDescription: Sendable, Equatable, Codable {
    /// The file's checksum (stands in for Sentry's database id).
    public var id: String
    /// Sentry's debug id: for ELF the build-id's first 16 bytes as a little-endian GUID, for Mach-O the UUID as it is.
    public var debugID: String
    /// The GNU build-id (Sentry's code id).
    public var codeID: BuildID
    /// `x86_64`, `aarch64`, …
    public var cpuName: String
    /// The file's base name as the client sent it, for people only.
    public var objectName: String
    public var size: UInt64
    public var sha1: ChunkChecksum
    public var createdAt: Date
    public var objectClass: DifObjectClass
    /// `symtab`, `debug`, `unwind`.
    public var features: [String]
    /// The file's format (Sentry's `symbolType`: `elf`, `macho`, `sourcebundle`).
    public var format: DebugFileFormat

    public init(
        id: String, debugID: String, codeID: BuildID, cpuName: String, objectName: String, size: UInt64,
        sha1: ChunkChecksum, createdAt: Date, objectClass: DifObjectClass, features: [String],
        format: DebugFileFormat = .elf
    ) {
        self.format = format
        self.id = id
        self.debugID = debugID
        self.codeID = codeID
        self.cpuName = cpuName
        self.objectName = objectName
        self.size = size
        self.sha1 = sha1
        self.createdAt = createdAt
        self.objectClass = objectClass
        self.features = features
    }

    enum CodingKeys: String, CodingKey {
        case id, debugID = "debug_id", codeID = "code_id", cpuName = "cpu_name", objectName = "object_name", size, sha1
        case createdAt = "created_at_ms", objectClass = "object_class", features, format
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(String.self, forKey: .id)
        debugID = try c.decode(String.self, forKey: .debugID)
        guard let code = BuildID(try c.decode(String.self, forKey: .codeID)) else {
            throw DecodingError.dataCorruptedError(forKey: .codeID, in: c, debugDescription: "not a build-id")
        }
        codeID = code
        cpuName = try c.decode(String.self, forKey: .cpuName)
        objectName = try c.decode(String.self, forKey: .objectName)
        size = try c.decode(UInt64.self, forKey: .size)
        guard let sum = ChunkChecksum(try c.decode(String.self, forKey: .sha1)) else {
            throw DecodingError.dataCorruptedError(forKey: .sha1, in: c, debugDescription: "not a SHA-1")
        }
        sha1 = sum
        createdAt = Date(timeIntervalSince1970: Double(try c.decode(Int64.self, forKey: .createdAt)) / 1000)
        objectClass = try c.decode(DifObjectClass.self, forKey: .objectClass)
        features = try c.decode([String].self, forKey: .features)
        // Records written before Mach-O was stored have no format: ELF, or a bundle by its class.
        format =
            try c.decodeIfPresent(DebugFileFormat.self, forKey: .format) ?? (objectClass == .src ? .sourceBundle : .elf)
    }

    /// The stored form (the `dif` column of `dif_uploads`): snake_case keys, the date in milliseconds.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(id, forKey: .id)
        try c.encode(debugID, forKey: .debugID)
        try c.encode(codeID.rawValue, forKey: .codeID)
        try c.encode(cpuName, forKey: .cpuName)
        try c.encode(objectName, forKey: .objectName)
        try c.encode(size, forKey: .size)
        try c.encode(sha1.rawValue, forKey: .sha1)
        try c.encode(Int64((createdAt.timeIntervalSince1970 * 1000).rounded(.down)), forKey: .createdAt)
        try c.encode(objectClass, forKey: .objectClass)
        try c.encode(features, forKey: .features)
        try c.encode(format, forKey: .format)
    }
}

/// Where an assemble of one file stands (`state` of `dif_uploads`).
public enum DifUploadState: String, Sendable, Codable {
    case created, assembling, ok, error
}

/// One file a project asked the server to assemble, and how that ended.
public struct DifUploadRecord: Sendable, Equatable {
    public var project: ProjectID
    /// The SHA-1 of the whole file: the identity of an upload (not the name, not the debug id).
    public var checksum: ChunkChecksum
    /// The name the client gave, for people only.
    public var name: String
    /// The debug id the client claimed.
    public var debugID: String?
    /// The build-id found in the file, once assembled.
    public var buildID: BuildID?
    public var state: DifUploadState
    /// Why it failed (`error`), for people.
    public var detail: String?
    /// What was stored (`ok`).
    public var dif: DifDescription?
    public var updatedAt: Date

    public init(
        project: ProjectID, checksum: ChunkChecksum, name: String, debugID: String?, buildID: BuildID?,
        state: DifUploadState, detail: String?, dif: DifDescription?, updatedAt: Date
    ) {
        self.project = project
        self.checksum = checksum
        self.name = name
        self.debugID = debugID
        self.buildID = buildID
        self.state = state
        self.detail = detail
        self.dif = dif
        self.updatedAt = updatedAt
    }
}

/// Uploaded chunks, waiting to be assembled. Chunks belong to the project that uploaded them: a project
/// can only assemble files from bytes it sent itself, so knowing another project's checksums is not
/// enough to obtain its files.
public protocol ChunkStore: Sendable {
    /// Stores `bytes` (already verified against `checksum`) unless present; true when it was new.
    /// Atomic: a reader sees no chunk or the complete one.
    func put(_ checksum: ChunkChecksum, bytes: [UInt8], project: ProjectID) throws -> Bool
    /// Which of `checksums` the project has not uploaded (in the order given). Present ones are marked as
    /// recently used, so that a sweep does not remove them before the assemble that needs them.
    func missing(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum]
    /// The sizes of those of `checksums` the project has stored (the others are left out): what assembling a
    /// file from them would write, known before anything is written. Present ones are marked as recently used.
    func sizes(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum: UInt64]
    /// The first bytes of a chunk, at most `maxBytes` of them.
    /// - Throws: `ChunkStoreError.missing` when the chunk is gone.
    func head(of checksum: ChunkChecksum, project: ProjectID, maxBytes: Int) throws -> [UInt8]
    /// Writes the chunks one after another to the file at `path` (truncating it), calling `observe` with
    /// each chunk's bytes in order; returns the bytes written. Yields between chunks, so that a large file
    /// does not hold a thread of the cooperative pool for long.
    /// - Throws: `ChunkStoreError.missing` when a chunk is gone, `.tooLarge` past `maxBytes`.
    func concatenate(
        _ checksums: [ChunkChecksum], project: ProjectID, into path: String, maxBytes: UInt64,
        observe: ([UInt8]) throws -> Void
    ) async throws -> UInt64
    /// Removes chunks (those that are gone already are skipped).
    func remove(_ checksums: [ChunkChecksum], project: ProjectID)
    /// Removes every chunk last used before `date` (abandoned uploads, failed assembles); returns how many.
    func sweep(unusedSince date: Date) throws -> Int
}

/// Why a chunk store could not concatenate.
public enum ChunkStoreError: Error, Sendable, Equatable {
    /// The chunk is not (or no longer) stored.
    case missing(ChunkChecksum)
    /// The chunks add up to more than allowed.
    case tooLarge
}

/// The `dif_uploads` table: which file checksums a project has had assembled, and into what.
public protocol DifUploadStore: Sendable {
    func record(project: ProjectID, checksum: ChunkChecksum) async throws -> DifUploadRecord?
    /// Inserts or replaces the record of `(project, checksum)`.
    func save(_ record: DifUploadRecord) async throws
    /// The build-ids of debug files `project` has stored whose hex starts with `prefix` (a debug id's
    /// bytes): how a file uploaded with `symupload` is recognised when sentry-cli offers it again.
    func storedBuildIDs(project: ProjectID, hexPrefix: String, limit: Int) async throws -> [BuildID]
}
