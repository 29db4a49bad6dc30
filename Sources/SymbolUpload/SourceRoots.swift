import FaultlineCore
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The folders a source bundle may take files from (`symupload --include-sources`).
///
/// A line table can name any path: `#line 1 "/proc/self/environ"` in a source file, or a unit whose
/// `DW_AT_comp_dir` is `/`. What goes into a bundle is served to every holder of the project's upload token, and
/// with `--public-debuginfod` to anyone, so a file is taken only when its path with every link resolved
/// (`realpath`) lies under a root, compared component by component (`/src/app-evil` is not under `/src/app`).
/// The roots are the compilation directories of the debug file's units and the folders given with
/// `--source-root`, each resolved the same way.
///
/// A compilation directory is no root when it is `/`, a system folder (`/usr`, `/etc`, `/home`, `/tmp`…), inside
/// `/proc`, `/sys`, `/dev` or `/etc`, or the home directory: a line table could then name nearly any file. Whatever
/// the roots, nothing under `/proc`, `/sys` or `/dev` is taken, whether the path names it as written or after
/// resolving.
public struct SourceRoots: Sendable, Equatable {
    /// Folders under which no file is ever bundled, whatever the roots say (kernel and device files).
    public static let forbidden = ["/proc", "/sys", "/dev"]

    /// Folders that are never a compilation directory's root: each holds far more than one build's sources.
    static let systemFolders: Set<String> = [
        "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32", "/media", "/mnt",
        "/opt", "/proc", "/root", "/run", "/sbin", "/snap", "/srv", "/sys", "/tmp", "/usr", "/usr/local", "/var",
        "/var/lib", "/var/tmp",
    ]

    /// Folders no compilation directory may be inside.
    static let systemTrees = forbidden + ["/etc"]

    /// The roots, resolved (absolute, no link, no trailing `/`).
    public private(set) var folders: Set<String> = []
    /// The roots as written (lexically normalised): a path under one of these that resolves elsewhere went through
    /// a link out of the roots.
    var written: Set<String> = []

    /// No roots: nothing is taken until compilation directories or explicit roots are added.
    public init() {}

    /// Adds `folder` given on the command line (`--source-root`).
    ///
    /// - Throws: `UploadError` when it is not an existing folder, is `/`, or lies under `/proc`, `/sys` or `/dev`.
    public mutating func addExplicit(_ folder: String) throws {
        guard let resolved = Self.resolve(folder) else {
            throw UploadError(message: "--source-root \(folder): no such folder", status: nil)
        }
        var info = stat()
        guard stat(resolved, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw UploadError(message: "--source-root \(folder): not a folder", status: nil)
        }
        guard resolved != "/" else {
            throw UploadError(message: "--source-root \(folder): / would let a line table name any file", status: nil)
        }
        if let tree = Self.forbiddenTree(of: resolved) {
            throw UploadError(message: "--source-root \(folder): nothing under \(tree) is ever bundled", status: nil)
        }
        folders.insert(resolved)
        if let lexical = SourcePaths.normalized(folder), lexical.hasPrefix("/") { written.insert(lexical) }
    }

    /// Adds a unit's compilation directory, unless it is no root; returns why not, or nil when it was added.
    ///
    /// - Parameter home: the home directory, which is never a root (its dot folders hold keys and tokens).
    @discardableResult
    public mutating func addCompilationDirectory(_ directory: String, home: String?) -> String? {
        guard directory.hasPrefix("/"), let lexical = SourcePaths.normalized(directory) else {
            return "not an absolute path"
        }
        let homes = home.map { [$0, Self.resolve($0)].compactMap { $0 }.compactMap(SourcePaths.normalized) } ?? []
        if let reason = Self.refusal(lexical, homes: homes) { return reason }
        guard let resolved = Self.resolve(directory) else { return "not a folder on this machine" }
        if let reason = Self.refusal(resolved, homes: homes) { return reason }
        folders.insert(resolved)
        written.insert(lexical)
        return nil
    }

    /// Why the folder `path` (absolute, normalised) is no compilation directory root, or nil when it may be one.
    static func refusal(_ path: String, homes: [String]) -> String? {
        if systemFolders.contains(path) { return "a system folder" }
        if let tree = tree(of: path, among: systemTrees) { return "inside \(tree)" }
        if homes.contains(path) { return "the home directory" }
        return nil
    }

    /// The deepest root that `resolved` (an absolute path without links) lies under, or nil.
    public func root(containing resolved: String) -> String? {
        Self.ancestors(of: resolved).first { folders.contains($0) }
    }

    /// Whether `lexical` (an absolute, lexically normalised path) lies under a root as written or resolved.
    func writtenUnderRoot(_ lexical: String) -> Bool {
        Self.ancestors(of: lexical).contains { written.contains($0) || folders.contains($0) }
    }

    /// `/proc`, `/sys` or `/dev` when `path` (absolute, normalised) is one of them or inside one.
    public static func forbiddenTree(of path: String) -> String? { tree(of: path, among: forbidden) }

    static func tree(of path: String, among trees: [String]) -> String? {
        trees.first { path == $0 || path.hasPrefix($0 + "/") }
    }

    /// `path` and each folder above it, deepest first (`/a/b` → `/a/b`, `/a`, `/`): a containment check is then
    /// one set lookup per component, and `/src/app-evil` never matches `/src/app`.
    static func ancestors(of path: String) -> [String] {
        guard path.hasPrefix("/") else { return [] }
        var out = [path]
        var current = Substring(path)
        while let slash = current.lastIndex(of: "/"), slash != current.startIndex {
            current = current[..<slash]
            out.append(String(current))
        }
        if path != "/" { out.append("/") }
        return out
    }

    /// `path` with every link, `.` and `..` resolved (`realpath`); nil when it does not exist.
    static func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
