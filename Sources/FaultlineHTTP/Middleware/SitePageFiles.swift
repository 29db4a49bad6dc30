import Hummingbird
import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The site folder as `FileMiddleware` reads it, one open per request: a file is opened once, its size and date are
/// taken from that open file (`fstat`) and its bytes read whole, and the answer is made of those bytes.
///
/// Why: the renderer replaces pages by renaming a new file over the old one, many times a minute under load.
/// Hummingbird's `LocalFileSystem` takes a file's size by its path, sets `Content-Length` from it, then opens the path
/// again to send the body: a page replaced in between was sent with the old length and the new bytes, so a browser got
/// a page cut short (or one with bytes past the length). The soak (`tools/bench/soak`) met it twice in 30 minutes.
/// Site files are rendered pages and the static files beside them (tens of kilobytes): reading them whole is cheap.
struct SitePageFiles: FileProvider {
    /// One file as one open found it: a folder, or the bytes and date of one inode.
    final class FileIdentifier: Sendable {
        let path: String
        /// Set by `getAttributes` (the one open), read by `loadFile`.
        let snapshot = Mutex<(bytes: [UInt8], attributes: FileAttributes)?>(nil)
        init(path: String) { self.path = path }
    }

    struct FileAttributes: Sendable, FileMiddlewareFileAttributes {
        let isFolder: Bool
        let size: Int
        let modificationDate: Date
    }

    /// The largest file served: a bigger one (none is rendered) answers 404 rather than being held in memory.
    static let maxBytes = 64 << 20

    let root: String

    init(root: String) {
        self.root = root.hasSuffix("/") ? root : root + "/"
    }

    func getFileIdentifier(_ path: String) -> FileIdentifier? {
        FileIdentifier(path: root + (path.first == "/" ? String(path.dropFirst()) : path))
    }

    func getAttributes(id: FileIdentifier) async throws -> FileAttributes? {
        guard let (bytes, attributes) = Self.snapshot(id.path) else { return nil }
        id.snapshot.withLock { $0 = (bytes, attributes) }
        return attributes
    }

    func loadFile(id: FileIdentifier, context: some RequestContext) async throws -> ResponseBody {
        guard let bytes = id.snapshot.withLock({ $0?.bytes }) else { throw HTTPError(.notFound) }
        return ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
    }

    func loadFile(id: FileIdentifier, range: ClosedRange<Int>, context: some RequestContext) async throws
        -> ResponseBody
    {
        guard let bytes = id.snapshot.withLock({ $0?.bytes }), !bytes.isEmpty else { throw HTTPError(.notFound) }
        let clamped = range.clamped(to: 0...(bytes.count - 1))
        return ResponseBody(byteBuffer: ByteBuffer(bytes: bytes[clamped]))
    }

    /// Opens `path` once: a folder's attributes, or a file's bytes with the size and date of that same file; nil when
    /// there is none (or it is larger than ``maxBytes``).
    static func snapshot(_ path: String) -> ([UInt8], FileAttributes)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let date = Date(timeIntervalSince1970: Double(info.st_mtim.tv_sec))
        if (info.st_mode & S_IFMT) == S_IFDIR {
            return ([], FileAttributes(isFolder: true, size: 0, modificationDate: date))
        }
        guard info.st_size >= 0, info.st_size <= maxBytes else { return nil }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        // The open file keeps its inode: a rename over the path does not change what is read here.
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            done += n
        }
        bytes.removeLast(bytes.count - done)  // a file cut shorter while read (never a renamed page) is sent as read
        return (bytes, FileAttributes(isFolder: false, size: bytes.count, modificationDate: date))
    }
}
