/// The ELF headers that present a thin Mach-O image to libelf and libdw, so that one code path (`DebugModule`)
/// symbolicates both formats.
///
/// The image libelf receives is `headers` (built here, padded to a page) followed by the Mach-O file's bytes as
/// they are on disk (mapped, not copied; see `DebugModule+MachO`). Built here:
/// - an ELF64 header for the Mach-O's CPU (`EM_AARCH64`, `EM_X86_64`) and type (`ET_DYN` for a dylib or bundle);
/// - a `PT_LOAD` at `__TEXT`'s vmaddr (alignment 1), so `DebugModule.loadBias` is that vmaddr, and a `PT_NOTE`;
/// - section headers: a `.text` without bytes (`SHT_NOBITS`, at `__TEXT,__text`'s address) that the symbols name,
///   the `__DWARF,__debug_*` sections renamed `.debug_*` (the names Mach-O cut to 16 bytes restored:
///   `__debug_str_offs` → `.debug_str_offsets`) and pointing into the mapped file, a build-id note holding the
///   UUID, `.symtab`/`.strtab` and `.shstrtab`;
/// - `.symtab` converted from the `nlist_64` table: symbols defined in `__TEXT,__text` only (never
///   `__mh_execute_header` or data), no debugger (`N_STAB`) entries, one per address, each sized up to the next one
///   (or the section's end), named without Mach-O's one leading underscore (`_main` → `main`, `__ZN…` → `_ZN…`,
///   `_$s…` → `$s…`; `-[Class method:]` has none and stays as written).
///
/// Everything here is pure: values come from the Mach-O reader (already bounds-checked against the slice) and are
/// checked again where an ELF field could not hold them.
struct MachOELFImage {
    /// A Mach-O section to expose, with its place in the slice.
    struct Section {
        /// The ELF name (`.debug_info`).
        var name: String
        var fileOffset: UInt64
        var size: UInt64
    }

    /// An `nlist_64` entry; its name is `length` bytes at `name` in the string table.
    struct Entry {
        var value: UInt64
        var type: UInt8
        var section: UInt8
        var name: Int
        var length: Int
        var external: Bool { type & 0x01 != 0 }
    }

    /// A symbol of the new `.symtab`: its name is at `name` in `strtab`.
    struct Symbol {
        var address: UInt64
        var size: UInt64
        var external: Bool
        var name: UInt32
    }

    /// `EM_AARCH64`, `EM_X86_64`, or 0 for other CPUs (libdw does not need the machine for reading DWARF).
    var machine: UInt16
    var isLibrary: Bool
    var textVMAddr: UInt64
    var textVMSize: UInt64
    /// `__TEXT,__text`: its address and size (nil when the image has none: no symbols are kept then).
    var text: (address: UInt64, size: UInt64)?
    var sections: [Section]
    var symbols: [Symbol]
    /// The `.strtab` the symbols' names index (starting with a NUL).
    var strtab: [UInt8]
    var uuid: [UInt8]?

    /// The ELF name of a Mach-O `__DWARF` section, nil for sections libdw does not read (`__apple_names`, …).
    static func elfName(ofMachOSection name: String) -> String? {
        guard name.hasPrefix("__debug_") else { return nil }
        let cut = "." + name.dropFirst(2)
        // Mach-O's section names are 16 bytes: the longer DWARF names arrive cut.
        let completed: [String: String] = [
            ".debug_str_offs": ".debug_str_offsets", ".debug_gnu_pubn": ".debug_gnu_pubnames",
            ".debug_gnu_pubt": ".debug_gnu_pubtypes",
        ]
        return completed[cut] ?? cut
    }

    /// The CPU of a Mach-O `cputype` as an ELF machine.
    static func machine(cpuType: Int32) -> UInt16 {
        switch cpuType {
        case 0x0100_000c: return 183  // CPU_TYPE_ARM64 → EM_AARCH64
        case 0x0100_0007: return 62  // CPU_TYPE_X86_64 → EM_X86_64
        default: return 0
        }
    }

    /// The symbols of `__TEXT,__text` from `nlist` entries: defined in section ordinal `textOrdinal`, not debugger
    /// entries, named, within the section, one per address (an external name wins over a local alias), sorted by
    /// address.
    static func textEntries(_ entries: [Entry], textOrdinal: Int, text: (address: UInt64, size: UInt64)) -> [Entry] {
        let textEnd = text.address.addingReportingOverflow(text.size).overflow ? UInt64.max : text.address + text.size
        // N_STAB entries are the debug map; N_TYPE 0xe is N_SECT (defined in a section).
        var kept = entries.filter {
            $0.type & 0xe0 == 0 && $0.type & 0x0e == 0x0e && Int($0.section) == textOrdinal && $0.value >= text.address
                && $0.value < textEnd && $0.length > 0
        }
        // Among aliases of one address the external ones first, then the one whose name comes first in the string
        // table (deterministic whatever the sort).
        kept.sort { ($0.value, $0.external ? 0 : 1, $0.name) < ($1.value, $1.external ? 0 : 1, $1.name) }
        var unique: [Entry] = []
        unique.reserveCapacity(kept.count)
        for entry in kept where unique.last?.value != entry.value { unique.append(entry) }
        return unique
    }

    /// `.symtab` symbols and their `.strtab` for `entries` (from `textEntries`), names read from `strings` without
    /// Mach-O's one leading underscore, each sized up to the next symbol, the last up to the end of `text`.
    static func symbols(_ entries: [Entry], strings: UnsafeRawBufferPointer, text: (address: UInt64, size: UInt64))
        -> (symbols: [Symbol], strtab: [UInt8])
    {
        let textEnd = text.address.addingReportingOverflow(text.size).overflow ? UInt64.max : text.address + text.size
        var strtab: [UInt8] = [0]
        var symbols: [Symbol] = []
        symbols.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() {
            var start = entry.name
            let end = entry.name + entry.length
            if strings[start] == UInt8(ascii: "_") { start += 1 }
            guard start < end, let offset = UInt32(exactly: strtab.count) else { continue }
            strtab.append(contentsOf: strings[start..<end])
            strtab.append(0)
            let next = i + 1 < entries.count ? entries[i + 1].value : textEnd
            symbols.append(
                Symbol(address: entry.value, size: next - entry.value, external: entry.external, name: offset))
        }
        return (symbols, strtab)
    }

    /// The header bytes, `pageSize`-aligned in length; the Mach-O slice follows them in the image at
    /// `headerLength + sliceOffset`, where `sliceOffset` is the slice's offset in the mapped file.
    func headers(sliceOffset: UInt64, pageSize: Int) -> [UInt8] {
        var out = ByteWriter()
        let phnum = 2
        out.zeros(64 + phnum * 56)

        // The build-id note: namesz 4, descsz 16, type NT_GNU_BUILD_ID, "GNU\0", the UUID.
        let noteOffset = out.count
        if let uuid {
            out.u32(4)
            out.u32(UInt32(uuid.count))
            out.u32(3)
            out.bytes(Array("GNU".utf8) + [0])
            out.bytes(uuid)
            out.align(4)
        }
        let noteSize = out.count - noteOffset

        // Locals first (ELF's rule; `sh_info` is the first global), then globals.
        let ordered = symbols.filter { !$0.external } + symbols.filter(\.external)
        out.align(8)
        let symtabOffset = out.count
        out.zeros(24)  // symbol 0
        for symbol in ordered {
            out.u32(symbol.name)
            out.u8((symbol.external ? 1 : 0) << 4 | 2)  // STB_GLOBAL/STB_LOCAL, STT_FUNC
            out.u8(0)
            out.u16(1)  // .text
            out.u64(symbol.address)
            out.u64(symbol.size)
        }
        let symtabSize = out.count - symtabOffset
        let strtabOffset = out.count
        out.bytes(strtab)

        var names = ByteWriter()
        names.bytes([0])
        func name(_ text: String) -> UInt32 {
            defer { names.bytes(Array(text.utf8) + [0]) }
            return UInt32(truncatingIfNeeded: names.count)
        }
        struct Header {
            var name: UInt32, type: UInt32, flags: UInt64 = 0, address: UInt64 = 0, offset: UInt64, size: UInt64
            var link: UInt32 = 0, info: UInt32 = 0, align: UInt64 = 1, entrySize: UInt64 = 0
        }
        var headers: [Header] = [Header(name: 0, type: 0, offset: 0, size: 0)]
        headers.append(
            Header(
                name: name(".text"), type: 8, flags: 6, address: text?.address ?? 0, offset: 0,
                size: text?.size ?? 0, align: 4))  // SHT_NOBITS, SHF_ALLOC|SHF_EXECINSTR
        let debugBase = UInt64(0)  // patched below once the header length is known
        let firstDebug = headers.count
        for section in sections {
            headers.append(
                Header(name: name(section.name), type: 1, offset: debugBase &+ section.fileOffset, size: section.size))
        }
        if uuid != nil {
            headers.append(
                Header(
                    name: name(".note.gnu.build-id"), type: 7, flags: 2, offset: UInt64(noteOffset),
                    size: UInt64(noteSize), align: 4))
        }
        let symtabIndex = headers.count
        headers.append(
            Header(
                name: name(".symtab"), type: 2, offset: UInt64(symtabOffset), size: UInt64(symtabSize),
                link: UInt32(symtabIndex + 1), info: UInt32(1 + symbols.count(where: { !$0.external })), align: 8,
                entrySize: 24))
        headers.append(Header(name: name(".strtab"), type: 3, offset: UInt64(strtabOffset), size: UInt64(strtab.count)))
        let shstrndx = headers.count
        let shstrtabName = name(".shstrtab")
        let shstrtabOffset = out.count
        out.bytes(names.data)
        headers.append(Header(name: shstrtabName, type: 3, offset: UInt64(shstrtabOffset), size: UInt64(names.count)))

        out.align(8)
        let shoff = out.count
        out.zeros(headers.count * 64)
        out.align(max(pageSize, 8))
        let length = UInt64(out.count)
        for i in firstDebug..<(firstDebug + sections.count) {
            headers[i].offset = length &+ sliceOffset &+ headers[i].offset
        }
        for (i, header) in headers.enumerated() {
            var at = shoff + i * 64
            out.put32(header.name, at: &at)
            out.put32(header.type, at: &at)
            out.put64(header.flags, at: &at)
            out.put64(header.address, at: &at)
            out.put64(header.offset, at: &at)
            out.put64(header.size, at: &at)
            out.put32(header.link, at: &at)
            out.put32(header.info, at: &at)
            out.put64(header.align, at: &at)
            out.put64(header.entrySize, at: &at)
        }

        // The ELF header.
        var at = 0
        out.putBytes([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], at: &at)  // ELFCLASS64, ELFDATA2LSB, EV_CURRENT
        at = 16
        out.put16(isLibrary ? 3 : 2, at: &at)  // ET_DYN, ET_EXEC
        out.put16(machine, at: &at)
        out.put32(1, at: &at)
        out.put64(0, at: &at)  // e_entry
        out.put64(64, at: &at)  // e_phoff
        out.put64(UInt64(shoff), at: &at)
        out.put32(0, at: &at)  // e_flags
        out.put16(64, at: &at)
        out.put16(56, at: &at)
        out.put16(UInt16(phnum), at: &at)
        out.put16(64, at: &at)
        // Section counts past 0xff00 would need extended numbering; the Mach-O reader allows far fewer sections.
        out.put16(UInt16(truncatingIfNeeded: headers.count), at: &at)
        out.put16(UInt16(truncatingIfNeeded: shstrndx), at: &at)

        // PT_LOAD at __TEXT (no file bytes: the code is not needed), then PT_NOTE.
        at = 64
        out.put32(1, at: &at)
        out.put32(5, at: &at)  // PF_R|PF_X
        out.put64(0, at: &at)
        out.put64(textVMAddr, at: &at)
        out.put64(textVMAddr, at: &at)
        out.put64(0, at: &at)
        out.put64(textVMSize, at: &at)
        out.put64(1, at: &at)
        out.put32(4, at: &at)
        out.put32(4, at: &at)
        out.put64(UInt64(noteOffset), at: &at)
        out.put64(0, at: &at)
        out.put64(0, at: &at)
        out.put64(UInt64(noteSize), at: &at)
        out.put64(UInt64(noteSize), at: &at)
        out.put64(4, at: &at)
        return out.data
    }
}

/// Little-endian bytes, appended or patched in place.
struct ByteWriter {
    var data: [UInt8] = []
    var count: Int { data.count }

    mutating func u8(_ v: UInt8) { data.append(v) }
    mutating func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func u64(_ v: UInt64) { withUnsafeBytes(of: v.littleEndian) { data.append(contentsOf: $0) } }
    mutating func bytes(_ v: [UInt8]) { data.append(contentsOf: v) }
    mutating func zeros(_ n: Int) { data.append(contentsOf: repeatElement(0, count: n)) }
    mutating func align(_ n: Int) { if data.count % n != 0 { zeros(n - data.count % n) } }

    mutating func putBytes(_ v: [UInt8], at: inout Int) {
        data.replaceSubrange(at..<(at + v.count), with: v)
        at += v.count
    }
    mutating func put16(_ v: UInt16, at: inout Int) {
        withUnsafeBytes(of: v.littleEndian) { putBytes(Array($0), at: &at) }
    }
    mutating func put32(_ v: UInt32, at: inout Int) {
        withUnsafeBytes(of: v.littleEndian) { putBytes(Array($0), at: &at) }
    }
    mutating func put64(_ v: UInt64, at: inout Int) {
        withUnsafeBytes(of: v.littleEndian) { putBytes(Array($0), at: &at) }
    }
}
