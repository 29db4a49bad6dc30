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

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// What a debug file's headers say, as far as storage and symbolication care.
public struct DebugFileFacts: Sendable, Equatable {
    public var buildID: BuildID?
    /// The kinds this one file can serve (an unstripped `-g` binary serves both).
    public var kinds: Set<DebugFileKind>
    public var architecture: String
    /// `executable`, `shared_object`, …
    public var fileType: String
    /// `symtab`, `debug`, `unwind` (sentry-cli's names).
    public var features: [String]
    public var compressedDebugSections: Bool

    public init(buildID: BuildID?, kinds: Set<DebugFileKind>, architecture: String, fileType: String, features: [String],
                compressedDebugSections: Bool) {
        self.buildID = buildID
        self.kinds = kinds
        self.architecture = architecture
        self.fileType = fileType
        self.features = features
        self.compressedDebugSections = compressedDebugSections
    }
}

/// A stored debug file as listed for a project.
public struct StoredDebugFile: Sendable, Equatable {
    public var project: ProjectID
    public var buildID: BuildID
    public var kind: DebugFileKind
    public var size: UInt64
    public var architecture: String
    public var fileType: String
    public var features: [String]
    /// The file name the uploader gave, for people; never used as a path.
    public var name: String?
    public var uploadedAt: Date

    public init(project: ProjectID, buildID: BuildID, kind: DebugFileKind, size: UInt64, architecture: String,
                fileType: String, features: [String], name: String?, uploadedAt: Date) {
        self.project = project
        self.buildID = buildID
        self.kind = kind
        self.size = size
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

/// Reads the headers of a file on disk.
public protocol DebugFileInspecting: Sendable {
    /// Throws when the file is not an ELF file it can read.
    func inspect(path: String) throws -> DebugFileFacts
}

/// Debug files on disk (content addressed by build-id) and their index per project.
public protocol DebugFileStore: Sendable {
    /// A new, empty temporary file for an upload.
    func temporaryUpload() throws -> TemporaryUpload
    /// Deletes a temporary upload (after a failure).
    func discard(_ upload: TemporaryUpload)
    /// Moves `upload` into place for every kind in `facts.kinds` that is not stored yet, and records it for
    /// `project`. Returns the rows as stored (one per kind). Atomic per kind: a reader sees the old state or
    /// the complete new file.
    func store(_ upload: TemporaryUpload, facts: DebugFileFacts, buildID: BuildID, project: ProjectID, name: String?,
               at date: Date) async throws -> [StoredDebugFile]
    /// The kinds of `buildID` that `project` has.
    func kinds(of buildID: BuildID, project: ProjectID) async throws -> Set<DebugFileKind>
    /// Every debug file of `project`, newest first.
    func list(project: ProjectID, limit: Int) async throws -> [StoredDebugFile]
    /// Bytes of debug files recorded for `project` (its quota use).
    func bytesUsed(project: ProjectID) async throws -> UInt64
    /// The path of the stored file of `kind` for `buildID` when `project` (nil: any project) has it.
    func path(of buildID: BuildID, kind: DebugFileKind, project: ProjectID?) async throws -> String?
}
