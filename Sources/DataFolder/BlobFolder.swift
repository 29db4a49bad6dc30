import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Content-addressed files in one folder: `blobs/<aa>/<sha-256>`, and `tmp/` for files being written. The file half
/// of the debug-file stores (SQLite's and PostgreSQL's); which rows name which blob is the database's business.
///
/// Paths are derived from validated `ContentHash`es only (64 hex digits), never from a name sent by a client or
/// found in DWARF. An upload is written to `tmp/`, fsynced, then linked into place (a fresh link renamed over the
/// blob's name), so a reader sees no file or a complete one, and two writers placing the same bytes at once both
/// succeed (a blob is named by its content, so either rename leaves the same bytes). `tmp/` and `blobs/` are in one
/// folder so that the link never crosses a file system.
///
/// What this type cannot know is whether a blob is still named by a row: the caller removes a blob only when no row
/// names it, serialised against an upload about to name it (SQLite's writer lock; PostgreSQL's advisory lock on the
/// hash). Break that and a row can name a file that is gone.
public struct BlobFolder: Sendable {
    /// The folder (`debug-files` of the data folder, or a folder every node shares).
    public let root: String

    /// Makes `root/tmp` and `root/blobs` when missing.
    public init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/blobs", withIntermediateDirectories: true)
    }

    /// The blob's folder: the hash's first two hex digits, so that no folder holds more than 1/256 of the blobs.
    func folder(_ hash: ContentHash) -> String { "\(root)/blobs/\(hash.rawValue.prefix(2))" }

    /// Where the blob of `hash` is (or would be).
    public func path(of hash: ContentHash) -> String { Self.path(of: hash, in: root) }

    /// Where the blob of `hash` is in the blob folder `root`, without making the folder (another install's, read only).
    public static func path(of hash: ContentHash, in root: String) -> String {
        "\(root)/blobs/\(hash.rawValue.prefix(2))/\(hash.rawValue)"
    }

    /// The blob's path when the file is there.
    public func existingPath(of hash: ContentHash) -> String? {
        let path = path(of: hash)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// A new, empty file in `tmp/` (named by a random UUID, never by the client), readable by this user only.
    public func temporaryFile() throws -> TemporaryUpload {
        let path = "\(root)/tmp/\(UUID().uuidString.lowercased()).part"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw StorageError.fileWrite("cannot create a temporary file for the upload", errno: errno)
        }
        close(fd)
        return TemporaryUpload(path: path)
    }

    /// Deletes a temporary file (after a failure, or once its bytes are placed).
    public func discard(_ upload: TemporaryUpload) {
        unlink(upload.path)
    }

    /// Puts the bytes at `source` in the folder under `hash`. A blob of that name and size is the same content (it
    /// was hashed before it was named) and stays; anything else there (a damaged file) is replaced. `source` stays
    /// where it is (it is linked, not moved): the caller discards it.
    public func place(from source: String, hash: ContentHash, size: UInt64) throws {
        let folder = folder(hash)
        let target = path(of: hash)
        if Self.fileSize(target) == size { return }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let staging = "\(root)/tmp/\(UUID().uuidString.lowercased()).blob"
        guard link(source, staging) == 0 else {
            throw StorageError(.openFailed, "cannot store the debug file (errno \(errno))")
        }
        guard rename(staging, target) == 0 else {
            let code = errno
            unlink(staging)
            throw StorageError(.openFailed, "cannot store the debug file (errno \(code))")
        }
        Self.fsyncDirectory(folder)
    }

    /// What `copyIn` did with a blob.
    public enum CopyIn: Sendable, Equatable {
        /// Copied, its bytes checked against the hash.
        case copied
        /// A blob of that name and size was here already (a migrate run before).
        case present
        /// The file to copy is not there.
        case missing
    }

    /// Copies the file at `source` (another folder, maybe another file system: no link) in as the blob of `hash`: into
    /// `tmp/`, fsynced, hashed with `hasher` (a file whose bytes are not `hash` is refused, never placed under that
    /// name), then placed. A blob of that name and the source's size is the same content and stays.
    public func copyIn(from source: String, hash: ContentHash, hasher: any ContentHashing) throws -> CopyIn {
        guard let size = Self.fileSize(source) else { return .missing }
        if Self.fileSize(path(of: hash)) == size { return .present }
        let upload = try temporaryFile()
        defer { discard(upload) }
        try Self.copyBytes(from: source, to: upload.path)
        try Self.fsync(upload.path)
        let copied = try hasher.sha256(ofFileAt: upload.path)
        guard copied == hash else {
            throw StorageError(
                .invalidValue, "\(source) is not the blob its name says (its SHA-256 is \(copied.rawValue))")
        }
        try place(from: upload.path, hash: hash, size: size)
        return .copied
    }

    /// Appends the bytes of the file at `source` to the (empty) file at `target`, a MiB at a time.
    static func copyBytes(from source: String, to target: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw StorageError(.openFailed, "cannot open \(source) (errno \(errno))") }
        defer { close(input) }
        let output = open(target, O_WRONLY | O_CLOEXEC)
        guard output >= 0 else { throw StorageError.fileWrite("cannot open \(target)", errno: errno) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw StorageError(.openFailed, "cannot read \(source) (errno \(errno))")
            }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count &- written) }
                guard step > 0 else {
                    if step < 0, errno == EINTR { continue }
                    throw StorageError.fileWrite("cannot write \(target)", errno: errno)
                }
                written &+= step
            }
        }
    }

    /// Unlinks the blob of `hash` (gone already is fine). Only once no row names it: see the type's comment.
    public func remove(_ hash: ContentHash) {
        unlink(path(of: hash))
    }

    /// The size of the regular file at `path`; nil when there is none (or it is not a regular file).
    public static func fileSize(_ path: String) -> UInt64? {
        var st = stat()
        guard stat(path, &st) == 0, st.st_mode & 0o170000 == 0o100000 else { return nil }
        return UInt64(clamping: st.st_size)
    }

    /// Forces the file's bytes to disk: a blob is linked into place only once its content is durable, so a power
    /// loss never leaves a named blob with missing bytes.
    public static func fsync(_ path: String) throws {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw StorageError(.openFailed, "cannot open the upload (errno \(errno))") }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw StorageError(.openFailed, "cannot sync the upload (errno \(errno))") }
    }

    /// Makes a new name in `path` durable (best effort: a folder that cannot be opened is left as it is).
    static func fsyncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        _ = Glibc.fsync(fd)
        close(fd)
    }
}

extension StorageError {
    /// A failed plain file write (`errno`) as an error: `diskFull` for ENOSPC and EDQUOT, so the storage-pressure
    /// state recognises it; `openFailed` otherwise.
    public static func fileWrite(_ message: String, errno code: Int32) -> StorageError {
        code == ENOSPC || code == EDQUOT
            ? StorageError(.diskFull, "\(message): the disk is full (errno \(code))")
            : StorageError(.openFailed, "\(message) (errno \(code))")
    }
}
