extension MachOImage {
    /// Caps that keep hostile headers from making the reader allocate or loop without bound. Real images stay far
    /// below them (an app has a few hundred load commands and sections).
    public enum Limits {
        /// `ncmds` at most.
        public static let maxLoadCommands = 8_192
        /// `sizeofcmds` at most.
        public static let maxCommandBytes = 8 << 20
        /// Sections of all segments together at most.
        public static let maxSections = 8_192
    }

    static let lcSegment: UInt32 = 0x1
    static let lcSymtab: UInt32 = 0x2
    static let lcIDDylib: UInt32 = 0xd
    static let lcSegment64: UInt32 = 0x19
    static let lcUUID: UInt32 = 0x1b
    static let lcBuildVersion: UInt32 = 0x32
    static let versionMinPlatforms: [UInt32: String] = [0x24: "macos", 0x25: "ios", 0x2f: "tvos", 0x30: "watchos"]

    /// Reads the image of `slice` through `read` (absolute file offsets; the slice's bytes are `slice.offset ..<
    /// slice.offset + slice.size`).
    /// - Throws: `MachOError` when the header or a load command is cut short, contradicts the slice or passes `Limits`.
    public static func read(slice: MachOSlice, read: MachOReadBytes) throws -> MachOImage {
        let end = try Checked.add(slice.offset, slice.size, "the slice end")
        let header = try MachOContainer.thinHeader(at: slice.offset, limit: end, read: read)
        guard header.cpuType == slice.cpuType else {
            throw MachOError.malformed("the slice says CPU type \(slice.cpuType), its header \(header.cpuType)")
        }
        guard header.commandCount <= Limits.maxLoadCommands else {
            throw MachOError.malformed(
                "\(header.commandCount) load commands (at most \(Limits.maxLoadCommands) are read)")
        }
        guard header.commandsSize <= Limits.maxCommandBytes else {
            throw MachOError.malformed(
                "\(header.commandsSize) bytes of load commands (at most \(Limits.maxCommandBytes) are read)")
        }
        try Checked.within(UInt64(header.size), UInt64(header.commandsSize), slice.size, "the load commands")
        let commands = try read(slice.offset + UInt64(header.size), Int(header.commandsSize))
        guard commands.count == Int(header.commandsSize) else {
            throw MachOError.truncated("short read of the load commands")
        }

        var image = MachOImage(
            slice: slice, is64Bit: header.is64, fileType: fileType(header.fileType), rawFileType: header.fileType,
            uuid: nil,
            segments: [], symbolTable: nil, platform: nil, minOS: nil, sdk: nil, installName: nil)
        var parser = CommandParser(
            image: image, sliceSize: slice.size, little: MachOFields(bytes: commands, bigEndian: false))
        var at = 0
        for index in 0..<Int(header.commandCount) {
            guard commands.count - at >= 8 else {
                throw MachOError.truncated(
                    "load command \(index) starts past the \(commands.count) bytes of load commands")
            }
            let cmd = parser.f.u32(at)
            let size = Int(parser.f.u32(at + 4))
            guard size >= 8, size % 4 == 0 else { throw MachOError.malformed("load command \(index) has size \(size)") }
            guard size <= commands.count - at else {
                throw MachOError.truncated("load command \(index) (\(size) bytes) ends past the load commands")
            }
            try parser.parse(cmd: cmd, at: at, size: size, index: index)
            at += size
        }
        image = parser.image
        return image
    }

    /// The LC_UUID of a thin image whose load commands `read` can reach, without checking where its segments and
    /// symbols lie: for the first bytes of an upload, before the rest (and so the image's size) is known.
    /// - Returns: nil without LC_UUID.
    /// - Throws: `MachOError` when the header or a load command's size is damaged or past `Limits`.
    public static func uuid(headOf slice: MachOSlice, read: MachOReadBytes) throws -> [UInt8]? {
        let end = try Checked.add(slice.offset, slice.size, "the slice end")
        let header = try MachOContainer.thinHeader(at: slice.offset, limit: end, read: read)
        guard header.commandCount <= Limits.maxLoadCommands, header.commandsSize <= Limits.maxCommandBytes else {
            throw MachOError.malformed(
                "\(header.commandCount) load commands in \(header.commandsSize) bytes (past the limits)")
        }
        try Checked.within(UInt64(header.size), UInt64(header.commandsSize), slice.size, "the load commands")
        let f = MachOFields(
            bytes: try read(slice.offset + UInt64(header.size), Int(header.commandsSize)), bigEndian: false)
        var at = 0
        for index in 0..<Int(header.commandCount) {
            guard f.bytes.count - at >= 8 else {
                throw MachOError.truncated("load command \(index) starts past the load commands")
            }
            let size = Int(f.u32(at + 4))
            guard size >= 8, size % 4 == 0, size <= f.bytes.count - at else {
                throw MachOError.malformed("load command \(index) has size \(size)")
            }
            if f.u32(at) == lcUUID, size >= 24 { return Array(f.bytes[(at + 8)..<(at + 24)]) }
            at += size
        }
        return nil
    }

    static func fileType(_ raw: UInt32) -> FileType {
        switch raw {
        case 0x1: return .object
        case 0x2: return .executable
        case 0x6: return .dylib
        case 0x7: return .dylinker
        case 0x8: return .bundle
        case 0xa: return .dsym
        case 0xb: return .kext
        default: return .other
        }
    }

    static func platformName(_ raw: UInt32) -> String {
        let names = [
            1: "macos", 2: "ios", 3: "tvos", 4: "watchos", 5: "bridgeos", 6: "maccatalyst", 7: "iossimulator",
            8: "tvossimulator", 9: "watchossimulator", 10: "driverkit", 11: "visionos", 12: "visionossimulator",
        ]
        return names[Int(raw)] ?? "platform-\(raw)"
    }

    /// `xxxx.yy.zz` nibbles as `15.0` or `11.0.1`.
    static func version(_ raw: UInt32) -> String {
        let patch = raw & 0xff
        let base = "\(raw >> 16).\((raw >> 8) & 0xff)"
        return patch == 0 ? base : "\(base).\(patch)"
    }
}

/// The load-command walk: one command at a time into the image, every size checked against the command and the slice.
private struct CommandParser {
    var image: MachOImage
    let sliceSize: UInt64
    let f: MachOFields
    var sectionCount = 0

    init(image: MachOImage, sliceSize: UInt64, little: MachOFields) {
        self.image = image
        self.sliceSize = sliceSize
        self.f = little
    }

    mutating func parse(cmd: UInt32, at: Int, size: Int, index: Int) throws {
        func need(_ bytes: Int, _ what: String) throws {
            guard size >= bytes else {
                throw MachOError.malformed("\(what) (load command \(index)) has \(size) bytes, needs \(bytes)")
            }
        }
        switch cmd {
        case MachOImage.lcUUID:
            try need(24, "LC_UUID")
            guard image.uuid == nil else { throw MachOError.malformed("two LC_UUID load commands") }
            image.uuid = Array(f.bytes[(at + 8)..<(at + 24)])
        case MachOImage.lcSegment64, MachOImage.lcSegment:
            try segment(is64: cmd == MachOImage.lcSegment64, at: at, size: size, index: index)
        case MachOImage.lcSymtab:
            try need(24, "LC_SYMTAB")
            guard image.symbolTable == nil else { throw MachOError.malformed("two LC_SYMTAB load commands") }
            let entrySize = image.is64Bit ? 16 : 12
            let table = MachOSymbolTable(
                symbolsOffset: UInt64(f.u32(at + 8)), count: Int(f.u32(at + 12)), entrySize: entrySize,
                stringsOffset: UInt64(f.u32(at + 16)), stringsSize: UInt64(f.u32(at + 20)))
            let symbolBytes = try Checked.multiply(UInt64(table.count), UInt64(entrySize), "the symbol table size")
            try Checked.within(table.symbolsOffset, symbolBytes, sliceSize, "the symbol table")
            try Checked.within(table.stringsOffset, table.stringsSize, sliceSize, "the symbol string table")
            image.symbolTable = table
        case MachOImage.lcBuildVersion:
            try need(24, "LC_BUILD_VERSION")
            image.platform = MachOImage.platformName(f.u32(at + 8))
            image.minOS = MachOImage.version(f.u32(at + 12))
            image.sdk = MachOImage.version(f.u32(at + 16))
        case let c where MachOImage.versionMinPlatforms[c] != nil:
            try need(16, "LC_VERSION_MIN")
            if image.platform == nil {
                image.platform = MachOImage.versionMinPlatforms[c]
                image.minOS = MachOImage.version(f.u32(at + 8))
                image.sdk = MachOImage.version(f.u32(at + 12))
            }
        case MachOImage.lcIDDylib:
            try need(24, "LC_ID_DYLIB")
            let nameOffset = Int(f.u32(at + 8))
            guard nameOffset >= 24, nameOffset < size else {
                throw MachOError.malformed("LC_ID_DYLIB's name at \(nameOffset) is outside its \(size) bytes")
            }
            let field = f.bytes[(at + nameOffset)..<(at + size)]
            let end = field.firstIndex(of: 0) ?? field.endIndex
            image.installName = String(decoding: field[field.startIndex..<end], as: UTF8.self)
        default:
            break
        }
    }

    mutating func segment(is64: Bool, at: Int, size: Int, index: Int) throws {
        let headerSize = is64 ? 72 : 56
        let sectionSize = is64 ? 80 : 68
        let what = is64 ? "LC_SEGMENT_64" : "LC_SEGMENT"
        guard size >= headerSize else {
            throw MachOError.malformed("\(what) (load command \(index)) has \(size) bytes")
        }
        let name = f.name16(at + 8)
        let vmaddr = is64 ? f.u64(at + 24) : UInt64(f.u32(at + 24))
        let vmsize = is64 ? f.u64(at + 32) : UInt64(f.u32(at + 28))
        let fileOffset = is64 ? f.u64(at + 40) : UInt64(f.u32(at + 32))
        let fileSize = is64 ? f.u64(at + 48) : UInt64(f.u32(at + 36))
        let count = Int(f.u32(at + (is64 ? 64 : 48)))
        _ = try Checked.add(vmaddr, vmsize, "segment \(name)'s address range")
        try Checked.within(fileOffset, fileSize, sliceSize, "segment \(name)")
        guard count <= MachOImage.Limits.maxSections - sectionCount else {
            throw MachOError.malformed("more than \(MachOImage.Limits.maxSections) sections")
        }
        guard count <= (size - headerSize) / sectionSize else {
            throw MachOError.malformed(
                "segment \(name) says \(count) sections, its load command holds \((size - headerSize) / sectionSize)")
        }
        sectionCount += count
        var sections: [MachOSection] = []
        sections.reserveCapacity(count)
        for i in 0..<count {
            let s = at + headerSize + i * sectionSize
            let section = MachOSection(
                segment: f.name16(s + 16), name: f.name16(s),
                address: is64 ? f.u64(s + 32) : UInt64(f.u32(s + 32)),
                size: is64 ? f.u64(s + 40) : UInt64(f.u32(s + 36)),
                fileOffset: UInt64(f.u32(s + (is64 ? 48 : 40))),
                flags: f.u32(s + (is64 ? 64 : 56)))
            _ = try Checked.add(
                section.address, section.size, "section \(section.segment),\(section.name)'s address range")
            if section.hasFileData {
                try Checked.within(
                    section.fileOffset, section.size, sliceSize, "section \(section.segment),\(section.name)")
            }
            sections.append(section)
        }
        image.segments.append(
            MachOSegment(
                name: name, vmaddr: vmaddr, vmsize: vmsize, fileOffset: fileOffset, fileSize: fileSize,
                sections: sections))
    }
}
