import FaultlineCore

/// Why a file is not a usable ELF file. Every malformed input ends here, never in a crash.
public enum ELFError: Error, Equatable, Sendable, CustomStringConvertible {
    case notELF
    case unsupported(String)
    case truncated(String)
    case malformed(String)

    public var description: String {
        switch self {
        case .notELF: return "not an ELF file"
        case .unsupported(let why): return "unsupported ELF file: \(why)"
        case .truncated(let why): return "truncated ELF file: \(why)"
        case .malformed(let why): return "malformed ELF file: \(why)"
        }
    }
}

/// What a debug file holds, read from its ELF headers: enough to identify it (build-id), decide what it
/// can serve (debug info, executable code) and report it to a person.
///
/// Read with bounds checks on every offset and count, so that truncated, corrupted or hostile uploads are
/// refused with an `ELFError`. Section contents are never read except the build-id note.
public struct ELFInfo: Sendable, Equatable {
    public enum FileType: String, Sendable, Codable {
        case relocatable, executable, sharedObject = "shared_object", core, other
    }

    public var buildID: BuildID?
    public var fileType: FileType
    /// `x86_64`, `aarch64`, … (`machine-N` for others).
    public var architecture: String
    public var is64Bit: Bool
    /// `.symtab` with symbols.
    public var hasSymbolTable: Bool
    /// `.dynsym` with symbols.
    public var hasDynamicSymbols: Bool
    /// `.debug_info` with data (not `SHT_NOBITS`).
    public var hasDebugInfo: Bool
    /// `.debug_line` with data.
    public var hasLineTable: Bool
    /// `.eh_frame` or `.debug_frame` with data.
    public var hasUnwindInfo: Bool
    /// `.text` with data: the file holds the program's code (an executable or library, stripped or not).
    public var hasCode: Bool
    /// Some `.debug_*` section is compressed (`SHF_COMPRESSED` or `.zdebug_*`).
    public var hasCompressedDebugSections: Bool
    /// Section names in file order.
    public var sectionNames: [String]
    /// Where each section's bytes are (`SHT_NOBITS` sections have none).
    public var sectionRanges: [String: (offset: UInt64, size: UInt64)] = [:]

    public static func == (a: ELFInfo, b: ELFInfo) -> Bool {
        a.buildID == b.buildID && a.fileType == b.fileType && a.architecture == b.architecture && a.is64Bit == b.is64Bit
            && a.hasSymbolTable == b.hasSymbolTable && a.hasDynamicSymbols == b.hasDynamicSymbols
            && a.hasDebugInfo == b.hasDebugInfo && a.hasLineTable == b.hasLineTable
            && a.hasUnwindInfo == b.hasUnwindInfo
            && a.hasCode == b.hasCode && a.hasCompressedDebugSections == b.hasCompressedDebugSections
            && a.sectionNames == b.sectionNames
    }

    /// A file with DWARF can serve debuginfo requests; one with code can serve executable requests.
    public var servesDebugInfo: Bool { hasDebugInfo }
    public var servesExecutable: Bool { hasCode }

    /// Short feature list, as `symtab, debug, unwind` (the names sentry-cli uses).
    public var features: [String] {
        var out: [String] = []
        if hasSymbolTable || hasDynamicSymbols { out.append("symtab") }
        if hasDebugInfo { out.append("debug") }
        if hasUnwindInfo { out.append("unwind") }
        return out
    }
}

/// Reads `ELFInfo` from any `ByteSource`.
public enum ELFReader {
    /// Caps that keep hostile headers from making the reader allocate or loop without bound.
    static let maxSections = 65_535
    static let maxNoteBytes = 1 << 20
    static let maxStringTableBytes = 16 << 20

    public static func inspect(_ source: some ByteSource) throws -> ELFInfo {
        guard source.size >= 16 else { throw ELFError.notELF }
        let ident = try source.bytes(at: 0, count: 16)
        guard ident[0] == 0x7f, ident[1] == 0x45, ident[2] == 0x4c, ident[3] == 0x46 else { throw ELFError.notELF }
        let is64: Bool
        switch ident[4] {
        case 1: is64 = false
        case 2: is64 = true
        default: throw ELFError.malformed("EI_CLASS \(ident[4])")
        }
        let little: Bool
        switch ident[5] {
        case 1: little = true
        case 2: little = false
        default: throw ELFError.malformed("EI_DATA \(ident[5])")
        }
        let headerSize = is64 ? 64 : 52
        guard source.size >= UInt64(headerSize) else { throw ELFError.truncated("the ELF header is cut short") }
        let h = Fields(bytes: try source.bytes(at: 0, count: headerSize), little: little)
        let type = h.u16(16)
        let machine = h.u16(18)
        let shoff = is64 ? h.u64(40) : UInt64(h.u32(32))
        let shentsize = Int(h.u16(is64 ? 58 : 46))
        var shnum = Int(h.u16(is64 ? 60 : 48))
        var shstrndx = Int(h.u16(is64 ? 62 : 50))
        let phoff = is64 ? h.u64(32) : UInt64(h.u32(28))
        let phentsize = Int(h.u16(is64 ? 54 : 42))
        let phnum = Int(h.u16(is64 ? 56 : 44))

        var info = ELFInfo(
            buildID: nil, fileType: fileType(type), architecture: architecture(machine), is64Bit: is64,
            hasSymbolTable: false, hasDynamicSymbols: false, hasDebugInfo: false, hasLineTable: false,
            hasUnwindInfo: false, hasCode: false, hasCompressedDebugSections: false, sectionNames: [])

        var sections: [Section] = []
        if shoff != 0 {
            guard shentsize >= (is64 ? 64 : 40) else { throw ELFError.malformed("section header size \(shentsize)") }
            // Extended numbering: the real counts live in section 0.
            if shnum == 0 || shstrndx == 0xffff {
                let zero = try section(source, at: shoff, is64: is64, little: little)
                if shnum == 0 { shnum = Int(min(zero.size, UInt64(maxSections + 1))) }
                if shstrndx == 0xffff { shstrndx = Int(zero.link) }
            }
            guard shnum <= maxSections else { throw ELFError.malformed("\(shnum) sections") }
            let (tableBytes, overflow) = UInt64(shnum).multipliedReportingOverflow(by: UInt64(shentsize))
            guard !overflow, shoff <= source.size, tableBytes <= source.size - shoff else {
                throw ELFError.truncated("the section header table lies past the end of the file")
            }
            let table = try source.bytes(at: shoff, count: Int(tableBytes))
            for i in 0..<shnum {
                sections.append(
                    Section(
                        Fields(bytes: Array(table[(i * shentsize)..<(i * shentsize + shentsize)]), little: little),
                        is64: is64))
            }
            if shstrndx < sections.count, shstrndx != 0 {
                let strtab = sections[shstrndx]
                guard strtab.type != 8, strtab.size <= UInt64(maxStringTableBytes), strtab.offset <= source.size,
                    strtab.size <= source.size - strtab.offset
                else { throw ELFError.malformed("the section name table is out of bounds") }
                let names = try source.bytes(at: strtab.offset, count: Int(strtab.size))
                for i in sections.indices { sections[i].name = cString(names, at: Int(sections[i].nameOffset)) }
            }
        }

        for s in sections {
            info.sectionNames.append(s.name)
            let hasData = s.type != 8 && s.size > 0  // SHT_NOBITS = 8
            if hasData, info.sectionRanges[s.name] == nil, s.offset <= source.size, s.size <= source.size - s.offset {
                info.sectionRanges[s.name] = (s.offset, s.size)
            }
            switch s.name {
            case ".symtab": info.hasSymbolTable = info.hasSymbolTable || (hasData && s.size > s.entrySize)
            case ".dynsym": info.hasDynamicSymbols = info.hasDynamicSymbols || (hasData && s.size > s.entrySize)
            case ".debug_info", ".zdebug_info": info.hasDebugInfo = info.hasDebugInfo || hasData
            case ".debug_line", ".zdebug_line": info.hasLineTable = info.hasLineTable || hasData
            case ".eh_frame", ".debug_frame", ".zdebug_frame": info.hasUnwindInfo = info.hasUnwindInfo || hasData
            case ".text": info.hasCode = info.hasCode || hasData
            default: break
            }
            if hasData, s.name.hasPrefix(".zdebug_") || (s.name.hasPrefix(".debug_") && s.flags & 0x800 != 0) {
                info.hasCompressedDebugSections = true
            }
            if info.buildID == nil, s.type == 7, hasData {  // SHT_NOTE
                info.buildID = try buildID(source, offset: s.offset, size: s.size, little: little)
            }
        }

        // Files without section headers (rare, e.g. some stripped images): look in PT_NOTE segments.
        if info.buildID == nil, phoff != 0, phnum > 0, phnum < 65_535, phentsize >= (is64 ? 56 : 32) {
            let (tableBytes, overflow) = UInt64(phnum).multipliedReportingOverflow(by: UInt64(phentsize))
            if !overflow, phoff <= source.size, tableBytes <= source.size - phoff {
                let table = try source.bytes(at: phoff, count: Int(tableBytes))
                for i in 0..<phnum {
                    let p = Fields(bytes: Array(table[(i * phentsize)..<(i * phentsize + phentsize)]), little: little)
                    guard p.u32(0) == 4 else { continue }  // PT_NOTE
                    let offset = is64 ? p.u64(8) : UInt64(p.u32(4))
                    let size = is64 ? p.u64(32) : UInt64(p.u32(16))
                    if let id = try buildID(source, offset: offset, size: size, little: little) {
                        info.buildID = id
                        break
                    }
                }
            }
        }
        return info
    }

    /// Finds an `NT_GNU_BUILD_ID` note (owner "GNU", type 3) in a note area.
    static func buildID(_ source: some ByteSource, offset: UInt64, size: UInt64, little: Bool) throws -> BuildID? {
        guard size >= 12, size <= UInt64(maxNoteBytes), offset <= source.size, size <= source.size - offset else {
            return nil
        }
        let notes = try source.bytes(at: offset, count: Int(size))
        var i = 0
        while i + 12 <= notes.count {
            let f = Fields(bytes: Array(notes[i..<(i + 12)]), little: little)
            let namesz = Int(f.u32(0))
            let descsz = Int(f.u32(4))
            let type = f.u32(8)
            let nameStart = i + 12
            let descStart = nameStart + align4(namesz)
            guard namesz >= 0, descsz >= 0, descStart <= notes.count, descsz <= notes.count - descStart else {
                return nil
            }
            if type == 3, namesz == 4, notes[nameStart..<(nameStart + 4)].elementsEqual([0x47, 0x4e, 0x55, 0x00]) {
                return BuildID(bytes: notes[descStart..<(descStart + descsz)])
            }
            i = descStart + align4(descsz)
        }
        return nil
    }

    static func align4(_ n: Int) -> Int { (n + 3) & ~3 }

    static func section(_ source: some ByteSource, at offset: UInt64, is64: Bool, little: Bool) throws -> Section {
        let size = is64 ? 64 : 40
        guard offset <= source.size, UInt64(size) <= source.size - offset else {
            throw ELFError.truncated("the section header table lies past the end of the file")
        }
        return Section(Fields(bytes: try source.bytes(at: offset, count: size), little: little), is64: is64)
    }

    static func cString(_ bytes: [UInt8], at offset: Int) -> String {
        guard offset >= 0, offset < bytes.count else { return "" }
        var end = offset
        while end < bytes.count, bytes[end] != 0 { end += 1 }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    static func fileType(_ type: UInt16) -> ELFInfo.FileType {
        switch type {
        case 1: .relocatable
        case 2: .executable
        case 3: .sharedObject
        case 4: .core
        default: .other
        }
    }

    static func architecture(_ machine: UInt16) -> String {
        switch machine {
        case 3: "x86"
        case 40: "arm"
        case 62: "x86_64"
        case 183: "aarch64"
        case 243: "riscv"
        case 21: "ppc64"
        case 22: "s390"
        default: "machine-\(machine)"
        }
    }

    /// One section header.
    struct Section {
        var name = ""
        let nameOffset: UInt32
        let type: UInt32
        let flags: UInt64
        let offset: UInt64
        let size: UInt64
        let link: UInt32
        let entrySize: UInt64

        init(_ f: Fields, is64: Bool) {
            nameOffset = f.u32(0)
            type = f.u32(4)
            if is64 {
                flags = f.u64(8)
                offset = f.u64(24)
                size = f.u64(32)
                link = f.u32(40)
                entrySize = f.u64(56)
            } else {
                flags = UInt64(f.u32(8))
                offset = UInt64(f.u32(16))
                size = UInt64(f.u32(20))
                link = f.u32(24)
                entrySize = UInt64(f.u32(36))
            }
        }
    }

    /// Fixed-width integers at byte offsets of a header, in the file's byte order.
    struct Fields {
        let bytes: [UInt8]
        let little: Bool
        func u16(_ at: Int) -> UInt16 { UInt16(truncatingIfNeeded: value(at, 2)) }
        func u32(_ at: Int) -> UInt32 { UInt32(truncatingIfNeeded: value(at, 4)) }
        func u64(_ at: Int) -> UInt64 { value(at, 8) }
        func value(_ at: Int, _ width: Int) -> UInt64 {
            guard at >= 0, at + width <= bytes.count else { return 0 }
            var v: UInt64 = 0
            for k in 0..<width {
                let b = UInt64(bytes[little ? at + width - 1 - k : at + k])
                v = v << 8 | b
            }
            return v
        }
    }
}
