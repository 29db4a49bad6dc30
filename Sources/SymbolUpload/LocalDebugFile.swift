import FaultlineCore
import Formats

import Foundation

/// An ELF file found under the paths `symupload` was given, with what its headers say.
public struct LocalDebugFile: Sendable, Equatable {
    public var path: String
    public var size: UInt64
    public var facts: DebugFileFacts

    public init(path: String, size: UInt64, facts: DebugFileFacts) {
        self.path = path
        self.size = size
        self.facts = facts
    }
}

/// Finds ELF files: regular files that start with the ELF magic, in the given files and, recursively,
/// folders. Symbolic links to files are followed, links to folders are not (no cycles).
public enum DebugFileScanner {
    public struct Skipped: Sendable, Equatable {
        public var path: String
        public var reason: String
    }

    public static func scan(_ paths: [String]) -> (files: [LocalDebugFile], skipped: [Skipped]) {
        var files: [LocalDebugFile] = []
        var skipped: [Skipped] = []
        var seen = Set<String>()
        let fm = FileManager.default
        func consider(_ path: String) {
            let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
            guard seen.insert(resolved).inserted else { return }
            guard let source = try? FileByteSource(path: resolved), source.size >= 4,
                  let magic = try? source.bytes(at: 0, count: 4), magic == [0x7f, 0x45, 0x4c, 0x46]
            else { return }
            do {
                let facts = try ELFFileInspector().inspect(path: resolved)
                files.append(LocalDebugFile(path: path, size: source.size, facts: facts))
            } catch {
                skipped.append(Skipped(path: path, reason: "\(error)"))
            }
        }
        for path in paths {
            var isDirectory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &isDirectory) else {
                skipped.append(Skipped(path: path, reason: "no such file or folder"))
                continue
            }
            if !isDirectory.boolValue {
                consider(path)
                continue
            }
            guard let walker = fm.enumerator(atPath: path) else { continue }
            while let relative = walker.nextObject() as? String {
                let full = path + "/" + relative
                var dir: ObjCBool = false
                let attributes = try? fm.attributesOfItem(atPath: full)
                if attributes?[.type] as? FileAttributeType == .typeSymbolicLink {
                    // Follow links to files only.
                    if fm.fileExists(atPath: full, isDirectory: &dir), !dir.boolValue { consider(full) }
                    continue
                }
                if fm.fileExists(atPath: full, isDirectory: &dir), !dir.boolValue { consider(full) }
            }
        }
        return (files.sorted { $0.path < $1.path }, skipped)
    }
}
