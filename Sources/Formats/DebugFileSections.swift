import FaultlineCore
import MachO

/// Where a named section's bytes are in a stored debug file, for debuginfod's `/buildid/{id}/section/{name}`.
///
/// An ELF file's section is found by its name (`.debug_info`). A thin Mach-O image's sections are named as debuginfod
/// clients name ELF ones, `.debug_info` for `__DWARF,__debug_info` (Mach-O's 16-byte names are cut: `.debug_str_offsets`
/// is `__debug_str_offs`), or by Mach-O's own name (`__text`); only a section with bytes in the file is answered.
public enum DebugFileSections {
    /// The byte range of section `name` in the file at `path`, or nil when it has none (or cannot be read).
    public static func range(named name: String, inFileAt path: String) -> (offset: UInt64, size: UInt64)? {
        guard let source = try? FileByteSource(path: path), source.size >= 4,
            let head = try? source.bytes(at: 0, count: 4)
        else {
            return nil
        }
        if MachOContainer.magic(of: head) != nil {
            guard let slice = try? MachOContainer.slices(size: source.size, read: source.bytes).first,
                slice.offset == 0,
                let image = try? MachOImage.read(slice: slice, read: source.bytes)
            else { return nil }
            let machName =
                name.hasPrefix(".") ? String(decoding: ("__" + name.dropFirst()).utf8.prefix(16), as: UTF8.self) : name
            let sections = image.segments.flatMap(\.sections).filter(\.hasFileData)
            guard
                let section = sections.first(where: { $0.name == machName && $0.segment == "__DWARF" })
                    ?? sections.first(where: { $0.name == machName })
            else { return nil }
            return (section.fileOffset, section.size)
        }
        guard let info = try? ELFReader.inspect(source), let range = info.sectionRanges[name] else { return nil }
        return (range.offset, range.size)
    }
}
