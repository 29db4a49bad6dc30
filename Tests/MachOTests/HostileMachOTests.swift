import FaultlineCore
import Testing

@testable import MachO

/// Hand-made bytes: every damaged or hostile header ends in a `MachOError` naming what is wrong, never a crash, a
/// wrapped offset or a huge allocation.
@Suite struct HostileMachOTests {
    @Test func bytesThatAreNoMachOAreNotMachO() {
        #expect(throws: MachOError.notMachO) { try slices(Array("\u{7f}ELF\u{2}\u{1}\u{1}\u{0}".utf8)) }
        #expect(throws: MachOError.notMachO) { try slices([0xcf, 0xfa]) }
        #expect(throws: MachOError.notMachO) { try slices([]) }
        #expect(throws: MachOError.unsupported("big-endian Mach-O")) {
            try slices([0xfe, 0xed, 0xfa, 0xcf] + zeros(60))
        }
    }

    @Test func aWellFormedHandMadeImageReads() throws {
        let bytes = Thin(commands: [
            uuid(), symtab(symoff: 200, nsyms: 1, stroff: 216, strsize: 8),
            segment(
                "__TEXT",
                sections: [
                    section("__text", "__TEXT", addr: 0x1000, size: 8, offset: 224)
                ]),
        ]).bytes(size: 240)
        let image = try image(bytes)
        #expect(image.buildID?.rawValue == "00112233445566778899aabbccddeeff")
        #expect(image.hasCode && image.hasSymbols)
    }

    @Test func cutShortHeadersAreTruncated() {
        let whole = Thin(commands: [uuid()]).bytes(size: 64)
        #expect(throws: MachOError.self) { try image(Array(whole.prefix(20))) }
        #expect(throws: MachOError.self) { try image(Array(whole.prefix(40))) }  // sizeofcmds past the end
    }

    @Test func loadCommandSizesAreChecked() {
        var zero = Thin(commands: [uuid()])
        zero.commands[0].replace(at: 4, u32: 0)
        #expect(throws: MachOError.malformed("load command 0 has size 0")) { try image(zero.bytes(size: 64)) }
        var odd = Thin(commands: [uuid()])
        odd.commands[0].replace(at: 4, u32: 26)
        #expect(throws: MachOError.self) { try image(odd.bytes(size: 64)) }
        var past = Thin(commands: [uuid()])
        past.commands[0].replace(at: 4, u32: 1024)
        #expect(throws: MachOError.self) { try image(past.bytes(size: 2048)) }
        var many = Thin(commands: [uuid()])
        many.ncmds = 5  // more commands than sizeofcmds holds
        #expect(throws: MachOError.self) { try image(many.bytes(size: 64)) }
        var huge = Thin(commands: [uuid()])
        huge.ncmds = 0xffff_ffff
        #expect(throws: MachOError.malformed("4294967295 load commands (at most 8192 are read)")) {
            try image(huge.bytes(size: 64))
        }
        var shortUUID = Thin(commands: [uuid()])
        shortUUID.commands[0] = Array(shortUUID.commands[0].prefix(16))
        shortUUID.commands[0].replace(at: 4, u32: 16)
        #expect(throws: MachOError.self) { try image(shortUUID.bytes(size: 64)) }
        #expect(throws: MachOError.malformed("two LC_UUID load commands")) {
            try image(Thin(commands: [uuid(), uuid()]).bytes(size: 128))
        }
    }

    @Test func segmentsSectionsAndSymbolTablesMustLieInsideTheSlice() {
        let outside = section("__text", "__TEXT", addr: 0x1000, size: 0x100, offset: 0xffff_fff0)
        #expect(throws: MachOError.self) {
            try image(Thin(commands: [segment("__TEXT", sections: [outside])]).bytes(size: 512))
        }
        var lying = segment("__TEXT", sections: [section("__text", "__TEXT", addr: 0, size: 4, offset: 300)])
        lying.replace(at: 64, u32: 1000)  // nsects past what cmdsize holds
        #expect(throws: MachOError.self) { try image(Thin(commands: [lying]).bytes(size: 512)) }
        var wideSegment = segment("__TEXT", sections: [])
        wideSegment.replace(at: 48, u64: UInt64.max)  // filesize
        #expect(throws: MachOError.self) { try image(Thin(commands: [wideSegment]).bytes(size: 512)) }
        var wrappingAddress = segment("__TEXT", sections: [])
        wrappingAddress.replace(at: 24, u64: UInt64.max - 1)
        wrappingAddress.replace(at: 32, u64: 16)
        #expect(throws: MachOError.malformed("segment __TEXT's address range overflows")) {
            try image(Thin(commands: [wrappingAddress]).bytes(size: 512))
        }
        #expect(throws: MachOError.self) {
            try image(Thin(commands: [symtab(symoff: 100, nsyms: 0x1000_0000, stroff: 0, strsize: 0)]).bytes(size: 512))
        }
        #expect(throws: MachOError.self) {
            try image(Thin(commands: [symtab(symoff: 0, nsyms: 0, stroff: 500, strsize: 0xffff_ffff)]).bytes(size: 512))
        }
        // A zero-fill section has no bytes in the file, whatever its offset says.
        let bss = section("__bss", "__DATA", addr: 0x2000, size: 0x10_0000, offset: 0xffff_0000, flags: 0x1)
        #expect((try? image(Thin(commands: [segment("__DATA", sections: [bss])]).bytes(size: 512))) != nil)
    }

    @Test func fatTablesAreChecked() throws {
        let thin = Thin(commands: [uuid()]).bytes(size: 64)
        let arm64 = MachOArchitecture.arm64
        // A good one first.
        let good = fat(
            [(arm64, 0, 4096, UInt64(thin.count)), (MachOArchitecture.x86_64, 3, 8192, UInt64(thin.count))],
            slices: [4096: thin, 8192: Thin(commands: [uuid()], cpu: MachOArchitecture.x86_64).bytes(size: 64)])
        #expect(try slices(good).map(\.architecture) == ["arm64", "x86_64"])
        #expect(try slices(fat([(arm64, 0, 4096, UInt64(thin.count))], slices: [4096: thin], is64: true)).count == 1)

        #expect(throws: MachOError.malformed("a fat file with 0 architectures (1–16 are read)")) {
            try slices(fat([], slices: [:]))
        }
        // A Java class file: 0xcafebabe, then its version (52 for Java 8) where the count would be.
        #expect(throws: MachOError.self) { try slices([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52] + zeros(64)) }
        #expect(throws: MachOError.self) { try slices(fat([(arm64, 0, 4096, 100_000)], slices: [4096: thin])) }
        #expect(throws: MachOError.self) { try slices(fat([(arm64, 0, 8, UInt64(thin.count))], slices: [:])) }
        #expect(throws: MachOError.self) {
            try slices(fat([(arm64, 0, 4096, 64), (MachOArchitecture.x86_64, 3, 4100, 64)], slices: [4096: thin]))
        }
        #expect(throws: MachOError.self) {
            try slices(fat([(MachOArchitecture.x86_64, 3, 4096, UInt64(thin.count))], slices: [4096: thin]))  // CPU mismatch
        }
        #expect(throws: MachOError.self) {
            try slices(fat([(arm64, 0, UInt64.max - 8, 64)], slices: [:], is64: true))  // offset + size wraps
        }
        let inner = fat([(arm64, 0, 4096, UInt64(thin.count))], slices: [4096: thin])
        #expect(throws: MachOError.unsupported("a fat file inside fat architecture 0")) {
            try slices(fat([(arm64, 0, 4096, UInt64(inner.count))], slices: [4096: inner]))
        }
        #expect(throws: MachOError.malformed("fat file with two arm64 architectures")) {
            try slices(fat([(arm64, 0, 4096, 64), (arm64, 0, 8192, 64)], slices: [4096: thin, 8192: thin]))
        }
        #expect(throws: MachOError.malformed("fat architecture 0 is empty")) {
            try slices(fat([(arm64, 0, 4096, 0)], slices: [4096: thin]))
        }
    }

    @Test func headChecksRefuseWhatCannotBeginAMachO() {
        #expect(throws: MachOError.notMachO) { try MachOContainer.checkHead(Array("PK\u{3}\u{4}".utf8)) }
        #expect(throws: MachOError.self) { try MachOContainer.checkHead([0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 52]) }
        #expect(throws: MachOError.self) { try MachOContainer.checkHead([0xcf, 0xfa, 0xed, 0xfe, 12, 0, 0, 1]) }
        #expect(throws: Never.self) { try MachOContainer.checkHead(Thin(commands: [uuid()]).bytes(size: 64)) }
    }

    @Test func symbolNamesOutsideTheStringTableAreEmpty() throws {
        var entry = [UInt8](repeating: 0, count: 16)
        entry.replace(at: 0, u32: 0xffff_fff0)  // n_strx
        entry[4] = 0x0f
        let bytes = Thin(commands: [symtab(symoff: 200, nsyms: 1, stroff: 216, strsize: 4)]).bytes(
            size: 220, at: [200: entry])
        let image = try image(bytes)
        let symbols = try image.symbols(read: memoryReader(bytes))
        #expect(symbols.count == 1 && symbols[0].name == "")
        #expect(throws: MachOError.self) { try image.symbols(maxSymbols: 0, read: memoryReader(bytes)) }
    }

    @Test func aNameWithoutItsNULIsCutAtTheNameLimit() throws {
        // Two symbols whose names both start at the front of a string table with no NUL in it.
        var entries = [UInt8](repeating: 0, count: 32)
        entries[4] = 0x0f
        entries[20] = 0x0f
        let strings = [UInt8](repeating: UInt8(ascii: "a"), count: 64)
        let bytes = Thin(commands: [symtab(symoff: 200, nsyms: 2, stroff: 232, strsize: 64)])
            .bytes(size: 296, at: [200: entries, 232: strings])
        let image = try image(bytes)
        let symbols = try image.symbols(maxNameBytes: 10, read: memoryReader(bytes))
        #expect(symbols.map(\.name) == [String(repeating: "a", count: 10), String(repeating: "a", count: 10)])
        #expect(try image.symbols(read: memoryReader(bytes)).map(\.name.count) == [64, 64])
    }

    @Test func namesThatAddUpPastTheBudgetAreRefused() throws {
        // 20,000 symbols whose names all start at the front of a 64 KiB string table without a NUL: 1.25 GiB of
        // names from 384 KiB of file, refused once they pass four times the table (at least 1 MiB).
        let count = 20_000
        var entries = [UInt8](repeating: 0, count: count * 16)
        for i in 0..<count { entries[i * 16 + 4] = 0x0f }
        let strings = [UInt8](repeating: UInt8(ascii: "a"), count: 1 << 16)
        let stroff = 200 + entries.count
        let bytes = Thin(commands: [symtab(symoff: 200, nsyms: UInt32(count), stroff: UInt32(stroff), strsize: 1 << 16)]
        )
        .bytes(size: stroff + strings.count, at: [200: entries, stroff: strings])
        let image = try image(bytes)
        #expect(throws: MachOError.self) { try image.symbols(read: memoryReader(bytes)) }
    }
}

// MARK: hand-made Mach-O bytes

func slices(_ bytes: [UInt8]) throws -> [MachOSlice] {
    try MachOContainer.slices(size: UInt64(bytes.count), read: memoryReader(bytes))
}

func image(_ bytes: [UInt8]) throws -> MachOImage {
    try MachOImage.read(slice: try #require(try slices(bytes).first), read: memoryReader(bytes))
}

func memoryReader(_ bytes: [UInt8]) -> MachOReadBytes { MachOContainer.reader(over: bytes) }

func zeros(_ n: Int) -> [UInt8] { [UInt8](repeating: 0, count: n) }

extension [UInt8] {
    mutating func replace(at: Int, u32: UInt32) {
        for i in 0..<4 { self[at + i] = UInt8(truncatingIfNeeded: u32 >> (8 * i)) }
    }
    mutating func replace(at: Int, u64: UInt64) {
        for i in 0..<8 { self[at + i] = UInt8(truncatingIfNeeded: u64 >> (8 * i)) }
    }
    mutating func replaceBig(at: Int, u32: UInt32) {
        for i in 0..<4 { self[at + i] = UInt8(truncatingIfNeeded: u32 >> (8 * (3 - i))) }
    }
    mutating func replaceBig(at: Int, u64: UInt64) {
        for i in 0..<8 { self[at + i] = UInt8(truncatingIfNeeded: u64 >> (8 * (7 - i))) }
    }
    static func u32(_ v: UInt32) -> [UInt8] { var b = zeros(4); b.replace(at: 0, u32: v); return b }
    static func u64(_ v: UInt64) -> [UInt8] { var b = zeros(8); b.replace(at: 0, u64: v); return b }
    static func name16(_ s: String) -> [UInt8] { Array(s.utf8) + zeros(16 - s.utf8.count) }
}

/// A thin 64-bit little-endian Mach-O made of `commands`.
struct Thin {
    var commands: [[UInt8]]
    var cpu: Int32 = MachOArchitecture.arm64
    var ncmds: UInt32?
    var fileType: UInt32 = 2

    init(commands: [[UInt8]], cpu: Int32 = MachOArchitecture.arm64) {
        self.commands = commands
        self.cpu = cpu
    }

    /// The header and commands, zero-padded to `size`, with `at` pieces written at their offsets.
    func bytes(size: Int, at pieces: [Int: [UInt8]] = [:]) -> [UInt8] {
        let body: [UInt8] = commands.flatMap { $0 }
        let header: [[UInt8]] = [
            .u32(0xfeed_facf), .u32(UInt32(bitPattern: cpu)), .u32(0), .u32(fileType),
            .u32(ncmds ?? UInt32(commands.count)),
            .u32(UInt32(body.count)), .u32(0), .u32(0),
        ]
        var out: [UInt8] = header.flatMap { $0 } + body
        if out.count < size { out += zeros(size - out.count) }
        for (offset, piece) in pieces { out.replaceSubrange(offset..<(offset + piece.count), with: piece) }
        return out
    }
}

func joined(_ parts: [[UInt8]]) -> [UInt8] { parts.flatMap { $0 } }

func uuid() -> [UInt8] { joined([.u32(0x1b), .u32(24), (0..<16).map { UInt8($0 * 0x11) }]) }

func symtab(symoff: UInt32, nsyms: UInt32, stroff: UInt32, strsize: UInt32) -> [UInt8] {
    joined([.u32(0x2), .u32(24), .u32(symoff), .u32(nsyms), .u32(stroff), .u32(strsize)])
}

func segment(_ name: String, sections: [[UInt8]]) -> [UInt8] {
    joined([
        .u32(0x19), .u32(UInt32(72 + 80 * sections.count)), .name16(name), .u64(0), .u64(0x1_0000), .u64(0), .u64(0),
        .u32(5),
        .u32(5), .u32(UInt32(sections.count)), .u32(0), joined(sections),
    ])
}

func section(_ name: String, _ segment: String, addr: UInt64, size: UInt64, offset: UInt32, flags: UInt32 = 0)
    -> [UInt8]
{
    joined([
        .name16(name), .name16(segment), .u64(addr), .u64(size), .u32(offset), .u32(2), .u32(0), .u32(0), .u32(flags),
        .u32(0),
        .u32(0), .u32(0),
    ])
}

/// A fat file with `archs` (cpu, subtype, offset, size) and the `slices` bytes written at their offsets.
func fat(_ archs: [(Int32, Int32, UInt64, UInt64)], slices: [Int: [UInt8]], is64: Bool = false) -> [UInt8] {
    let end = slices.map { $0.key + $0.value.count }.max() ?? 64
    var out = zeros(Swift.max(end, 8 + archs.count * (is64 ? 32 : 20)))
    out.replaceBig(at: 0, u32: is64 ? 0xcafe_babf : 0xcafe_babe)
    out.replaceBig(at: 4, u32: UInt32(archs.count))
    for (i, arch) in archs.enumerated() {
        let at = 8 + i * (is64 ? 32 : 20)
        out.replaceBig(at: at, u32: UInt32(bitPattern: arch.0))
        out.replaceBig(at: at + 4, u32: UInt32(bitPattern: arch.1))
        if is64 {
            out.replaceBig(at: at + 8, u64: arch.2)
            out.replaceBig(at: at + 16, u64: arch.3)
        } else {
            out.replaceBig(at: at + 8, u32: UInt32(truncatingIfNeeded: arch.2))
            out.replaceBig(at: at + 12, u32: UInt32(truncatingIfNeeded: arch.3))
        }
    }
    for (offset, piece) in slices { out.replaceSubrange(offset..<(offset + piece.count), with: piece) }
    return out
}
