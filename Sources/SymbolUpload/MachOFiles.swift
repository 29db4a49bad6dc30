import FaultlineCore
import Formats
import MachO

/// Reads the slices of a Mach-O file found by `DebugFileScanner`: a thin file is one debug file, a universal
/// (fat) file one per architecture, each keyed by its own `LC_UUID` and later uploaded as the slice's bytes alone
/// (the server stores thin slices only). Object files (`.o`, no `LC_UUID`; their DWARF reaches the dSYM) are
/// skipped quietly.
enum MachOFiles {
    /// True when the first bytes are a thin or fat Mach-O magic.
    static func hasMagic(_ magic: [UInt8]) -> Bool { MachOContainer.magic(of: magic) != nil }

    /// What a slice serves, as the server will see it: `debuginfo` with `__DWARF,__debug_info` data (a dSYM),
    /// `executable` with `__TEXT,__text` data in a file that is not a dSYM.
    static func facts(of image: MachOImage) -> DebugFileFacts {
        var kinds: Set<DebugFileKind> = []
        if image.hasDebugInfo { kinds.insert(.debuginfo) }
        if image.hasCode { kinds.insert(.executable) }
        return DebugFileFacts(buildID: image.buildID, kinds: kinds, architecture: image.architecture,
                              fileType: image.fileType.rawValue, features: image.features, compressedDebugSections: false)
    }

    static func read(path: String, source: FileByteSource) -> (files: [LocalDebugFile], skipped: [DebugFileScanner.Skipped]) {
        let read: (UInt64, Int) throws -> [UInt8] = { offset, count in try source.bytes(at: offset, count: count) }
        let slices: [MachOSlice]
        do {
            slices = try MachOContainer.slices(size: source.size, read: read)
        } catch MachOError.notMachO {
            return ([], [.init(path: path, reason: "not a debug file", quiet: true)])
        } catch {
            return ([], [.init(path: path, reason: "not a readable Mach-O file: \(error)")])
        }
        let universal = slices.count > 1 || slices.contains { $0.offset != 0 }
        var files: [LocalDebugFile] = []
        var skipped: [DebugFileScanner.Skipped] = []
        for slice in slices {
            let label = universal ? "\(path) [\(slice.architecture)]" : path
            let image: MachOImage
            do {
                image = try MachOImage.read(slice: slice, read: read)
            } catch {
                skipped.append(.init(path: label, reason: "not a readable Mach-O file: \(error)"))
                continue
            }
            let facts = Self.facts(of: image)
            if facts.fileType == "object" {
                skipped.append(.init(path: label, reason: "a Mach-O object file (its DWARF goes into the dSYM)", quiet: true))
                continue
            }
            if facts.kinds.isEmpty {
                skipped.append(.init(path: label, reason: "a Mach-O file with neither DWARF nor code", quiet: true))
                continue
            }
            files.append(LocalDebugFile(path: path, size: slice.size, facts: facts, format: .macho, offset: slice.offset,
                                        isSlice: universal))
        }
        return (files, skipped)
    }
}
