#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SourceBundler {
    /// What reading one candidate source file gave.
    enum Contents: Equatable {
        case bytes([UInt8])
        case tooLarge(Int)
        case notRegularFile
        /// A component became a link, or a folder something else, between `realpath` and the open.
        case changed
        case unreadable(Int32)
    }

    /// Reads `resolved` (a `realpath` result under `root`), walking from `root` one component at a time with
    /// `O_NOFOLLOW`, so no link is followed even when one appears after the path was resolved; takes the file only
    /// when it is regular (checked with `fstatat` before the open, so a device or FIFO is never opened, and with
    /// `fstat` after, on the same inode) and at most `limit` bytes.
    static func read(_ resolved: String, under root: String, limit: Int) -> Contents {
        let relative = root == "/" ? Substring(resolved.dropFirst()) : resolved.dropFirst(root.count + 1)
        let names = relative.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard let last = names.last else { return .notRegularFile }
        var folder = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard folder >= 0 else { return .unreadable(errno) }
        defer { close(folder) }
        for name in names.dropLast() {
            let next = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else { return errno == ELOOP || errno == ENOTDIR ? .changed : .unreadable(errno) }
            close(folder)
            folder = next
        }
        var before = stat()
        guard fstatat(folder, last, &before, AT_SYMLINK_NOFOLLOW) == 0 else { return .unreadable(errno) }
        guard (before.st_mode & S_IFMT) == S_IFREG else {
            return (before.st_mode & S_IFMT) == S_IFLNK ? .changed : .notRegularFile
        }
        guard before.st_size <= limit else { return .tooLarge(Int(clamping: before.st_size)) }
        let fd = openat(folder, last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ELOOP ? .changed : .unreadable(errno) }
        defer { close(fd) }
        var after = stat()
        guard fstat(fd, &after) == 0 else { return .unreadable(errno) }
        guard after.st_dev == before.st_dev, after.st_ino == before.st_ino, (after.st_mode & S_IFMT) == S_IFREG else {
            return .changed
        }
        return readAll(fd, limit: limit)
    }

    /// At most `limit` bytes of `fd`; `.tooLarge` when there are more (the file grew since `fstat`).
    static func readAll(_ fd: Int32, limit: Int) -> Contents {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { readBytes(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable(errno)
            }
            if count == 0 { return .bytes(bytes) }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > limit { return .tooLarge(bytes.count) }
        }
    }
}

/// `read(2)`, named through the platform's C library (`SourceBundler.read` shadows the bare name here).
private func readBytes(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.read(fd, buffer, count)
    #else
    Darwin.read(fd, buffer, count)
    #endif
}
