import FaultlineCore
import Formats
import Foundation
import MachO

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the Mach-O files `DebugFileScanner` finds: a thin file is one debug file, a universal (fat) file one per
/// architecture, each keyed by its own `LC_UUID` and later uploaded as the slice's bytes alone (the server stores
/// thin slices only), with the facts the server will find (`MachOFileInspector.facts`). Object files (`.o`, no
/// `LC_UUID`; their DWARF reaches the dSYM) are skipped quietly. A `.zip` of dSYMs is taken apart with the server's
/// own bounded reader (`DebugFileSplitter`) into a scratch folder, and each image in it is one debug file.
enum MachOFiles {
    static func read(
        path: String, source: FileByteSource, label: String? = nil, namedAs shownPath: String? = nil
    )
        -> (files: [LocalDebugFile], skipped: [DebugFileScanner.Skipped])
    {
        let slices: [MachOSlice]
        do {
            slices = try MachOContainer.slices(size: source.size, read: source.bytes)
        } catch MachOError.notMachO {
            return ([], [.init(path: label ?? path, reason: "not a debug file", quiet: true)])
        } catch {
            return ([], [.init(path: label ?? path, reason: "not a readable Mach-O file: \(error)")])
        }
        let universal = slices.count > 1 || slices.contains { $0.offset != 0 }
        var files: [LocalDebugFile] = []
        var skipped: [DebugFileScanner.Skipped] = []
        for slice in slices {
            let where_ = universal ? "\(label ?? path) [\(slice.architecture)]" : label ?? path
            let image: MachOImage
            do {
                image = try MachOImage.read(slice: slice, read: source.bytes)
            } catch {
                skipped.append(.init(path: where_, reason: "not a readable Mach-O file: \(error)"))
                continue
            }
            let facts = MachOFileInspector.facts(of: image)
            if image.fileType == .object {
                skipped.append(
                    .init(path: where_, reason: "a Mach-O object file (its DWARF goes into the dSYM)", quiet: true))
                continue
            }
            if facts.kinds.isEmpty {
                skipped.append(.init(path: where_, reason: "a Mach-O file with neither DWARF nor code", quiet: true))
                continue
            }
            files.append(
                LocalDebugFile(
                    path: path, size: slice.size, facts: facts, offset: slice.offset, isSlice: universal,
                    label: where_, namedAs: shownPath))
        }
        return (files, skipped)
    }

    /// The images of a `.zip` of dSYMs (App Store Connect's `appDsyms.zip`, Xcode Organizer's export), each taken out
    /// into `scratch` (fat ones one file per slice) and labelled `archive.zip: entry`.
    static func read(
        zip path: String, resolved: String, scratch: String
    )
        -> (files: [LocalDebugFile], skipped: [DebugFileScanner.Skipped])
    {
        let folder = scratch + "/zip-\(UUID().uuidString.prefix(8))"
        var made = 0
        let pieces: [DebugFilePiece]?
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            pieces = try DebugFileSplitter().split(path: resolved, name: nil) {
                made += 1
                let piece = folder + "/\(made)"
                guard FileManager.default.createFile(atPath: piece, contents: nil) else {
                    throw UploadError(message: "cannot write into \(folder)", status: nil)
                }
                return TemporaryUpload(path: piece)
            }
        } catch {
            return ([], [.init(path: path, reason: "not a readable zip of dSYMs: \(error)")])
        }
        var files: [LocalDebugFile] = []
        var skipped: [DebugFileScanner.Skipped] = []
        for piece in pieces ?? [] {
            guard let source = try? FileByteSource(path: piece.upload.path) else { continue }
            let entry = piece.name ?? "?"
            // A fat entry's pieces are named `entry (arm64)`: the entry's path names the upload.
            let entryPath =
                entry.hasSuffix(")") ? String(entry[..<(entry.lastIndex(of: " ") ?? entry.endIndex)]) : entry
            let found = read(path: piece.upload.path, source: source, label: "\(path): \(entry)", namedAs: entryPath)
            files += found.files
            skipped += found.skipped
        }
        return (files, skipped)
    }
}
