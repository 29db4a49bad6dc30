import FaultlineCore
import Foundation
import Testing

/// Identifiers and classification used by sentry-cli's chunk upload.
@Suite struct ChunkUploadTypesTests {
    func facts(_ kinds: Set<DebugFileKind>, _ fileType: String) -> DebugFileFacts {
        DebugFileFacts(
            buildID: BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a"), kinds: kinds, architecture: "x86_64",
            fileType: fileType,
            features: ["symtab"], compressedDebugSections: false)
    }

    @Test func objectClassFollowsWhatTheFileHolds() {
        // gcc -g PIE: ET_DYN with code and DWARF → a library (what sentry-cli itself reports for PIE).
        #expect(DifObjectClass.of(facts([.debuginfo, .executable], "shared_object")) == .lib)
        // Stripped PIE or .so: code only.
        #expect(DifObjectClass.of(facts([.executable], "shared_object")) == .lib)
        // Non-PIE executable.
        #expect(DifObjectClass.of(facts([.debuginfo, .executable], "executable")) == .exe)
        // objcopy --only-keep-debug keeps e_type but drops the code: a debug companion, whatever the type.
        #expect(DifObjectClass.of(facts([.debuginfo], "shared_object")) == .dbg)
        #expect(DifObjectClass.of(facts([.debuginfo], "executable")) == .dbg)
        #expect(DifObjectClass.of(facts([.executable], "relocatable")) == .rel)
        #expect(DifObjectClass.of(facts([.executable], "core")) == .dump)
        #expect(DifObjectClass.of(facts([.executable], "other")) == .other)
        // Only Sentry's object classes exist: sentry-cli 3.8.2 refuses anything else.
        #expect(
            Set(DifObjectClass.allCases.map(\.rawValue)) == [
                "none", "rel", "exe", "lib", "dump", "dbg", "src", "other",
            ])
    }

    @Test func checksumsAreFortyHexDigits() {
        #expect(
            ChunkChecksum("21A2D0CF0000000000000000000000000000AB39")?.rawValue
                == "21a2d0cf0000000000000000000000000000ab39")
        #expect(ChunkChecksum(String(repeating: "a", count: 39)) == nil)
        #expect(ChunkChecksum(String(repeating: "a", count: 41)) == nil)
        #expect(ChunkChecksum("../" + String(repeating: "a", count: 37)) == nil)
        #expect(ChunkChecksum(String(repeating: "g", count: 40)) == nil)
        #expect(
            ChunkChecksum(digest: [UInt8](repeating: 0xab, count: 20))?.rawValue == String(repeating: "ab", count: 20))
        #expect(ChunkChecksum(digest: [UInt8](repeating: 0xab, count: 16)) == nil)
    }

    @Test func difDescriptionsRoundTripThroughTheirStoredForm() throws {
        let dif = DifDescription(
            id: "x", debugID: "ef1aa1ab-e7f7-e2e9-e1bc-84464f53a7e1",
            codeID: BuildID("aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")!,
            cpuName: "x86_64", objectName: "crashy", size: 17968,
            sha1: ChunkChecksum(String(repeating: "1", count: 40))!,
            createdAt: Date(timeIntervalSince1970: 1_795_000_000.5), objectClass: .dbg, features: ["symtab", "debug"])
        let data = try JSONEncoder().encode(dif)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"created_at_ms\":1795000000500"))
        #expect(try JSONDecoder().decode(DifDescription.self, from: data) == dif)
        // A stored form with a broken id is refused, not trusted.
        let broken = Data(text.replacingOccurrences(of: "aba11aef", with: "zz").utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(DifDescription.self, from: broken) }
    }

    // MARK: The assembly plan (the rule book: what is refused before a byte is written)

    func chunk(_ n: Int) -> ChunkChecksum { ChunkChecksum(String(format: "%040x", n))! }
    let limits = ChunkAssemblyPlan.Limits(maxFileBytes: 64 << 20, chunkSize: 8 << 20, maxRepeats: 2, maxParallel: 2)
    let elf = ChunkAssemblyPlan.Head.debugFile(nil)

    func decide(
        _ chunks: [ChunkChecksum], _ stored: [ChunkChecksum: UInt64], head: ChunkAssemblyPlan.Head? = nil,
        quotaLeft: UInt64 = 1 << 40, running: ChunkAssemblyPlan.Running = .init()
    ) -> ChunkAssemblyPlan.Decision {
        ChunkAssemblyPlan.decide(
            chunks, stored: stored, head: head ?? elf, quotaLeft: quotaLeft, running: running, limits: limits)
    }

    @Test func aListIsScreenedBeforeAnyChunkIsLookedUp() {
        #expect(ChunkAssemblyPlan.screen([], limits: limits) == .empty)
        // A 64 MiB file is at most 8 chunks of 8 MiB; a ninth cannot be part of it.
        let nine = (0..<9).map(chunk)
        #expect(
            ChunkAssemblyPlan.screen(nine, limits: limits) == .tooManyChunks(listed: 9, max: 8, maxFileBytes: 64 << 20))
        #expect(ChunkAssemblyPlan.screen(Array(nine.prefix(8)), limits: limits) == nil)
        // issue #39: one chunk listed many times is refused by its count, whatever its size.
        let repeated = [chunk(1), chunk(2), chunk(1), chunk(1)]
        #expect(ChunkAssemblyPlan.screen(repeated, limits: limits) == .repeatedChunk(chunk(1), times: 3, max: 2))
        #expect(ChunkAssemblyPlan.screen([chunk(1), chunk(2), chunk(1)], limits: limits) == nil)
        // A limit that is not a whole number of chunks rounds up; a chunk size of 0 is taken as 1.
        let odd = ChunkAssemblyPlan.Limits(maxFileBytes: 17, chunkSize: 8, maxRepeats: 1, maxParallel: 1)
        #expect(odd.maxChunks == 3)
        #expect(ChunkAssemblyPlan.Limits(maxFileBytes: 5, chunkSize: 0, maxRepeats: 0, maxParallel: 0).maxChunks == 5)
        // The sentences sentry-cli prints name the limit.
        #expect(
            ChunkAssemblyPlan.Refusal.tooManyChunks(listed: 9, max: 8, maxFileBytes: 64 << 20).description.contains(
                "64 MiB"))
        #expect(
            ChunkAssemblyPlan.Refusal.repeatedChunk(chunk(1), times: 3, max: 2).description.contains(chunk(1).rawValue))
    }

    @Test func aFileIsWrittenOnlyWhenItsListedSizesFitTheLimitAndTheQuota() {
        let (a, b) = (chunk(1), chunk(2))
        // Everything stored, within the limits: write exactly the listed sizes (a chunk listed twice counts twice).
        #expect(decide([a, b, a], [a: 8 << 20, b: 100]) == .write(bytes: (16 << 20) + 100))
        // Missing chunks are asked for once each, in the listed order, before anything else is weighed.
        #expect(decide([b, a, b], [:], head: .notADebugFile("x"), quotaLeft: 0) == .missing([b, a]))
        #expect(decide([a, b], [a: 1]) == .missing([b]))
        // Past the largest file, and past 2^64 (checked arithmetic, not a trap).
        #expect(decide([a, b], [a: 60 << 20, b: 5 << 20]) == .refuse(.tooLarge(max: 64 << 20)))
        #expect(decide([a, b], [a: .max, b: 2]) == .refuse(.tooLarge(max: 64 << 20)))
        let unbounded = ChunkAssemblyPlan.Limits(maxFileBytes: .max, chunkSize: 8, maxRepeats: 2, maxParallel: 1)
        #expect(
            ChunkAssemblyPlan.decide(
                [a, b], stored: [a: .max, b: 2], head: elf, quotaLeft: .max, running: .init(), limits: unbounded)
                == .refuse(.tooLarge(max: .max)))
        // Chunks that are all empty make no file (even with no quota left).
        #expect(decide([a, b], [a: 0, b: 0], quotaLeft: 0, running: .init(count: 1, bytes: 5)) == .refuse(.empty))
        // The quota left, less what the project's running assemblies may still write.
        #expect(decide([a], [a: 10 << 20], quotaLeft: 10 << 20) == .write(bytes: 10 << 20))
        #expect(
            decide([a], [a: 10 << 20], quotaLeft: (10 << 20) - 1)
                == .refuse(.overQuota(bytes: 10 << 20, left: (10 << 20) - 1)))
        #expect(
            decide([a], [a: 10 << 20], quotaLeft: 15 << 20, running: .init(count: 1, bytes: 6 << 20))
                == .refuse(.overQuota(bytes: 10 << 20, left: 9 << 20)))
        #expect(
            decide([a], [a: 1], quotaLeft: 5, running: .init(count: 1, bytes: .max))
                == .refuse(.overQuota(bytes: 1, left: 0)))
        #expect(
            ChunkAssemblyPlan.Refusal.overQuota(bytes: 10 << 20, left: (3 << 20) / 2).description.contains("10.0 MiB"))
    }

    @Test func theFirstBytesAndTheRunningAssembliesDecideLast() {
        let a = chunk(1)
        // First bytes that cannot begin a debug file: refused, with why.
        #expect(
            decide([a], [a: 8], head: .notADebugFile("not an ELF file")) == .refuse(.notADebugFile("not an ELF file")))
        #expect(ChunkAssemblyPlan.Refusal.notADebugFile("x").description.contains("not an ELF or Mach-O file"))
        #expect(decide([a], [a: 8], head: .debugFile(BuildID("aba11aef"))) == .write(bytes: 8))
        // The same file already being assembled, or as many of the project's as allowed: ask again later.
        #expect(decide([a], [a: 8], running: .init(count: 1, bytes: 8, sameFile: true)) == .wait)
        #expect(decide([a], [a: 8], running: .init(count: 2, bytes: 0)) == .wait)
        #expect(decide([a], [a: 8], running: .init(count: 1, bytes: 0)) == .write(bytes: 8))
        // A list the screen refuses is refused whatever else is known.
        #expect(decide([a, a, a], [a: 8], running: .init(count: 9)) == .refuse(.repeatedChunk(a, times: 3, max: 2)))
    }
}
