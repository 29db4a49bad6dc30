import Synchronization

#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Publishes rendered pages into a site folder: every rendering write goes through here. Each page is written to a
/// temporary file and renamed over the old one, so the server never serves half a page; a render publishes through
/// `startRender()`, so that a page is never overwritten by a render that started earlier (`PageGenerations`); after a
/// full render, issue and release pages that were not rendered again (issues that moved away and disappeared) are
/// removed.
public final class SitePublisher: Sendable {
    let root: String
    /// Which render last wrote each page of this folder.
    let generations = PageGenerations()

    public init(root: String) {
        self.root = root
    }

    /// Starts a render: the returned function publishes its pages (relative path, contents), each unless a render
    /// that started later wrote it already. Call it before the render reads anything.
    public func startRender() -> @Sendable (_ path: String, _ contents: String) throws -> Void {
        let generation = generations.start()
        return { [self] path, contents in
            try generations.write(path, generation: generation) { try write(path, contents) }
        }
    }

    /// Whether a page exists at relative `path`.
    public func exists(_ path: String) -> Bool {
        file(path).map { FileManager.default.fileExists(atPath: $0) } ?? false
    }

    /// The file of relative `path` under the root; nil unless `path` has a segment and none is `.`, `..` or hidden.
    private func file(_ path: String) -> String? {
        let segments = path.split(separator: "/")
        guard !segments.isEmpty, segments.allSatisfy({ $0 != ".." && $0 != "." && !$0.hasPrefix(".") }) else {
            return nil
        }
        return root + "/" + segments.joined(separator: "/")
    }

    /// Writes `contents` at `path` (relative, made of safe segments only).
    public func write(_ path: String, _ contents: String) throws {
        guard let target = file(path) else {
            throw SitePublisherError(message: "refusing to write outside the site: \(path)")
        }
        let directory = String(target[..<target.lastIndex(of: "/")!])
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let temporary = directory + "/.tmp-\(UInt64.random(in: 0...UInt64.max))"
        do {
            try Data(contents.utf8).write(to: URL(fileURLWithPath: temporary))
        } catch {
            // A write that met a full disk leaves what it wrote: give it back, or the space is lost for good.
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
        guard rename(temporary, target) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw SitePublisherError(message: "cannot rename into \(target): errno \(errno)")
        }
    }

    /// The last `bytes` bytes of the file at `path` (the whole file when shorter); nil when there is no such file or
    /// it cannot be read. Where an issue page's mark is read (`IssuePageLedger`).
    public func tail(of path: String, bytes: Int) -> [UInt8]? {
        guard bytes > 0, let target = file(path) else { return nil }
        let descriptor = open(target, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        let count = Int(min(Int64(bytes), Int64(info.st_size)))
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes {
            pread(descriptor, $0.baseAddress, count, off_t(info.st_size) - off_t(count))
        }
        guard read == count else { return nil }
        return buffer
    }

    /// Removes pages under `<project>/issues/` and `<project>/releases/` that are not in `kept`.
    public func removeStale(kept: Set<String>) {
        let fm = FileManager.default
        guard let projects = try? fm.contentsOfDirectory(atPath: root) else { return }
        for project in projects {
            for folder in ["issues", "releases"] {
                let dir = "\(root)/\(project)/\(folder)"
                guard let files = try? fm.contentsOfDirectory(atPath: dir) else { continue }
                for file in files where !kept.contains("\(project)/\(folder)/\(file)") {
                    try? fm.removeItem(atPath: "\(dir)/\(file)")
                }
            }
        }
    }
}

public struct SitePublisherError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Which render last wrote each page of the site, so that a page is never overwritten by a render that started
/// earlier (and so may have read older data): a cycle that began before a dashboard change and finishes after
/// the page rendered for that change must not put the old state back.
///
/// Each render takes a generation when it starts, before it reads anything; a page is written only when its
/// generation is at least the one that wrote it last. The check and the write happen under one lock (pages are
/// small files written by at most two renders at once).
public final class PageGenerations: Sendable {
    private let state = Mutex<(next: UInt64, written: [String: UInt64])>((1, [:]))
    public init() {}

    /// A new render's generation.
    public func start() -> UInt64 {
        state.withLock { state in
            defer { state.next &+= 1 }
            return state.next
        }
    }

    /// Runs `write` for `path` unless a later render already wrote it.
    public func write(_ path: String, generation: UInt64, _ write: () throws -> Void) throws {
        try state.withLock { state in
            if let last = state.written[path], last > generation { return }
            try write()
            state.written[path] = generation
        }
    }
}
