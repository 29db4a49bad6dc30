import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

/// The streaming check of an upload's first bytes, on real files built by gcc and objcopy.
@Suite struct ELFPrefixCheckTests {
    /// Feeds `bytes` in pieces of `step`, stopping at the first verdict; returns it and how many bytes it took.
    func check(_ bytes: [UInt8], step: Int) throws -> (ELFPrefixCheck.Verdict, Int) {
        var check = ELFPrefixCheck()
        var fed = 0
        while fed < bytes.count, check.verdict == .undecided {
            let piece = Array(bytes[fed..<min(bytes.count, fed + step)])
            try check.feed(piece)
            fed += piece.count
        }
        try check.finish()
        return (check.verdict, fed)
    }

    @Test func executablesStrippedAndSplitDebugFilesShowTheirBuildIDEarly() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g"])
        let debug = folder.file("crashy.debug")
        let stripped = folder.file("crashy.stripped")
        try Command.check("objcopy", ["--only-keep-debug", binary, debug])
        try Command.check("objcopy", ["--strip-debug", "--strip-unneeded", binary, stripped])
        let hex = try #require(try ELFFixtures.readelfBuildID(binary))
        let id = try #require(BuildID(hex))
        for path in [binary, debug, stripped] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            for step in [1, 7, 4096] {
                let (verdict, fed) = try check(bytes, step: step)
                #expect(verdict == .buildID(id), "\(path) by \(step)")
                #expect(fed < 4096 + step, "\(path): decided after \(fed) of \(bytes.count) bytes")
            }
        }
    }

    @Test func whatCannotBeELFIsRefusedAtTheFirstWrongByte() throws {
        #expect(throws: ELFError.notELF) { try check([UInt8](repeating: 0, count: 1 << 20), step: 1) }
        #expect(throws: ELFError.notELF) { try check(Array("#!/bin/sh\necho hi\n".utf8), step: 3) }
        #expect(throws: (any Error).self) { try check([0x7f, 0x45, 0x4c, 0x46, 9, 1], step: 1) }  // EI_CLASS 9
        // Cut short: refused when the stream ends.
        #expect(throws: (any Error).self) { try check([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1], step: 64) }
        // Only the first wrong byte is needed.
        var one = ELFPrefixCheck()
        #expect(throws: ELFError.notELF) { try one.feed([0x00]) }
    }

    @Test func hostileProgramHeadersNeitherTrapNorDecideWrongly() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g"])
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: binary)))
        // e_phoff = 2^64 - 8, e_phnum = 0xffff, e_phentsize = 0xffff: overflowing sums, left to the final check.
        var bytes = original
        for i in 0..<8 { bytes[32 + i] = i == 0 ? 0xf8 : 0xff }
        bytes[54] = 0xff; bytes[55] = 0xff; bytes[56] = 0xff; bytes[57] = 0xff
        #expect(try check(bytes, step: 100).0 == .headerOnly)
        // A PT_NOTE pointing far past the kept prefix: undecided early, never an out-of-bounds read.
        var far = original
        let phoff = Int(far[32]) | Int(far[33]) << 8
        let phentsize = Int(far[54]) | Int(far[55]) << 8
        let phnum = Int(far[56]) | Int(far[57]) << 8
        for i in 0..<phnum where far[phoff + i * phentsize] == 4 {
            for k in 0..<8 { far[phoff + i * phentsize + 8 + k] = 0xff }  // p_offset
        }
        #expect(try check(far, step: 512).0 == .headerOnly)
    }
}
