import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// Our libdw symbolicator against llvm-symbolizer on binaries built by the test: for many addresses, the
/// same inline chain, functions, files and lines. Expectations are computed by llvm-symbolizer in the
/// test, never written down.
@Suite struct LLVMSymbolizerAgreementTests {
    struct Expected: Decodable {
        struct Symbol: Decodable {
            var FunctionName: String
            var FileName: String
            var Line: Int
            var Column: Int
        }
        var Address: String
        var Symbol: [Symbol]
    }

    /// Every `step`-th byte address of every function in `.text`.
    func sampleAddresses(_ binary: String, step: UInt64) throws -> [UInt64] {
        let out = try Command.check("nm", ["--defined-only", "-S", binary])
        var addresses: [UInt64] = []
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: " ")
            guard parts.count == 4, parts[2] == "t" || parts[2] == "T", let start = UInt64(parts[0], radix: 16),
                let size = UInt64(parts[1], radix: 16), size > 0
            else { continue }
            addresses += stride(from: start, to: start + size, by: Int(step)).map { $0 }
        }
        return addresses
    }

    func expectations(_ binary: String, _ addresses: [UInt64]) throws -> [Expected] {
        let args =
            ["--obj=" + binary, "--inlining", "--output-style=JSON"] + addresses.map { "0x" + String($0, radix: 16) }
        let out = try Command.check("llvm-symbolizer", args)
        return try JSONDecoder().decode([Expected].self, from: Data(out.utf8))
    }

    /// Compares every `step`-th byte address with llvm-symbolizer, through `module` when given (a module already
    /// used, to check its lazily built indexes), else a fresh one.
    func compare(_ binary: String, step: UInt64, module given: DebugModule? = nil) throws -> (
        checked: Int, mismatches: [String]
    ) {
        let module = try given ?? DebugModule(path: binary)
        let addresses = try sampleAddresses(binary, step: step)
        let expected = try expectations(binary, addresses)
        var mismatches: [String] = []
        for (address, want) in zip(addresses, expected) {
            let got = module.resolve(fileAddress: address)?.frames ?? []
            let wantFrames = want.Symbol.filter { $0.FunctionName != "??" }
            let gotText = got.map { "\($0.function ?? "??") \($0.file ?? "??"):\($0.line ?? 0):\($0.column ?? 0)" }
            // llvm-symbolizer names the out-of-line cold part of a function "name (.cold)" or "name.cold" (from
            // the symbol table); DWARF says it is the function itself, which is what we answer.
            func uncold(_ name: String) -> String {
                let plain = name.replacingOccurrences(of: " (.cold)", with: "")
                return plain.hasSuffix(".cold") ? String(plain.dropLast(5)) : plain
            }
            let wantText = wantFrames.map {
                "\(uncold(Demangler.demangle($0.FunctionName))) \($0.FileName.isEmpty ? "??" : $0.FileName):\($0.Line):\($0.Column)"
            }
            if gotText != wantText {
                mismatches.append("0x\(String(address, radix: 16)): ours \(gotText) llvm \(wantText)")
            }
        }
        return (addresses.count, mismatches)
    }

    @Test func agreesOnCppWithTemplatesAndNamespaces() throws {
        let folder = try TempFolder("symbolicate")
        let source = try folder.write("orders.cpp", ELFFixtures.ordersCpp)
        let binary = folder.file("orders")
        try Command.check("g++", ["-O2", "-g", "-o", binary, source])
        let (checked, mismatches) = try compare(binary, step: 1)
        #expect(checked > 200)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        // The names are demangled: namespaces and template arguments show.
        let module = try DebugModule(path: binary)
        let names = try sampleAddresses(binary, step: 4).compactMap {
            module.resolve(fileAddress: $0)?.frames.map(\.function)
        }.joined()
        #expect(names.contains("shop::payments::charge(shop::Basket<int> const&, int)"))
        #expect(names.contains("shop::Basket<int>::total() const"))
    }

    @Test func agreesOnReleaseSwiftAndShowsTheRuntimeFailureFrame() throws {
        let folder = try TempFolder("symbolicate")
        let (binary, _) = try SwiftCrashFixture.crash(in: folder)
        let (checked, mismatches) = try compare(binary, step: 1)
        #expect(checked > 100)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
        // The trap in pick(_:_:) resolves to the compiler's inline frame, then the real function and line.
        let module = try DebugModule(path: binary)
        let symbols = try Command.check("nm", [binary])
        let pick = try #require(symbols.split(separator: "\n").first { $0.hasSuffix("pickySiAA5OrderV_SitF") })
        let start = try #require(UInt64(pick.split(separator: " ")[0], radix: 16))
        let chains = (start..<(start + 64)).compactMap { module.resolve(fileAddress: $0)?.frames }
        let trap = try #require(chains.first { $0.first?.function == "Swift runtime failure: Index out of range" })
        #expect(trap.first?.line == nil)  // compiler-generated: no invented line
        #expect(trap.last?.function == "trap.pick(trap.Order, Swift.Int) -> Swift.Int")
        #expect(trap.last?.line == 2)
        #expect(trap.last?.file?.hasSuffix("main.swift") == true)
    }

    @Test func splitDebugFilesAnswerLikeTheBinaryAndStrippedOnesFallBackToSymbols() throws {
        let folder = try TempFolder("symbolicate")
        let source = try folder.write("crashy.c", ELFFixtures.crashyC)
        let binary = folder.file("crashy")
        try Command.check("gcc", ["-O2", "-g", "-o", binary, source])
        try Command.check("objcopy", ["--only-keep-debug", binary, folder.file("crashy.debug")])
        try Command.check(
            "objcopy", ["--compress-debug-sections=zlib", folder.file("crashy.debug"), folder.file("crashy.zdebug")])
        try Command.check("objcopy", ["--strip-debug", binary, folder.file("crashy.nodebug")])
        let full = try DebugModule(path: binary)
        let addresses = try sampleAddresses(binary, step: 1)
        for other in ["crashy.debug", "crashy.zdebug"] {
            let split = try DebugModule(path: folder.file(other))
            #expect(
                addresses.allSatisfy { split.resolve(fileAddress: $0) == full.resolve(fileAddress: $0) }, "\(other)")
        }
        let stripped = try DebugModule(path: folder.file("crashy.nodebug"))
        #expect(!stripped.hasDWARF)
        let main = try #require(
            try Command.check("nm", [binary]).split(separator: "\n").first { $0.hasSuffix(" T main") })
        let mainAddress = try #require(UInt64(main.split(separator: " ")[0], radix: 16))
        let fallback = try #require(stripped.resolve(fileAddress: mainAddress + 3))
        #expect(fallback.source == .symbolTable)
        #expect(fallback.frames.map(\.function) == ["main"])
        #expect(fallback.offset == 3)
        #expect(fallback.frames.first?.line == nil)
    }

    @Test func brokenFilesAreRefusedNotCrashedOn() throws {
        let folder = try TempFolder("symbolicate")
        let source = try folder.write("crashy.c", ELFFixtures.crashyC)
        let binary = folder.file("crashy")
        try Command.check("gcc", ["-O2", "-g", "-o", binary, source])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: binary))
        try Data("not an elf".utf8).write(to: URL(fileURLWithPath: folder.file("text")))
        #expect(throws: SymbolicationError.self) { try DebugModule(path: folder.file("text")) }
        #expect(throws: SymbolicationError.self) { try DebugModule(path: folder.file("missing")) }
        // Truncations: opening may fail or find less, but never crash.
        for cut in stride(from: 64, to: bytes.count, by: bytes.count / 23) {
            let path = folder.file("cut-\(cut)")
            try bytes.prefix(cut).write(to: URL(fileURLWithPath: path))
            if let module = try? DebugModule(path: path) { _ = module.resolve(fileAddress: 0x1149) }
        }
    }

    @Test(arguments: [["gcc", "-O2", "-g"], ["gcc", "-O0", "-g"], ["clang", "-O2", "-g"]])
    func agreesOnCWithInlining(_ command: [String]) throws {
        let folder = try TempFolder("symbolicate")
        let source = try folder.write("crashy.c", ELFFixtures.crashyC)
        let binary = folder.file("crashy")
        try Command.check(command[0], Array(command.dropFirst()) + ["-o", binary, source])
        let (checked, mismatches) = try compare(binary, step: 1)
        #expect(checked > 100)
        #expect(mismatches.isEmpty, "\(mismatches.count) of \(checked) differ, e.g. \(mismatches.prefix(5))")
    }
}

@Suite struct ModuleCacheTests {
    @Test func keepsWithinItsLimitsAndStillAnswers() async throws {
        let folder = try TempFolder("module-cache")
        let source = try folder.write("crashy.c", ELFFixtures.crashyC)
        var paths: [String] = []
        for (i, flags) in [["-O2", "-g"], ["-O0", "-g"], ["-O1", "-g"]].enumerated() {
            let out = folder.file("crashy\(i)")
            try Command.check("gcc", flags + ["-o", out, source])
            paths.append(out)
        }
        let ids = try paths.map { path -> BuildID in
            guard let text = try ELFFixtures.readelfBuildID(path), let id = BuildID(text) else {
                throw CommandError(description: "no build-id")
            }
            return id
        }
        let byID = Dictionary(uniqueKeysWithValues: zip(ids, paths))
        let cache = ModuleCache(capacity: 2) { id, kind, _ in kind == .debuginfo ? byID[id] : nil }
        for round in 0..<3 {
            for (id, path) in zip(ids, paths) {
                let main = try #require(
                    try Command.check("nm", [path]).split(separator: "\n").first { $0.hasSuffix(" T main") })
                let address = try #require(UInt64(main.split(separator: " ")[0], radix: 16))
                guard
                    case .resolved(let frames) = await cache.lookup(
                        buildID: id, moduleOffset: address, project: ProjectID(1))
                else {
                    Issue.record("round \(round): \(path) not resolved")
                    continue
                }
                #expect(frames.last?.function == "main")
                #expect(await cache.openCount <= 2)
            }
        }
        #expect(
            await cache.lookup(buildID: BuildID("abcd")!, moduleOffset: 0, project: ProjectID(1)) == .missingDebugFile)
        let tiny = ModuleCache(capacity: 10, byteBudget: 1) { id, _, _ in byID[id] }
        _ = await tiny.lookup(buildID: ids[0], moduleOffset: 0, project: ProjectID(1))
        _ = await tiny.lookup(buildID: ids[1], moduleOffset: 0, project: ProjectID(1))
        #expect(await tiny.openCount == 1)  // over the byte budget: only the newest stays open
    }
}

/// Corrupted DWARF: random bytes of `.debug_info`, `.debug_abbrev`, `.debug_line`, `.debug_str` and the
/// section headers overwritten, then opened and queried. libdw must report errors, not crash the process.
@Suite struct CorruptedDWARFTests {
    @Test func randomlyCorruptedDebugFilesNeverCrash() throws {
        let folder = try TempFolder("corrupt")
        let source = try folder.write("crashy.c", ELFFixtures.crashyC)
        let binary = folder.file("crashy")
        try Command.check("gcc", ["-O2", "-g", "-o", binary, source])
        let original = Array(try Data(contentsOf: URL(fileURLWithPath: binary)))
        // Where the debug sections are, from readelf.
        var regions: [(Int, Int)] = []
        for line in try Command.check("readelf", ["-SW", binary]).split(separator: "\n") where line.contains(".debug_")
        {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let nameIndex = fields.firstIndex(where: { $0.hasPrefix(".debug_") }), fields.count > nameIndex + 4,
                let offset = Int(fields[nameIndex + 3], radix: 16), let size = Int(fields[nameIndex + 4], radix: 16),
                size > 0
            else { continue }
            regions.append((offset, size))
        }
        #expect(regions.count >= 4)
        // Deterministic by default; FAULTLINE_FUZZ_SEED explores other corpora.
        var seed = UInt64(ProcessInfo.processInfo.environment["FAULTLINE_FUZZ_SEED"] ?? "") ?? 0x9e37_79b9_7f4a_7c15
        func next() -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        let main = try #require(
            try Command.check("nm", [binary]).split(separator: "\n").first { $0.hasSuffix(" T main") })
        let mainAddress = try #require(UInt64(main.split(separator: " ")[0], radix: 16))
        var opened = 0
        for round in 0..<300 {
            var bytes = original
            for _ in 0..<(1 + next() % 12) {
                let (offset, size) = regions[next() % regions.count]
                bytes[offset + next() % size] = UInt8(truncatingIfNeeded: next())
            }
            let path = folder.file("corrupt-\(round % 4)")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            guard let module = try? DebugModule(path: path) else { continue }
            opened += 1
            for delta in stride(from: 0, to: 64, by: 5) { _ = module.resolve(fileAddress: mainAddress + UInt64(delta)) }
        }
        #expect(opened > 0)
    }
}
