import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// Crafted debug files (issue #9, finding 2): real ELF files assembled by gcc in the test, opened with libdw.
/// Values that make no sense are skipped, never trusted, and nothing traps or loops without bound.
@Suite struct HostileDebugFileTests {
    @Test func anAbsoluteSymbolEndingPastTheAddressSpaceResolvesWithoutTrapping() throws {
        let folder = try TempFolder("hostile-symbol")
        let library = try HostileELF.absoluteSymbolLibrary(in: folder)
        let module = try DebugModule(path: library)
        // The reproduction: a frame at 0xffffffffffffff10 in a module based at 0.
        let resolution = try #require(module.resolve(moduleOffset: 0xffff_ffff_ffff_ff10))
        #expect(resolution.source == .symbolTable)
        #expect(resolution.frames.first?.function == "huge_absolute")
        #expect(resolution.offset == 0x10)
        // The top of the address space, and an address below the symbol, resolve without trapping either.
        #expect(module.resolve(moduleOffset: .max)?.frames.first?.function == "huge_absolute")
        #expect(module.resolve(moduleOffset: 0xffff_ffff_ffff_fe00)?.frames.first?.function != "huge_absolute")
        // The sane symbol of the same file still resolves.
        let real = try #require(try HostileELF.address(of: "real_function", in: library))
        #expect(module.resolve(fileAddress: real)?.frames.first?.function == "real_function")
    }

    @Test func callLineFileAndColumnOfAllOnesAreSkipped() throws {
        let folder = try TempFolder("hostile-dwarf")
        let library = try HostileELF.inlineLibrary(
            callFile: .max, callLine: .max, callColumn: .max, name: "libinline", in: folder)
        let outer = try #require(try HostileELF.address(of: "outer", in: library))
        let module = try DebugModule(path: library)
        #expect(module.hasDWARF)
        let frames = try #require(module.resolve(fileAddress: outer + 1)).frames
        // The inline chain is still there; the call site's nonsense values are dropped, not trusted.
        #expect(frames.map(\.function) == ["inlined_callee", "outer"])
        #expect(frames.first?.inlined == true)
        #expect(frames.first?.line == 20)
        #expect(frames.last?.file == nil)
        #expect(frames.last?.line == nil)
        #expect(frames.last?.column == nil)
    }

    @Test func hugeButRepresentableCallValuesAreSkippedToo() throws {
        // 2^63 fits no `Int` conversion of a line, and 2^32 is past any real line or file table.
        let folder = try TempFolder("hostile-dwarf")
        let library = try HostileELF.inlineLibrary(
            callFile: 1 << 63, callLine: 1 << 32, callColumn: 1 << 63, name: "libinline2", in: folder)
        let outer = try #require(try HostileELF.address(of: "outer", in: library))
        let frames = try #require(try DebugModule(path: library).resolve(fileAddress: outer + 1)).frames
        #expect(frames.map(\.function) == ["inlined_callee", "outer"])
        #expect(frames.last?.line == nil)
        #expect(frames.last?.file == nil)
    }

    @Test func theSameFileWithSaneCallValuesGivesTheCallSite() throws {
        // The control: the fixture does exercise the call-site path (file 1, line 42, column 7).
        let folder = try TempFolder("sane-dwarf")
        let library = try HostileELF.inlineLibrary(
            callFile: 1, callLine: 42, callColumn: 7, name: "libsane", in: folder)
        let outer = try #require(try HostileELF.address(of: "outer", in: library))
        let frames = try #require(try DebugModule(path: library).resolve(fileAddress: outer + 1)).frames
        #expect(frames.map(\.function) == ["inlined_callee", "outer"])
        #expect(frames.last?.line == 42)
        #expect(frames.last?.column == 7)
        #expect(frames.last?.file?.hasSuffix("hostile.c") == true)
    }

    @Test(.timeLimit(.minutes(1))) func siblingLinksIntoWalkedSubtreesDoNotMultiplyTheWork() throws {
        // Followed naively, these links visit 2^40 DIEs: the walk would never end.
        let folder = try TempFolder("hostile-siblings")
        let library = try HostileELF.link(HostileELF.siblingLoopAssembly(depth: 40), name: "libdeep", in: folder)
        let deep = try #require(try HostileELF.address(of: "deep", in: library))
        let module = try DebugModule(path: library)
        #expect(module.resolve(fileAddress: deep)?.frames.first?.function == "deep")
    }

    @Test func theModuleCacheAnswersForTheHostileFile() async throws {
        // Through the public entry point the worker and the fuzz targets use.
        let folder = try TempFolder("hostile-cache")
        let library = try HostileELF.absoluteSymbolLibrary(in: folder)
        let cache = ModuleCache { _, _, _ in library }
        let id = try #require(BuildID("abcdef"))
        let answer = await cache.lookup(buildID: id, moduleOffset: 0xffff_ffff_ffff_ff10, project: ProjectID(1))
        #expect(answer == .symbolOnly(ResolvedFrame(function: "huge_absolute"), offset: 0x10))
    }

    @Test func overlongNamesAreNotDemangled() {
        let long = "_Z" + String(repeating: "N1a", count: Demangler.maxLength) + "E"
        #expect(Demangler.demangle(long) == long)
        #expect(Demangler.demangle("_ZN4shop5totalEv") == "shop::total()")
    }
}
