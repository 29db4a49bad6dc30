import FaultlineCore
import Formats
import MachO

import Foundation

/// A debug file found under the paths `symupload` was given, with what its headers say: an ELF file, or one
/// thin slice of a Mach-O file (a universal file gives one value per architecture, each keyed by its own
/// `LC_UUID` and uploaded as the slice's bytes alone).
public struct LocalDebugFile: Sendable, Equatable {
    /// The container a debug file came in.
    public enum Format: String, Sendable {
        case elf
        case macho
    }

    public var path: String
    /// The bytes uploaded: the whole file, or the slice of a universal file.
    public var size: UInt64
    public var facts: DebugFileFacts
    public var format: Format
    /// Where the uploaded bytes start in the file (0 but for the slices of a universal file).
    public var offset: UInt64
    /// True for one slice of a universal (fat) Mach-O file: its label names the architecture.
    public var isSlice: Bool

    public init(path: String, size: UInt64, facts: DebugFileFacts, format: Format = .elf, offset: UInt64 = 0,
                isSlice: Bool = false) {
        self.path = path
        self.size = size
        self.facts = facts
        self.format = format
        self.offset = offset
        self.isSlice = isSlice
    }

    /// How output names this file: the path, with the architecture for a slice of a universal file
    /// (`App.dSYM/Contents/Resources/DWARF/App [arm64]`). Unique among the files of one scan.
    public var label: String { isSlice ? "\(path) [\(facts.architecture)]" : path }

    /// The identifier as its platform's tools print it: a GNU build-id in lower-case hex, a Mach-O `LC_UUID` in
    /// Apple's spelling (upper-case, hyphenated: `4C4C4433-5555-3144-A1C3-51AEB3BE22A4`, as `dwarfdump --uuid`,
    /// Xcode and Crashlytics show it).
    public var displayID: String {
        guard let id = facts.buildID else { return "?" }
        guard format == .macho else { return id.rawValue }
        return Self.appleUUID(id) ?? id.rawValue
    }

    /// `id` as an upper-case hyphenated UUID, or nil when it is not 16 bytes.
    public static func appleUUID(_ id: BuildID) -> String? {
        let hex = Array(id.rawValue.utf8)
        guard hex.count == 32 else { return nil }
        let bytes = stride(from: 0, to: 32, by: 2).compactMap { UInt8(String(decoding: hex[$0..<($0 + 2)], as: UTF8.self), radix: 16) }
        return MachOImage.uuidString(bytes)
    }

    /// The name the server lists the upload under: the file's name, or for the DWARF file inside a
    /// `.dSYM` bundle the bundle's name (`App.app.dSYM`), which says more than `App`.
    public var uploadName: String {
        let components = path.split(separator: "/")
        if let bundle = components.lastIndex(where: { $0.hasSuffix(".dSYM") }), components.count - bundle == 5,
           components[(bundle + 1)...].prefix(3) == ["Contents", "Resources", "DWARF"] {
            return String(components[bundle])
        }
        return URL(fileURLWithPath: path).lastPathComponent
    }
}
