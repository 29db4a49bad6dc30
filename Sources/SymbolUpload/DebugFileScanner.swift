import FaultlineCore
import Formats
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Finds debug files in the files and folders `symupload` is given: ELF files, Mach-O files (executables,
/// dylibs, frameworks, the DWARF file inside a `.dSYM` bundle; each slice of a universal file on its own) and
/// `.zip` archives of dSYMs (read when named on the command line, or met in a walk with `dSYM` in their name, as
/// `appDsyms.zip` and `dSYMs.zip` are; other zips are skipped quietly).
///
/// A folder is walked without leaving it: a link to a file is followed only when the file it resolves to lies
/// inside the folder given (an Xcode framework's `X.framework/X` → `Versions/A/X`), links to folders are never
/// followed (no cycles), and the walk is bounded (`Limits`). A file found twice (through a link, say) counts
/// once. What is not a debug file (sources, plists, object files, a link out of the folder) is skipped
/// quietly: `Skipped.quiet` is true and `symupload -v` lists it.
public enum DebugFileScanner {
    /// A file or folder that gave no debug file, and why.
    public struct Skipped: Sendable, Equatable {
        public var path: String
        public var reason: String
        /// True when the entry is simply not a debug file (shown with `-v` only); false for a debug file that
        /// cannot be read, a path that does not exist, or a walk cut short.
        public var quiet: Bool

        public init(path: String, reason: String, quiet: Bool = false) {
            self.path = path
            self.reason = reason
            self.quiet = quiet
        }
    }

    /// Bounds of a walk, so that a huge or hostile tree (DerivedData of a large app, a link farm) ends.
    public struct Limits: Sendable {
        /// Most folder entries looked at, over all the paths given.
        public var maxEntries: Int
        /// Most folder levels below a path given.
        public var maxDepth: Int
        public init(maxEntries: Int = 2_000_000, maxDepth: Int = 64) {
            self.maxEntries = maxEntries
            self.maxDepth = maxDepth
        }
    }

    /// Scans `paths`.
    /// - Parameter scratch: an existing folder that the images of `.zip` archives are taken out into (the caller
    ///   removes it); without one, zips are skipped.
    public static func scan(
        _ paths: [String], limits: Limits = Limits(), scratch: String? = nil
    )
        -> (files: [LocalDebugFile], skipped: [Skipped])
    {
        var walk = Walk(limits: limits, scratch: scratch)
        for path in paths { walk.visit(argument: path) }
        return (walk.files.sorted { $0.label < $1.label }, walk.skipped)
    }

    /// `path` with each run of `/` made one (`build//app` → `build/app`; `/` stays `/`).
    static func collapsingSlashes(_ path: String) -> String {
        var out = ""
        out.reserveCapacity(path.utf8.count)
        for character in path where !(character == "/" && out.last == "/") { out.append(character) }
        return out
    }

    /// The state of one scan.
    struct Walk {
        let limits: Limits
        let scratch: String?
        var files: [LocalDebugFile] = []
        var skipped: [Skipped] = []
        var seen = Set<String>()
        var entries = 0
        var stopped = false

        init(limits: Limits, scratch: String?) {
            self.limits = limits
            self.scratch = scratch
        }

        mutating func visit(argument given: String) {
            // `"$OUT/"` with OUT=build/ is `build//`: the same folder, shown and joined as `build/`.
            let path = DebugFileScanner.collapsingSlashes(given)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                skipped.append(Skipped(path: path, reason: "no such file or folder"))
                return
            }
            // A path given on the command line is followed wherever it leads: the caller named it.
            guard isDirectory.boolValue else {
                var st = stat()
                guard stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
                    skipped.append(Skipped(path: path, reason: "not a regular file"))
                    return
                }
                consider(path, resolved: Self.resolved(path), named: true)
                return
            }
            walk(folder: path)
        }

        mutating func walk(folder: String) {
            let root = Self.resolved(folder)
            var stack: [(path: String, depth: Int)] = [(folder, 0)]
            while let (directory, depth) = stack.popLast(), !stopped {
                let names: [String]
                do {
                    names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
                } catch {
                    skipped.append(Skipped(path: directory, reason: "cannot list the folder"))
                    continue
                }
                var folders: [String] = []
                for name in names {
                    entries += 1
                    guard entries <= limits.maxEntries else {
                        skipped.append(
                            Skipped(
                                path: folder,
                                reason: "stopped after \(limits.maxEntries) entries; give a narrower folder"))
                        stopped = true
                        break
                    }
                    let full = directory.hasSuffix("/") ? directory + name : directory + "/" + name
                    var st = stat()
                    guard lstat(full, &st) == 0 else { continue }
                    switch st.st_mode & S_IFMT {
                    case S_IFDIR:
                        if depth + 1 > limits.maxDepth {
                            skipped.append(
                                Skipped(path: full, reason: "more than \(limits.maxDepth) folders deep; not walked"))
                        } else {
                            folders.append(full)
                        }
                    case S_IFREG:
                        consider(full, resolved: Self.resolved(full))
                    case S_IFLNK:
                        followLink(full, root: root)
                    default:
                        skipped.append(Skipped(path: full, reason: "not a regular file", quiet: true))
                    }
                }
                // Depth first, in name order.
                stack.append(contentsOf: folders.reversed().map { ($0, depth + 1) })
            }
        }

        /// Follows a link found in a walk only to a regular file inside the folder walked.
        mutating func followLink(_ path: String, root: String) {
            let target = Self.resolved(path)
            var st = stat()
            guard stat(path, &st) == 0 else {
                skipped.append(Skipped(path: path, reason: "a link to nothing", quiet: true))
                return
            }
            guard st.st_mode & S_IFMT == S_IFREG else {
                skipped.append(Skipped(path: path, reason: "a link to a folder (not followed)", quiet: true))
                return
            }
            guard Self.isInside(target, root) else {
                skipped.append(
                    Skipped(path: path, reason: "a link out of the folder (to \(target)), not followed", quiet: true))
                return
            }
            consider(path, resolved: target)
        }

        /// Reads the file's first bytes and hands it to the reader of its format.
        mutating func consider(_ path: String, resolved: String, named: Bool = false) {
            guard seen.insert(resolved).inserted else { return }
            guard let source = try? FileByteSource(path: resolved) else {
                skipped.append(Skipped(path: path, reason: "cannot be opened"))
                return
            }
            let magic = source.size >= 4 ? (try? source.bytes(at: 0, count: 4)) ?? [] : []
            if magic == [0x7f, 0x45, 0x4c, 0x46] {
                do {
                    let facts = try ELFFileInspector().inspect(path: resolved)
                    files.append(LocalDebugFile(path: path, size: source.size, facts: facts))
                } catch {
                    skipped.append(Skipped(path: path, reason: "\(error)"))
                }
            } else if MachOFileInspector.hasMagic(magic) {
                let found = MachOFiles.read(path: path, source: source)
                files += found.files
                skipped += found.skipped
            } else if DebugFileSplitter.isZip(magic) {
                guard named || path.split(separator: "/").last?.lowercased().contains("dsym") == true else {
                    skipped.append(
                        Skipped(
                            path: path, reason: "a zip archive without dSYM in its name (name it to read it)",
                            quiet: true))
                    return
                }
                guard let scratch else {
                    skipped.append(Skipped(path: path, reason: "a zip archive, not read here"))
                    return
                }
                let found = MachOFiles.read(zip: path, resolved: resolved, scratch: scratch)
                files += found.files
                skipped += found.skipped
            } else {
                skipped.append(Skipped(path: path, reason: "not a debug file", quiet: true))
            }
        }

        /// The path with every link resolved (the path itself when it cannot be).
        static func resolved(_ path: String) -> String {
            guard let real = realpath(path, nil) else { return path }
            defer { free(real) }
            return String(cString: real)
        }

        /// True when `path` is `root` or lies under it, compared by whole components.
        static func isInside(_ path: String, _ root: String) -> Bool {
            if path == root || root == "/" { return true }
            return path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
        }
    }
}
