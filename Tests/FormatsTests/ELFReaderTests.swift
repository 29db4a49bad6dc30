import FaultlineCore
import Formats
import Foundation
import TestSupport
import Testing

/// ELF inspection on real binaries built by the test with gcc and objcopy, compared with `readelf`.
@Suite struct ELFReaderTests {
    func inspect(_ path: String) throws -> ELFInfo {
        try ELFReader.inspect(MemoryByteSource(Array(try Data(contentsOf: URL(fileURLWithPath: path)))))
    }

    @Test func unstrippedPIEBinaryHasEverything() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(
            ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g", "-Wl,--build-id=sha1"])
        let info = try inspect(binary)
        #expect(info.buildID?.rawValue == (try ELFFixtures.readelfBuildID(binary)))
        #expect(info.buildID?.rawValue.count == 40)
        #expect(info.fileType == .sharedObject)  // PIE
        #expect(info.architecture == "x86_64")
        #expect(info.hasDebugInfo && info.hasLineTable && info.hasCode && info.hasSymbolTable && info.hasUnwindInfo)
        #expect(info.servesDebugInfo && info.servesExecutable)
        #expect(info.features == ["symtab", "debug", "unwind"])
    }

    @Test func splitDebugFileAndStrippedBinaryShareTheBuildID() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g"])
        let debug = folder.file("crashy.debug")
        let stripped = folder.file("crashy.stripped")
        try Command.check("objcopy", ["--only-keep-debug", binary, debug])
        try Command.check("objcopy", ["--strip-debug", "--strip-unneeded", binary, stripped])

        let full = try inspect(binary)
        let d = try inspect(debug)
        let s = try inspect(stripped)
        #expect(d.buildID == full.buildID)
        #expect(s.buildID == full.buildID)
        #expect(d.hasDebugInfo && !d.hasCode)  // .text is NOBITS in a split debug file
        #expect(d.servesDebugInfo && !d.servesExecutable)
        #expect(!s.hasDebugInfo && s.hasCode && s.hasDynamicSymbols && !s.hasSymbolTable)
        #expect(s.servesExecutable && !s.servesDebugInfo)
        #expect(s.features == ["symtab", "unwind"])
    }

    @Test func compressedDebugSectionsAndNonPIEExecutables() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(
            ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O0", "-g", "-no-pie"])
        let compressed = folder.file("crashy.z")
        try Command.check("objcopy", ["--compress-debug-sections=zlib", binary, compressed])
        let info = try inspect(compressed)
        #expect(info.fileType == .executable)
        #expect(info.hasCompressedDebugSections)
        #expect(info.hasDebugInfo)
        #expect(info.buildID == (try inspect(binary)).buildID)
        #expect(!(try inspect(binary)).hasCompressedDebugSections)
    }

    @Test func aBinaryWithoutBuildIDHasNone() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(
            ELFFixtures.crashyC, name: "plain", in: folder, flags: ["-g", "-Wl,--build-id=none"])
        #expect(try inspect(binary).buildID == nil)
        #expect(try ELFFixtures.readelfBuildID(binary) == nil)
    }

    @Test func notELFIsRefused() {
        for bytes: [UInt8] in [[], Array("hello world, not an ELF file".utf8), [0x7f, 0x45, 0x4c, 0x46]] {
            #expect(throws: ELFError.self) { try ELFReader.inspect(MemoryByteSource(bytes)) }
        }
    }

    /// A corpus of broken files: every truncation point of the headers, and seeded random corruption.
    /// Each must end in a value or an `ELFError`; a crash fails the whole test run.
    @Test func brokenFilesNeverCrashTheReader() throws {
        let folder = try TempFolder()
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g"])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: binary)))
        var refused = 0
        var cuts =
            Array(stride(from: 0, to: 2048, by: 7)) + Array(stride(from: 2048, to: bytes.count, by: bytes.count / 97))
        cuts.append(bytes.count - 1)
        for cut in cuts {
            do { _ = try ELFReader.inspect(MemoryByteSource(Array(bytes[..<cut]))) } catch is ELFError { refused += 1 }
        }
        #expect(refused > cuts.count / 2)  // most cuts lose the section table, which sits at the end

        var rng = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        func next() -> UInt64 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return seed >> 33
        }
        let sectionTable = Int(bytes.count) - 64 * 40  // roughly where the section headers are
        for _ in 0..<500 {
            var broken = bytes
            for _ in 0..<(1 + Int(next() % 8)) {
                // Hit the ELF header, the program headers, or the section header table.
                let region = next() % 3
                let at =
                    region == 0
                    ? Int(next() % 64)
                    : region == 1 ? 64 + Int(next() % 512) : max(0, sectionTable) + Int(next() % 2560)
                if at < broken.count { broken[at] = UInt8(truncatingIfNeeded: next()) }
            }
            _ = try? ELFReader.inspect(MemoryByteSource(broken))
        }
        var junk = [UInt8](repeating: 0, count: 4096)
        for i in junk.indices { junk[i] = UInt8(truncatingIfNeeded: next()) }
        junk.replaceSubrange(0..<6, with: [0x7f, 0x45, 0x4c, 0x46, 2, 1])
        _ = try? ELFReader.inspect(MemoryByteSource(junk))
    }
}
