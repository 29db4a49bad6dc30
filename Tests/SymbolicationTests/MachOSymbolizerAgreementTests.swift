import FaultlineCore
import Foundation
import MachO
import Symbolication
import TestSupport
import Testing

/// Our libdw symbolicator on Mach-O (dSYMs presented to libdw as ELF images) against llvm-symbolizer-19 on the same
/// dSYMs, for every instruction of every function: the same inline chain, functions, files, lines and columns.
/// Addresses reach the module the way an event's do: `instruction_addr − image_addr` with a random load address.
/// Expectations are computed by llvm-symbolizer in the test, never written down.
@Suite struct MachOSymbolizerAgreementTests {
    /// Every instruction start of `__text` (4 bytes apart on arm64, every byte on x86-64).
    static func addresses(_ build: AppleBuilds.Build) -> [UInt64] {
        Array(
            stride(
                from: build.text.lowerBound, to: build.text.upperBound,
                by: build.request.architecture == .x86_64 ? 1 : 4))
    }

    static func expectations(_ dwarfFile: String, _ addresses: [UInt64]) throws -> [LLVMSymbolizerAgreementTests
        .Expected]
    {
        let args =
            ["--obj=" + dwarfFile, "--inlining", "--output-style=JSON"] + addresses.map { "0x" + String($0, radix: 16) }
        let out = try Command.check("llvm-symbolizer-19", args)
        return try JSONDecoder().decode([LLVMSymbolizerAgreementTests.Expected].self, from: Data(out.utf8))
    }

    /// Resolves every address of `build` through `module` as an event would reach it, and compares with
    /// llvm-symbolizer on `dwarfFile`.
    static func compare(_ build: AppleBuilds.Build, module: DebugModule, dwarfFile: String) throws
        -> (checked: Int, inlined: Int, mismatches: [String])
    {
        var random = SystemRandomNumberGenerator()
        let addresses = addresses(build)
        let expected = try expectations(dwarfFile, addresses)
        var mismatches: [String] = []
        var inlined = 0
        for (address, want) in zip(addresses, expected) {
            // A slide: the image loaded at a random page, the frame's address inside it.
            let imageAddress = UInt64.random(in: 0x1_0000...0x7_0000_0000, using: &random) << 12
            let instruction = imageAddress + (address - build.textVMAddr)
            let got = module.resolve(moduleOffset: instruction - imageAddress)?.frames ?? []
            let gotText = got.map { "\($0.function ?? "??") \($0.file ?? "??"):\($0.line ?? 0):\($0.column ?? 0)" }
            let wantText = want.Symbol.filter { $0.FunctionName != "??" }.map {
                "\(Demangler.demangle($0.FunctionName)) \($0.FileName.isEmpty ? "??" : $0.FileName):\($0.Line):\($0.Column)"
            }
            if got.count > 1 { inlined += 1 }
            if gotText != wantText {
                mismatches.append("0x\(String(address, radix: 16)): ours \(gotText) llvm \(wantText)")
            }
        }
        return (addresses.count, inlined, mismatches)
    }

    static let requests: [AppleBuilds.Request] = [
        .init(.c, .arm64, .iOS, dwarf: 4), .init(.c, .arm64, .iOS, dwarf: 5), .init(.c, .x86_64, .macOS, dwarf: 4),
        .init(.c, .x86_64, .macOS, dwarf: 5), .init(.c, .arm64e, .iOS), .init(.c, .arm64, .macOS),
        .init(.c, .arm64, .iOS, dylib: true), .init(.c, .x86_64, .macOS, dwarf: 4, dylib: true),
        .init(.cpp, .arm64, .iOS), .init(.cpp, .x86_64, .macOS, dwarf: 4), .init(.cpp, .arm64, .iOS, dylib: true),
        .init(.swift, .arm64, .iOS), .init(.swift, .x86_64, .macOS, dwarf: 4), .init(.swift, .arm64, .iOS, dylib: true),
        .init(.embeddedSwift, .arm64, .iOS),
    ]

    @Test(arguments: requests)
    func dSYMsAgreeWithLLVMSymbolizer(_ request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        let module = try DebugModule(path: build.dwarfFile)
        #expect(module.hasDWARF)
        #expect(module.loadBias == build.textVMAddr)
        let (checked, inlined, mismatches) = try Self.compare(build, module: module, dwarfFile: build.dwarfFile)
        #expect(checked >= 10)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        if request.language == .c || request.language == .cpp { #expect(inlined > 0, "no inlined code was checked") }
    }

    @Test func namesAreReadableForEveryLanguage() throws {
        func names(_ request: AppleBuilds.Request) throws -> Set<String> {
            let build = try AppleBuilds.build(request)
            let module = try DebugModule(path: build.dwarfFile)
            return Set(
                Self.addresses(build).compactMap { module.resolve(fileAddress: $0)?.frames.compactMap(\.function) }
                    .joined())
        }
        let cpp = try names(.init(.cpp))
        #expect(cpp.contains("shop::payments::charge(shop::Basket<int> const&, int)"))
        #expect(cpp.contains("shop::Basket<long>::total() const"))
        let swift = try names(.init(.swift))
        #expect(swift.contains("shop.checkout(shop.Order, shop.Order) -> Builtin.Int64"))
        let embedded = try names(.init(.embeddedSwift))
        #expect(embedded.contains("shop.checkout(shop.Order, shop.Order) -> Builtin.Int64"))
        let c = try names(.init(.c))
        #expect(c.isSuperset(of: ["checkout", "line_total", "tax", "main"]))
    }

    @Test func slicesOfAFatDSYMAgreeLikeThinOnes() throws {
        let fat = try AppleBuilds.fat([.init(.c, .arm64, .iOS), .init(.swift, .x86_64, .macOS)])
        // The fat file itself is refused: stored files are thin slices.
        #expect(throws: SymbolicationError.self) { try DebugModule(path: fat.dwarfFile) }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fat.dwarfFile))
        let slices = try MachOContainer.slices(size: UInt64(bytes.count)) { offset, count in
            Array(bytes[Int(offset)..<(Int(offset) + count)])
        }
        #expect(slices.count == 2)
        let folder = try TempFolder("macho-slices")
        for slice in slices {
            let path = folder.file(slice.architecture)
            try bytes[Int(slice.offset)..<Int(slice.offset + slice.size)].write(to: URL(fileURLWithPath: path))
            let build = try #require(fat.slices.first { $0.request.architecture.rawValue == slice.architecture })
            #expect(try AppleBuilds.uuid(path) == build.uuid)
            let module = try DebugModule(path: path)
            let (checked, _, mismatches) = try Self.compare(build, module: module, dwarfFile: path)
            #expect(
                mismatches.isEmpty,
                "\(slice.architecture): \(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        }
    }

    @Test(arguments: [
        AppleBuilds.Request(.c, .arm64, .iOS), AppleBuilds.Request(.c, .x86_64, .macOS),
        AppleBuilds.Request(.cpp, .arm64, .iOS, dylib: true),
    ])
    func strippedBinariesFallBackToTheSymbolTable(_ request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        let stripped = try DebugModule(path: build.stripped)
        #expect(!stripped.hasDWARF)
        #expect(stripped.loadBias == build.textVMAddr)
        let main = try #require(build.address(of: request.dylib ? "_main" : "_main"))
        let fallback = try #require(stripped.resolve(moduleOffset: main + 4 - build.textVMAddr))
        #expect(fallback.source == .symbolTable)
        #expect(fallback.frames.map(\.function) == ["main"])
        #expect(fallback.offset == 4)
        #expect(fallback.frames.first?.line == nil)
        // No address answers the Mach-O header's symbol (it is outside __text), nor a data symbol.
        let answers = stride(from: build.textVMAddr, to: build.text.upperBound + 64, by: 2).compactMap {
            stripped.resolve(fileAddress: $0)?.frames.first?.function
        }
        #expect(!answers.contains { $0.contains("mh_execute_header") || $0.contains("mh_dylib_header") })
        #expect(stripped.resolve(fileAddress: build.textVMAddr) == nil)
        // The binary before stripping keeps its local functions in the symbol table (it has no DWARF: that is
        // in the dSYM), demangled.
        let full = try DebugModule(path: build.binary)
        #expect(!full.hasDWARF)
        for function in build.functions {
            let name = try #require(full.resolve(fileAddress: function.address)?.frames.first?.function)
            #expect(name == Demangler.demangle(String(function.symbol.dropFirst())))
        }
    }

    @Test func theModuleCacheResolvesMachOByUUIDAndCountsItsHeaders() async throws {
        let build = try AppleBuilds.build(.init(.swift, .arm64, .iOS))
        let stripped = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let dSYMID = try #require(BuildID(build.uuid))
        let strippedID = try #require(BuildID(stripped.uuid))
        let cache = ModuleCache { id, kind, _ in
            switch (id, kind) {
            case (dSYMID, .debuginfo): build.dwarfFile
            case (strippedID, .executable): stripped.stripped
            default: nil
            }
        }
        let checkout = try #require(build.address(of: "_$s4shop8checkoutyBi64_AA5OrderV_ADtF"))
        let answer = await cache.lookup(
            buildID: dSYMID, moduleOffset: checkout - build.textVMAddr, project: ProjectID(1))
        guard case .resolved(let frames) = answer else { Issue.record("not resolved: \(answer)"); return }
        #expect(frames.last?.function == "shop.checkout(shop.Order, shop.Order) -> Builtin.Int64")
        #expect(frames.last?.file?.hasSuffix("Orders.swift") == true)
        // The synthetic ELF headers (at least a page) are part of what the cache accounts.
        #expect(await cache.accountedBytes >= 4096)
        let main = try #require(stripped.address(of: "_main"))
        let symbolOnly = await cache.lookup(
            buildID: strippedID, moduleOffset: main + 8 - stripped.textVMAddr, project: ProjectID(1))
        #expect(symbolOnly == .symbolOnly(ResolvedFrame(function: "main"), offset: 8))
    }

    @Test func dSYMsKeepTheirSymbolTableForCodeWithoutDWARF() throws {
        let build = try AppleBuilds.build(.init(.c))
        let module = try DebugModule(path: build.dwarfFile)
        // Every function of the symbol table answers by its name through DWARF or the symbols.
        for function in build.functions {
            let frames = try #require(module.resolve(fileAddress: function.address)?.frames)
            #expect(frames.last?.function == String(function.symbol.dropFirst()))
        }
    }
}
