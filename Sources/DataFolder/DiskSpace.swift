#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Free space of the file system holding a folder, from `statvfs`.
public struct DiskSpace: Sendable {
    public let path: String
    public init(path: String) { self.path = path }

    /// Bytes available to an unprivileged writer; nil when `statvfs` fails.
    public func availableBytes() -> UInt64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
    }
}
