import FaultlineCore
import Formats
import Foundation

/// A debug file found under the paths `symupload` was given, with what its headers say: an ELF file, or one
/// thin slice of a Mach-O file (a universal file gives one value per architecture, each keyed by its own
/// `LC_UUID` and uploaded as the slice's bytes alone), or one Mach-O image taken out of a `.zip` of dSYMs.
public struct LocalDebugFile: Sendable, Equatable {
    /// The file whose bytes are uploaded (for an image from a zip: the copy taken out of it).
    public var path: String
    /// The bytes uploaded: the whole file, or the slice of a universal file.
    public var size: UInt64
    public var facts: DebugFileFacts
    /// Where the uploaded bytes start in the file (0 but for the slices of a universal file).
    public var offset: UInt64
    /// True for one slice of a universal (fat) Mach-O file.
    public var isSlice: Bool
    /// How output names this file, unique among the files of one scan: the path, with the architecture for a
    /// slice of a universal file (`Tool.dSYM/Contents/Resources/DWARF/Tool [arm64]`), the archive and entry for an
    /// image from a zip (`appDsyms.zip: Shop.app.dSYM/Contents/Resources/DWARF/Shop`).
    public var label: String
    /// The name the server lists the upload under: the file's name, or for the DWARF file inside a `.dSYM` bundle
    /// the bundle's name (`Shop.app.dSYM`), which says more than `Shop`.
    public var uploadName: String

    public init(
        path: String, size: UInt64, facts: DebugFileFacts, offset: UInt64 = 0, isSlice: Bool = false,
        label: String? = nil, namedAs shownPath: String? = nil
    ) {
        self.path = path
        self.size = size
        self.facts = facts
        self.offset = offset
        self.isSlice = isSlice
        self.label = label ?? (isSlice ? "\(path) [\(facts.architecture)]" : path)
        self.uploadName = Self.name(of: shownPath ?? path)
    }

    /// The identifier as its platform's tools print it: a GNU build-id in lower-case hex, a Mach-O `LC_UUID` in
    /// Apple's spelling (upper-case, hyphenated: `4C4C4433-5555-3144-A1C3-51AEB3BE22A4`, as `dwarfdump --uuid`,
    /// Xcode and Crashlytics show it).
    public var displayID: String {
        guard let id = facts.buildID else { return "?" }
        return facts.format == .macho ? AppleUUID.spelling(id) : id.rawValue
    }

    /// The last component of `path`, or the `.dSYM` bundle's name for the DWARF file inside one.
    static func name(of path: String) -> String {
        let components = path.split(separator: "/")
        if let bundle = components.lastIndex(where: { $0.hasSuffix(".dSYM") }), components.count - bundle == 5,
            components[(bundle + 1)...].prefix(3) == ["Contents", "Resources", "DWARF"]
        {
            return String(components[bundle])
        }
        return components.last.map(String.init) ?? path
    }
}
