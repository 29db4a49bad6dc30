import FaultlineCore
import MachO

/// `DebugFileInspecting` for thin Mach-O images (a dSYM's DWARF file, an executable, a dylib), with the `MachO` reader.
///
/// A stored Mach-O debug file is always one slice: a fat file is split before it is inspected
/// (`DebugFileFormatInspector.split`), so `inspect` refuses one. The facts follow issue #32's rules: the build-id is the
/// LC_UUID's bytes in file order; a slice with `__DWARF,__debug_info` data serves `debuginfo`, one whose `__TEXT,__text`
/// has file data (never a dSYM's) serves `executable`, so a stripped executable never takes a dSYM's place.
public struct MachOFileInspector: DebugFileInspecting {
    public init() {}

    public func inspect(path: String) throws -> DebugFileFacts {
        let source = try FileByteSource(path: path)
        let slices = try MachOContainer.slices(size: source.size, read: source.bytes)
        guard slices.count == 1, let slice = slices.first, slice.offset == 0 else {
            throw MachOError.unsupported("a fat file with \(slices.count) architectures is stored one slice at a time")
        }
        return Self.facts(of: try MachOImage.read(slice: slice, read: source.bytes))
    }

    /// The facts of one image.
    public static func facts(of image: MachOImage) -> DebugFileFacts {
        var kinds = Set<DebugFileKind>()
        if image.hasDebugInfo { kinds.insert(.debuginfo) }
        if image.hasCode { kinds.insert(.executable) }
        return DebugFileFacts(
            buildID: image.buildID, kinds: kinds, architecture: image.architecture, fileType: image.fileType.rawValue,
            features: image.features, compressedDebugSections: false, format: .macho)
    }

    /// Whether `head` (at least 4 bytes) starts with a Mach-O or fat magic.
    public static func hasMagic(_ head: some Collection<UInt8>) -> Bool { MachOContainer.magic(of: head) != nil }

    /// Checks the first bytes of a thin or fat Mach-O; the build-id when they hold a thin image's load commands.
    /// - Throws: `MachOError` when `head` cannot begin a Mach-O file this server reads.
    public func inspectHead(_ head: [UInt8]) throws -> BuildID? {
        try MachOContainer.checkHead(head)
        guard let magic = MachOContainer.magic(of: head), magic == .thin32 || magic == .thin64 else { return nil }
        // The load commands follow the header; when `head` holds them all, the UUID is known now (the rest of the image,
        // and so where its segments may lie, is not).
        let read = MachOContainer.reader(over: head)
        guard let slice = try? MachOContainer.slices(size: UInt64(head.count), read: read).first,
            let uuid = try? MachOImage.uuid(headOf: slice, read: read), uuid.contains(where: { $0 != 0 })
        else { return nil }
        return BuildID(bytes: uuid)
    }
}
