import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// sentry-cli's chunks on disk: `chunks/<project id>/<aa>/<sha1>`, waiting to be assembled.
///
/// Paths are derived only from a validated `ChunkChecksum` (40 hex digits) and a numeric project id.
/// A chunk is written to `chunks/tmp/` and renamed into place, so a reader sees no chunk or a complete one;
/// two uploads of the same chunk at once both rename identical bytes. Chunks are a short-lived cache (the
/// assembled file is what is kept, fsynced, by the debug-file store), so they are not fsynced: a chunk
/// damaged by a power loss makes its file's checksum fail, and the service then drops the file's chunks so
/// that the next run uploads them again. The modification time records the last use; `sweep` removes
/// chunks unused for a while.
public struct FileChunkStore: ChunkStore {
    let root: String

    /// - Parameter root: the `chunks` folder of the data folder.
    public init(root: String) throws {
        self.root = root
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
    }

    func folder(_ checksum: ChunkChecksum, _ project: ProjectID) -> String {
        "\(root)/\(project.rawValue)/\(checksum.rawValue.prefix(2))"
    }

    func path(_ checksum: ChunkChecksum, _ project: ProjectID) -> String {
        "\(folder(checksum, project))/\(checksum.rawValue)"
    }

    public func put(_ checksum: ChunkChecksum, bytes: [UInt8], project: ProjectID) throws -> Bool {
        let target = path(checksum, project)
        if Self.touch(target) { return false }
        let temporary = "\(root)/tmp/\(UUID().uuidString.lowercased()).part"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StorageError.fileWrite("cannot create a chunk file", errno: errno) }
        do {
            try Self.writeAll(fd, bytes)
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        try FileManager.default.createDirectory(atPath: folder(checksum, project), withIntermediateDirectories: true)
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            throw StorageError.fileWrite("cannot store a chunk", errno: code)
        }
        return true
    }

    public func missing(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum] {
        checksums.filter { !Self.touch(path($0, project)) }
    }

    public func sizes(_ checksums: [ChunkChecksum], project: ProjectID) throws -> [ChunkChecksum: UInt64] {
        var sizes: [ChunkChecksum: UInt64] = [:]
        for checksum in checksums where sizes[checksum] == nil {
            let file = path(checksum, project)
            var st = stat()
            guard Self.touch(file), stat(file, &st) == 0 else { continue }
            sizes[checksum] = UInt64(clamping: st.st_size)
        }
        return sizes
    }

    public func head(of checksum: ChunkChecksum, project: ProjectID, maxBytes: Int) throws -> [UInt8] {
        try readChunk(checksum, project: project, limit: .max, first: max(0, maxBytes))
    }

    public func concatenate(
        _ checksums: [ChunkChecksum], project: ProjectID, into path: String, maxBytes: UInt64,
        observe: ([UInt8]) throws -> Void
    ) async throws -> UInt64 {
        let out = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard out >= 0 else { throw StorageError(.openFailed, "cannot open the file being assembled (errno \(errno))") }
        defer { close(out) }
        var written: UInt64 = 0
        for checksum in checksums {
            let bytes = try readChunk(checksum, project: project, limit: maxBytes - written)
            try observe(bytes)
            try Self.writeAll(out, bytes)
            written += UInt64(bytes.count)
            await Task.yield()
        }
        return written
    }

    /// A chunk's bytes (at most its `first` ones), refusing a chunk of more than `limit`.
    func readChunk(_ checksum: ChunkChecksum, project: ProjectID, limit: UInt64, first: Int = .max) throws -> [UInt8] {
        let fd = open(path(checksum, project), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw ChunkStoreError.missing(checksum) }
            throw StorageError(.openFailed, "cannot open a chunk (errno \(errno))")
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw StorageError(.openFailed, "cannot stat a chunk (errno \(errno))") }
        let size = UInt64(max(0, st.st_size))
        guard size <= limit else { throw ChunkStoreError.tooLarge }
        var bytes = [UInt8](repeating: 0, count: Int(min(size, UInt64(first))))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw StorageError(.openFailed, "a chunk is shorter than its size (errno \(errno))") }
            done += n
        }
        return bytes
    }

    public func remove(_ checksums: [ChunkChecksum], project: ProjectID) {
        for checksum in checksums { unlink(path(checksum, project)) }
    }

    public func sweep(unusedSince date: Date) throws -> Int {
        let cutoff = date.timeIntervalSince1970
        let files = FileManager.default
        var removed = 0
        // Only names this store makes are looked at: numeric project folders, two-hex-digit folders,
        // checksum files, and temporary files.
        for name in (try? files.contentsOfDirectory(atPath: root + "/tmp")) ?? [] where name.hasSuffix(".part") {
            let file = root + "/tmp/" + name
            if let used = Self.modified(file), used < cutoff, unlink(file) == 0 { removed += 1 }
        }
        for project in (try? files.contentsOfDirectory(atPath: root)) ?? [] where Int64(project) != nil {
            let projectFolder = root + "/" + project
            for prefix in (try? files.contentsOfDirectory(atPath: projectFolder)) ?? [] where prefix.utf8.count == 2 {
                let prefixFolder = projectFolder + "/" + prefix
                for name in (try? files.contentsOfDirectory(atPath: prefixFolder)) ?? []
                where ChunkChecksum(name) != nil {
                    let file = prefixFolder + "/" + name
                    if let used = Self.modified(file), used < cutoff, unlink(file) == 0 { removed += 1 }
                }
                rmdir(prefixFolder)  // only succeeds when empty
            }
            rmdir(projectFolder)
        }
        return removed
    }

    /// Marks `path` as used now; false when it does not exist.
    static func touch(_ path: String) -> Bool {
        utimensat(AT_FDCWD, path, nil, 0) == 0
    }

    static func modified(_ path: String) -> Double? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Double(st.st_mtim.tv_sec) + Double(st.st_mtim.tv_nsec) / 1e9
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw StorageError.fileWrite("cannot write", errno: n < 0 ? errno : ENOSPC) }
            done += n
        }
    }
}
