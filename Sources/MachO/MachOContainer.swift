/// One Mach-O image in a file: the whole file when it is thin, one architecture of a fat (universal) file.
public struct MachOSlice: Sendable, Equatable {
    /// `arm64`, `arm64e`, `x86_64`, … (`MachOArchitecture.name`).
    public var architecture: String
    /// `cputype` (`CPU_TYPE_ARM64` is `0x0100000c`).
    public var cpuType: Int32
    /// `cpusubtype`, with its capability bits.
    public var cpuSubtype: Int32
    /// Where the slice's bytes start in the file.
    public var offset: UInt64
    /// How many bytes the slice has.
    public var size: UInt64

    public init(architecture: String, cpuType: Int32, cpuSubtype: Int32, offset: UInt64, size: UInt64) {
        self.architecture = architecture
        self.cpuType = cpuType
        self.cpuSubtype = cpuSubtype
        self.offset = offset
        self.size = size
    }
}

/// Names of Mach-O CPU types, as Apple's tools spell them.
public enum MachOArchitecture {
    static let abi64: Int32 = 0x0100_0000
    static let abi64_32: Int32 = 0x0200_0000
    /// `CPU_TYPE_ARM64`.
    public static let arm64: Int32 = 12 | abi64
    /// `CPU_TYPE_X86_64`.
    public static let x86_64: Int32 = 7 | abi64

    /// `arm64`, `arm64e`, `x86_64`, `x86_64h`, `arm64_32`, `armv7`, `armv7s`, `armv7k`, `i386`, else `cpu-<type>-<subtype>`.
    public static func name(cpuType: Int32, cpuSubtype: Int32) -> String {
        let subtype = cpuSubtype & 0x00ff_ffff  // the high byte holds capability bits (pointer authentication ABI)
        switch cpuType {
        case arm64: return subtype == 2 ? "arm64e" : "arm64"
        case x86_64: return subtype == 8 ? "x86_64h" : "x86_64"
        case 12 | abi64_32: return "arm64_32"
        case 7: return "i386"
        case 12:
            switch subtype {
            case 9: return "armv7"
            case 11: return "armv7s"
            case 12: return "armv7k"
            default: return "arm"
            }
        default: return "cpu-\(cpuType)-\(subtype)"
        }
    }
}

/// The slices of a thin or fat Mach-O file.
///
/// A fat header is big-endian: `0xcafebabe` (32-bit offsets) or `0xcafebabf` (64-bit offsets), then one entry per
/// architecture. Every entry must name a slice inside the file, after the header, not overlapping another, that is
/// itself a thin Mach-O of the same CPU type: a fat file inside a fat file is refused. Java class files share the
/// `0xcafebabe` magic; their version field reads as 45 or more "architectures", past `maxSlices`, so they are refused.
public enum MachOContainer {
    /// At most this many slices in a fat file (Apple's tools agree: `file(1)` takes fewer than 20 as Mach-O).
    public static let maxSlices = 16

    static let fatMagic: UInt32 = 0xcafe_babe
    static let fatMagic64: UInt32 = 0xcafe_babf
    static let magic32: UInt32 = 0xfeed_face
    static let magic64: UInt32 = 0xfeed_facf

    /// What the first four bytes announce.
    public enum Magic: Sendable, Equatable {
        /// `MH_MAGIC` / `MH_MAGIC_64` (little-endian) and `FAT_MAGIC` / `FAT_MAGIC_64` (big-endian).
        case thin32, thin64, fat32, fat64
        /// A big-endian thin Mach-O (PowerPC): recognised, not supported.
        case bigEndianThin
    }

    /// The magic of `head` (at least 4 bytes), or nil when it is none of Mach-O's.
    public static func magic(of head: some Collection<UInt8>) -> Magic? {
        guard head.count >= 4 else { return nil }
        let b = Array(head.prefix(4))
        let big = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
        let little = UInt32(b[3]) << 24 | UInt32(b[2]) << 16 | UInt32(b[1]) << 8 | UInt32(b[0])
        switch (big, little) {
        case (fatMagic, _): return .fat32
        case (fatMagic64, _): return .fat64
        case (_, magic32): return .thin32
        case (_, magic64): return .thin64
        case (magic32, _), (magic64, _): return .bigEndianThin
        default: return nil
        }
    }

    /// Whether `head` (the first bytes of a file, as many as the caller has) can begin a Mach-O file this module
    /// reads: a thin header, or a fat header whose slice table, as far as `head` holds it, is plausible.
    /// - Throws: `MachOError` naming what is wrong; `notMachO` when the magic is not Mach-O's.
    public static func checkHead(_ head: [UInt8]) throws {
        switch magic(of: head) {
        case nil: throw MachOError.notMachO
        case .bigEndianThin: throw MachOError.unsupported("big-endian Mach-O")
        case .thin32, .thin64:
            let headerSize = magic(of: head) == .thin64 ? 32 : 28
            guard head.count >= headerSize else { throw MachOError.truncated("the Mach-O header is cut short") }
            // What `MachOImage.read` would refuse from the header alone.
            let h = MachOFields(bytes: head, bigEndian: false)
            guard h.u32(16) <= MachOImage.Limits.maxLoadCommands, h.u32(20) <= MachOImage.Limits.maxCommandBytes else {
                throw MachOError.malformed("\(h.u32(16)) load commands in \(h.u32(20)) bytes (past the limits)")
            }
        case .fat32, .fat64:
            guard head.count >= 8 else { throw MachOError.truncated("the fat header is cut short") }
            let count = MachOFields(bytes: head, bigEndian: true).u32(4)
            guard count >= 1, count <= maxSlices else {
                throw MachOError.malformed("a fat file with \(count) architectures (1–\(maxSlices) are read)")
            }
        }
    }

    /// The slices of a file of `size` bytes, read through `read`: one for a thin file, one per architecture of a fat
    /// file, in the fat table's order.
    /// - Throws: `MachOError` when the file is not Mach-O, or its fat table is damaged or hostile.
    public static func slices(size: UInt64, read: MachOReadBytes) throws -> [MachOSlice] {
        guard size >= 4 else { throw MachOError.notMachO }
        let head = try read(0, 4)
        switch magic(of: head) {
        case nil: throw MachOError.notMachO
        case .bigEndianThin: throw MachOError.unsupported("big-endian Mach-O")
        case .thin32, .thin64:
            let header = try thinHeader(at: 0, limit: size, read: read)
            return [
                MachOSlice(
                    architecture: MachOArchitecture.name(cpuType: header.cpuType, cpuSubtype: header.cpuSubtype),
                    cpuType: header.cpuType, cpuSubtype: header.cpuSubtype, offset: 0, size: size)
            ]
        case .fat32, .fat64:
            return try fatSlices(is64: magic(of: head) == .fat64, size: size, read: read)
        }
    }

    static func fatSlices(is64: Bool, size: UInt64, read: MachOReadBytes) throws -> [MachOSlice] {
        try Checked.within(0, 8, size, "the fat header")
        let count = Int(MachOFields(bytes: try read(0, 8), bigEndian: true).u32(4))
        guard count >= 1, count <= maxSlices else {
            throw MachOError.malformed("a fat file with \(count) architectures (1–\(maxSlices) are read)")
        }
        let entrySize = is64 ? 32 : 20
        let tableEnd = UInt64(8 + count * entrySize)
        try Checked.within(0, tableEnd, size, "the fat architecture table")
        let table = MachOFields(bytes: try read(8, count * entrySize), bigEndian: true)
        var slices: [MachOSlice] = []
        for i in 0..<count {
            let at = i * entrySize
            let cpuType = Int32(bitPattern: table.u32(at))
            let cpuSubtype = Int32(bitPattern: table.u32(at + 4))
            let offset = is64 ? table.u64(at + 8) : UInt64(table.u32(at + 8))
            let sliceSize = is64 ? table.u64(at + 16) : UInt64(table.u32(at + 12))
            guard sliceSize > 0 else { throw MachOError.malformed("fat architecture \(i) is empty") }
            guard offset >= tableEnd else {
                throw MachOError.malformed("fat architecture \(i) starts inside the fat header")
            }
            try Checked.within(offset, sliceSize, size, "fat architecture \(i)")
            for (j, other) in slices.enumerated()
            where offset < other.offset + other.size && other.offset < offset + sliceSize {
                throw MachOError.malformed("fat architectures \(j) and \(i) overlap")
            }
            switch magic(of: try read(offset, 4)) {
            case .fat32, .fat64: throw MachOError.unsupported("a fat file inside fat architecture \(i)")
            case .thin32, .thin64: break
            case .bigEndianThin: throw MachOError.unsupported("big-endian Mach-O in fat architecture \(i)")
            case nil: throw MachOError.malformed("fat architecture \(i) is not a Mach-O image")
            }
            let header = try thinHeader(at: offset, limit: offset + sliceSize, read: read)
            guard header.cpuType == cpuType else {
                throw MachOError.malformed(
                    "fat architecture \(i) says CPU type \(cpuType), its header \(header.cpuType)")
            }
            let name = MachOArchitecture.name(cpuType: cpuType, cpuSubtype: cpuSubtype)
            guard !slices.contains(where: { $0.cpuType == cpuType && $0.architecture == name }) else {
                throw MachOError.malformed("fat file with two \(name) architectures")
            }
            slices.append(
                MachOSlice(
                    architecture: name, cpuType: cpuType, cpuSubtype: cpuSubtype, offset: offset, size: sliceSize))
        }
        return slices
    }

    /// The fixed fields of the thin header at `offset`, checked to fit before `limit`.
    static func thinHeader(at offset: UInt64, limit: UInt64, read: MachOReadBytes) throws -> MachOHeader {
        try Checked.within(offset, 4, limit, "the Mach-O magic")
        let is64: Bool
        switch magic(of: try read(offset, 4)) {
        case .thin64: is64 = true
        case .thin32: is64 = false
        case .bigEndianThin: throw MachOError.unsupported("big-endian Mach-O")
        default: throw MachOError.notMachO
        }
        let headerSize = is64 ? 32 : 28
        try Checked.within(offset, UInt64(headerSize), limit, "the Mach-O header")
        let h = MachOFields(bytes: try read(offset, headerSize), bigEndian: false)
        return MachOHeader(
            is64: is64, cpuType: Int32(bitPattern: h.u32(4)), cpuSubtype: Int32(bitPattern: h.u32(8)),
            fileType: h.u32(12),
            commandCount: h.u32(16), commandsSize: h.u32(20), flags: h.u32(24))
    }
}

/// `mach_header(_64)`'s fields.
struct MachOHeader {
    var is64: Bool
    var cpuType: Int32
    var cpuSubtype: Int32
    var fileType: UInt32
    var commandCount: UInt32
    var commandsSize: UInt32
    var flags: UInt32
    var size: Int { is64 ? 32 : 28 }
}
