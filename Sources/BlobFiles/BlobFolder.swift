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
    public func path(of hash: ContentHash) -> String { "\(folder(hash))/\(hash.rawValue)" }

    /// The blob's path when the file is there.
    public func existingPath(of hash: ContentHash) -> String? {
        let path = path(of: hash)
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// A new, empty file in `tmp/` (named by a random UUID, never by the client), readable by this user only.
    public func temporaryFile() throws -> TemporaryUpload {
        let path = "\(root)/tmp/\(UUID().uuidString.lowercased()).part"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError.fileWrite("cannot create a temporary file for the upload", errno: errno) }
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
        guard link(source, staging) == 0 else { throw StorageError(.openFailed, "cannot store the debug file (errno \(errno))") }
        guard rename(staging, target) == 0 else {
            let code = errno
            unlink(staging)
            throw StorageError(.openFailed, "cannot store the debug file (errno \(code))")
        }
        Self.fsyncDirectory(folder)
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
