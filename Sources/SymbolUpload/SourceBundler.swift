import FaultlineCore
import Formats
import Foundation

// Reading a debug file's line tables takes libdw (Symbolication), which symupload links on Linux only: on macOS (an
// Xcode build phase) everything but `--include-sources` works (Package.swift, tools/check-imports' portable closure).
#if canImport(Symbolication)
import Symbolication
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Collects the source files a debug file names into one source bundle (`symupload --include-sources`).
///
/// Reads the debug file's line tables (`SourceFiles`) and takes each named file that lies under a source root
/// (`SourceRoots`: the units' compilation directories and any `--source-root`) as a regular file, and writes
/// them into a `SourceBundleWriter` bundle keyed by the debug file's build-id. A line table is as untrusted as
/// the code it came from: a file outside the roots, under `/proc`, `/sys` or `/dev`, reached through a link out
/// of the roots, not regular or too large is left out, and `leftOut` says which and why. Files that are not here
/// (built elsewhere, generated and deleted) are counted, not an error: the bundle holds what the CI machine has.
public enum SourceBundler {
    /// A source file the line tables name that was not bundled, and why.
    public struct LeftOut: Sendable, Equatable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable, CustomStringConvertible {
            /// Under `/proc`, `/sys` or `/dev` (named so, or resolved so): never bundled.
            case systemTree(String)
            /// Not under any source root.
            case outsideRoots
            /// Named under a root, but a link takes it out of the roots (to the path given).
            case linkOutOfRoots(String)
            /// A device, FIFO, socket or folder.
            case notRegularFile
            /// A link appeared, or a file was swapped, between resolving the path and reading it.
            case changedWhileRead
            /// The file exists but cannot be read (errno).
            case unreadable(Int32)
            /// A limit of the bundle (too large, bundle full, not an absolute path).
            case limit(SourceBundleWriter.Skip)

            public var description: String {
                switch self {
                case .systemTree(let tree): return "under \(tree), never bundled"
                case .outsideRoots: return "outside the source roots"
                case .linkOutOfRoots(let target): return "a link out of the source roots (to \(target))"
                case .notRegularFile: return "not a regular file"
                case .changedWhileRead: return "changed while it was read"
                case .unreadable(let code): return "cannot be read (errno \(code))"
                case .limit(let skip): return skip.description
                }
            }
        }

        public var path: String
        public var reason: Reason
        public var description: String { "\(path) (\(reason))" }

        public init(path: String, reason: Reason) {
            self.path = path
            self.reason = reason
        }
    }

    /// A compilation directory that was not taken as a source root, and why.
    public struct RefusedRoot: Sendable, Equatable {
        public var path: String
        public var reason: String

        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    /// What the line tables named and what became of each file.
    public struct Bundle: Sendable {
        /// The bundle file, as an upload of kind `sources` for the build-id; nil when no file could be taken.
        public var file: LocalDebugFile?
        /// Source paths in the bundle.
        public var included: [String]
        /// Paths the line tables name that are not files here.
        public var absent: [String]
        /// Paths left out, with why (outside the roots, a system file, too large, bundle full…).
        public var leftOut: [LeftOut]
        /// Compilation directories that are no source root (`/`, a system folder, the home directory…).
        public var refusedRoots: [RefusedRoot]
    }

    /// Whether this build of symupload makes source bundles: only where it links libdw (Linux).
    public static var isAvailable: Bool {
        #if canImport(Symbolication)
        true
        #else
        false
        #endif
    }

    /// Why `--include-sources` is refused where `isAvailable` is false.
    public static let unavailable =
        "--include-sources reads the debug files' line tables with libdw, which this platform's symupload does not link: "
        + "make source bundles on Linux (docs/apple.md)"

    /// Makes the bundle of `debugFile`'s sources in `folder`; nil when the file has no build-id.
    ///
    /// - Parameters:
    ///   - roots: the explicit source roots (`--source-root`); the debug file's compilation directories are added.
    ///   - home: the home directory, never a root.
    /// - Throws: when the debug file cannot be read or the bundle cannot be written.
    public static func bundle(
        of debugFile: LocalDebugFile, in folder: String, limits: SourceBundleWriter.Limits = .init(),
        roots explicit: SourceRoots = SourceRoots(), home: String? = ProcessInfo.processInfo.environment["HOME"]
    ) throws -> Bundle? {
        guard let buildID = debugFile.facts.buildID else { return nil }
        #if canImport(Symbolication)
        let inventory = try SourceFiles.inventory(ofFile: debugFile.path)
        #else
        throw UploadError(message: Self.unavailable, status: nil)
        #endif
        var roots = explicit
        var refused: [RefusedRoot] = []
        for directory in inventory.compilationDirectories {
            if let reason = roots.addCompilationDirectory(directory, home: home) {
                refused.append(RefusedRoot(path: directory, reason: reason))
            }
        }
        let objectName = URL(fileURLWithPath: debugFile.path).lastPathComponent
        var writer = SourceBundleWriter(
            buildID: buildID, objectName: objectName, arch: debugFile.facts.architecture, limits: limits)
        var absent: [String] = []
        var leftOut: [LeftOut] = []
        for path in inventory.paths {
            switch candidate(path, roots: roots, limit: limits.maxFileBytes) {
            case .absent: absent.append(path)
            case .leftOut(let reason): leftOut.append(LeftOut(path: path, reason: reason))
            case .bytes(let bytes):
                if let skip = try writer.add(path: path, contents: bytes) {
                    leftOut.append(LeftOut(path: path, reason: .limit(skip)))
                }
            }
        }
        guard !writer.paths.isEmpty else {
            return Bundle(file: nil, included: [], absent: absent, leftOut: leftOut, refusedRoots: refused)
        }
        let bytes = try writer.finish()
        let target = folder + "/" + buildID.rawValue + "-" + objectName + ".src.zip"
        guard FileManager.default.createFile(atPath: target, contents: Data(bytes)) else {
            throw UploadError(message: "cannot write the source bundle \(target)", status: nil)
        }
        let facts = DebugFileFacts(
            buildID: buildID, kinds: [.sources], architecture: debugFile.facts.architecture, fileType: "source_bundle",
            features: ["sources"], compressedDebugSections: false)
        return Bundle(
            file: LocalDebugFile(path: target, size: UInt64(bytes.count), facts: facts), included: writer.paths,
            absent: absent, leftOut: leftOut, refusedRoots: refused)
    }

    enum Candidate {
        case bytes([UInt8])
        case absent
        case leftOut(LeftOut.Reason)
    }

    /// Decides one path a line table names: its bytes when it may be bundled, else why not.
    static func candidate(_ path: String, roots: SourceRoots, limit: Int) -> Candidate {
        // A relative path would resolve against our own working directory, not the build's.
        guard path.hasPrefix("/"), let lexical = SourcePaths.normalized(path) else {
            return .leftOut(.limit(.notAbsolute))
        }
        if let tree = SourceRoots.forbiddenTree(of: lexical) { return .leftOut(.systemTree(tree)) }
        guard let resolved = SourceRoots.resolve(path) else {
            return errno == ENOENT || errno == ENOTDIR ? .absent : .leftOut(.unreadable(errno))
        }
        if let tree = SourceRoots.forbiddenTree(of: resolved) { return .leftOut(.systemTree(tree)) }
        guard let root = roots.root(containing: resolved) else {
            return .leftOut(roots.writtenUnderRoot(lexical) ? .linkOutOfRoots(resolved) : .outsideRoots)
        }
        switch read(resolved, under: root, limit: limit) {
        case .bytes(let bytes): return .bytes(bytes)
        case .tooLarge(let size): return .leftOut(.limit(.tooLarge(size)))
        case .notRegularFile: return .leftOut(.notRegularFile)
        case .changed: return .leftOut(.changedWhileRead)
        case .unreadable(let code): return .leftOut(.unreadable(code))
        }
    }
}
