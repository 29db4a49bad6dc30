import Foundation
import Symbolication
import TestSupport
import Testing

/// Damaged and hostile Mach-O files: opening may fail (a `SymbolicationError`) or find less, lookups may find
/// nothing, but the process never crashes and a symbol-table answer never names something outside `__text`.
@Suite struct HostileMachOTests {
    static func probe(_ path: String, _ addresses: [UInt64]) {
        guard let module = try? DebugModule(path: path) else { return }
        for address in addresses {
            _ = module.resolve(fileAddress: address)
            _ = module.resolve(moduleOffset: address)
        }
    }

    static func addresses(_ build: AppleBuilds.Build) -> [UInt64] {
        [
            0, 1, build.textVMAddr, build.text.lowerBound, build.text.upperBound - 1, build.text.upperBound, .max,
            .max - 1,
        ]
            + build.functions.map { $0.address + 2 }
    }

    @Test(arguments: [
        AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 4), AppleBuilds.Request(.swift, .x86_64, .macOS),
        AppleBuilds.Request(.cpp, .arm64, .iOS, dylib: true),
    ])
    func truncatedAndCorruptedFilesNeverCrash(_ request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        let folder = try TempFolder("hostile-macho")
        let addresses = Self.addresses(build)
        var random = SystemRandomNumberGenerator()
        for original in [build.dwarfFile, build.stripped, build.binary] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: original)))
            // Cut short everywhere along the file, closely at the start (the header and load commands).
            let cuts =
                Array(stride(from: 0, to: min(bytes.count, 2048), by: 16))
                + Array(stride(from: 2048, to: bytes.count, by: 257))
            for cut in cuts {
                let path = folder.file("cut")
                try Data(bytes.prefix(cut)).write(to: URL(fileURLWithPath: path))
                Self.probe(path, addresses)
            }
            // Random bytes overwritten: in the load commands, and anywhere.
            for round in 0..<150 {
                var damaged = bytes
                let span = round % 2 == 0 ? min(bytes.count, 4096) : bytes.count
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    damaged[Int.random(in: 0..<span, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
                let path = folder.file("damaged")
                try Data(damaged).write(to: URL(fileURLWithPath: path))
                Self.probe(path, addresses)
            }
        }
    }

    @Test func hostileSymbolTablesAreBoundedAndStayInText() throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: build.stripped)))
        // Find LC_SYMTAB (cmd 2) and aim every string index past the string table, then at its last byte (a name
        // without a terminating NUL).
        let commands = Int(UInt32(bytes[16]) | UInt32(bytes[17]) << 8)
        var at = 32
        var symtab: (symoff: Int, nsyms: Int, stroff: Int, strsize: Int)?
        for _ in 0..<commands {
            func u32(_ i: Int) -> Int {
                Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
            }
            if u32(at) == 2 { symtab = (u32(at + 8), u32(at + 12), u32(at + 16), u32(at + 20)) }
            at += u32(at + 4)
        }
        let table = try #require(symtab)
        #expect(table.nsyms > 0)
        let folder = try TempFolder("hostile-macho")
        for strx in [UInt32(table.strsize), UInt32(table.strsize - 1), .max] {
            for i in 0..<table.nsyms {
                withUnsafeBytes(of: strx.littleEndian) {
                    bytes.replaceSubrange((table.symoff + i * 16)..<(table.symoff + i * 16 + 4), with: $0)
                }
            }
            bytes[table.stroff + table.strsize - 1] = 0x41
            let path = folder.file("strx-\(strx)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let module = try DebugModule(path: path)
            for address in Self.addresses(build) {
                let name = module.resolve(fileAddress: address)?.frames.first?.function
                #expect(name == nil || name == "A", "\(name ?? "")")
            }
        }
        // A symbol count far past the file: refused, not read.
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: build.stripped)))
        var commandAt = 32
        for _ in 0..<commands {
            let cmd = Int(bytes[commandAt]) | Int(bytes[commandAt + 1]) << 8
            let size = Int(bytes[commandAt + 4]) | Int(bytes[commandAt + 5]) << 8
            if cmd == 2 { bytes.replaceSubrange((commandAt + 12)..<(commandAt + 16), with: [0xff, 0xff, 0xff, 0x7f]) }
            commandAt += size
        }
        let path = folder.file("nsyms")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(throws: SymbolicationError.self) { try DebugModule(path: path) }
    }
}
