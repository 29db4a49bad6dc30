import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// `DebugModule` indexes a compilation unit's functions only when an address first lands in it, keeps what it
/// built, and stays within its byte bound; `ModuleCache` accounts what was built. Checked on a program of
/// several C files built by the test with gcc, against llvm-symbolizer.
@Suite struct LazyIndexTests {
    /// Four translation units, each with inlined helpers, and the names of one function in each.
    static let sources: [(file: String, function: String, text: String)] = (0..<4).map { i in
        let text = """
            static inline int helper\(i)(int x) { return x * \(i + 3) + (x >> 2); }
            static inline int twice\(i)(int x) { return helper\(i)(x) + helper\(i)(x + 1); }
            __attribute__((noinline)) int work\(i)(int a) {
                int s = 0;
                for (int k = 0; k < a; k++) s += twice\(i)(k ^ a);
                return s;
            }
            __attribute__((noinline)) int other\(i)(int a) { return work\(i)(a) - twice\(i)(a); }
            """
        return ("unit\(i).c", "work\(i)", text)
    }

    /// Builds the program with `gcc -O2 -g` (one CU per file, plus main's).
    func build(in folder: TempFolder) throws -> String {
        var files: [String] = []
        for source in Self.sources { files.append(try folder.write(source.file, source.text)) }
        let calls = (0..<Self.sources.count).map { "other\($0)(argc + \($0))" }.joined(separator: " + ")
        let declarations = (0..<Self.sources.count).map { "int other\($0)(int);" }.joined(separator: "\n")
        files.append(
            try folder.write("main.c", "\(declarations)\nint main(int argc, char **argv) { return \(calls); }\n"))
        let binary = folder.file("multi")
        try Command.check("gcc", ["-O2", "-g", "-o", binary] + files)
        return binary
    }

    func address(of symbol: String, in binary: String) throws -> UInt64 {
        try #require(try HostileELF.address(of: symbol, in: binary))
    }

    @Test func oneLookupIndexesOnlyItsUnitAndEveryUnitStillAgreesWithLLVMSymbolizer() throws {
        let folder = try TempFolder("lazy-index")
        let binary = try build(in: folder)
        let module = try DebugModule(path: binary)
        // Given the module just opened: every unit known, none indexed.
        #expect(module.unitCount >= Self.sources.count + 1)
        #expect(module.indexedUnitCount == 0)
        let opened = module.indexedBytes

        // When one address of unit2.c resolves: only that unit is indexed.
        let work2 = try address(of: "work2", in: binary)
        let frames = try #require(module.resolve(fileAddress: work2 + 1)).frames
        #expect(frames.last?.function == "work2")
        #expect(frames.last?.file?.hasSuffix("unit2.c") == true)
        #expect(module.indexedUnitCount == 1)
        #expect(module.indexedBytes > opened)
        // More addresses of the same unit index nothing more.
        let other2 = try address(of: "other2", in: binary)
        #expect(module.resolve(fileAddress: other2)?.frames.last?.function == "other2")
        #expect(module.indexedUnitCount == 1)

        // Then every byte of every function, through the same module, agrees with llvm-symbolizer, and each unit
        // with code got indexed on the way.
        let (checked, mismatches) = try LLVMSymbolizerAgreementTests().compare(binary, step: 1, module: module)
        #expect(checked > 200)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        #expect(module.indexedUnitCount >= Self.sources.count + 1)
    }

    @Test func aModuleOverItsByteBoundDropsOtherUnitsAndStillAgrees() throws {
        let folder = try TempFolder("lazy-bound")
        let binary = try build(in: folder)
        // A bound of one byte: every unit indexed drops the others first.
        let module = try DebugModule(path: binary, maxIndexBytes: 1)
        for i in 0..<Self.sources.count {
            let work = try address(of: "work\(i)", in: binary)
            #expect(module.resolve(fileAddress: work + 1)?.frames.last?.function == "work\(i)")
            #expect(module.indexedUnitCount == 1)
        }
        let (checked, mismatches) = try LLVMSymbolizerAgreementTests().compare(binary, step: 1, module: module)
        #expect(checked > 200)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        #expect(module.indexedUnitCount == 1)
    }

    @Test func theModuleCacheAccountsWhatLookupsBuilt() async throws {
        let folder = try TempFolder("lazy-cache")
        let binary = try build(in: folder)
        let id = try #require(try ELFFixtures.readelfBuildID(binary).flatMap { BuildID($0) })
        let cache = ModuleCache(capacity: 4) { buildID, _, _ in buildID == id ? binary : nil }
        let project = ProjectID(1)
        var accounted: [UInt64] = []
        for i in 0..<Self.sources.count {
            let work = try address(of: "work\(i)", in: binary)
            guard case .resolved(let frames) = await cache.lookup(buildID: id, moduleOffset: work + 1, project: project)
            else {
                Issue.record("work\(i) not resolved")
                continue
            }
            #expect(frames.last?.function == "work\(i)")
            accounted.append(await cache.accountedBytes)
            // The same address again builds nothing: the accounted bytes stay.
            _ = await cache.lookup(buildID: id, moduleOffset: work + 1, project: project)
            #expect(await cache.accountedBytes == accounted.last)
        }
        // Each new unit's index is accounted when it is built, and no more than the module really holds.
        #expect(accounted.count == Self.sources.count)
        #expect(zip(accounted, accounted.dropFirst()).allSatisfy { $0 < $1 }, "\(accounted)")
        let direct = try DebugModule(path: binary)
        for i in 0..<Self.sources.count { _ = direct.resolve(fileAddress: try address(of: "work\(i)", in: binary) + 1) }
        #expect(accounted.last == direct.indexedBytes)
        #expect(await cache.openCount == 1)
    }

    @Test func malformedUnitRangesNeitherCrashNorLoseTheFunction() throws {
        let folder = try TempFolder("lazy-hostile")
        // Unit 0 is sane; unit 1 claims the whole address space; unit 2's range wraps past 2^64 (so it has no
        // usable range); unit 3's range misses its function; then 40 units claiming everything, with no code.
        var units: [(low: String, length: String, function: Bool)] = [
            (".Lfn0_begin", ".Lfn0_end - .Lfn0_begin", true),
            ("0", "0xffffffffffffffff", true),
            (".Lfn2_end", "0xffffffffffffffff", true),
            (".Lfn3_end + 0x100", "0x10", true),
        ]
        units += Array(repeating: ("0", "0xffffffffffffffff", false), count: 40)
        let library = try HostileELF.link(HostileELF.unitRangesAssembly(units: units), name: "libunits", in: folder)
        let module = try DebugModule(path: library)
        #expect(module.unitCount == units.count)
        #expect(module.hasDWARF)
        for i in 0..<4 {
            let start = try address(of: "fn\(i)", in: library)
            for delta: UInt64 in 0..<4 {
                // From DWARF or, where the unit's ranges lie, from the symbol table: the function either way.
                #expect(
                    module.resolve(fileAddress: start + delta)?.frames.last?.function == "fn\(i)", "fn\(i)+\(delta)")
            }
        }
        // The sane unit answers from DWARF; addresses anywhere (0, the top) resolve or not, without trapping.
        let fn0 = try address(of: "fn0", in: library)
        #expect(module.resolve(fileAddress: fn0 + 1)?.source == .dwarf)
        for address: UInt64 in [0, 1, 0xffff_ffff_ffff_fff0, .max] { _ = module.resolve(fileAddress: address) }
        // Overlapping units cost a bounded number of unit walks per lookup, not one per unit.
        #expect(module.indexedUnitCount < units.count)
    }
}
