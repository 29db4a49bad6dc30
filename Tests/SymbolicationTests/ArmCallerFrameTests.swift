import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// A caller frame of a real arm64 build, as an event carries it (a return address, sometimes signed with a
/// pointer-authentication code), is looked up at its call instruction: `SymbolicationRules.lookupAddress`, which
/// grouping and the symbolicator share, lands on the `bl`, and libdw resolves it to the line of the call, as
/// llvm-symbolizer does.
@Suite struct ArmCallerFrameTests {
    /// The address of the `bl` in `caller` that calls `callee`, from llvm-objdump's disassembly of `binary`.
    static func call(in caller: String, to callee: String, binary: String) throws -> UInt64? {
        let listing = try Command.check(
            "llvm-objdump-19", ["-d", "--no-show-raw-insn", "--disassemble-symbols=" + caller, binary])
        for line in listing.split(separator: "\n") where line.contains("bl\t") && line.contains("<\(callee)>") {
            let address = line.split(separator: ":").first?.trimmingCharacters(in: .whitespaces) ?? ""
            return UInt64(address, radix: 16)
        }
        return nil
    }

    @Test(arguments: [AppleBuilds.Architecture.arm64, .arm64e])
    func aCallerFrameResolvesToTheLineOfItsCall(_ architecture: AppleBuilds.Architecture) throws {
        let build = try AppleBuilds.build(AppleBuilds.Request(.c, architecture, .iOS))
        let bl = try #require(try Self.call(in: "_crash_now", to: "_checkout", binary: build.binary))
        let source = try String(contentsOfFile: try #require(build.sources.first), encoding: .utf8)
        let callLine =
            try #require(
                source.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
                    $0.contains("*where = checkout(where, sink);")
                }) + 1
        let module = try DebugModule(path: build.dwarfFile)
        let image: UInt64 = 0x1_0480_0000
        let modules = [
            LoadedModule(name: "App", buildID: BuildID(build.uuid), baseAddress: image, size: 0x10_0000)
        ]
        // The return address is the instruction after the `bl`; on arm64e it may carry a code above bit 39.
        let returnAddress = image + (bl + 4 - build.textVMAddr)
        for address in [returnAddress, returnAddress | 0x2a1d_0000_0000_0000] {
            let lookup = try #require(
                SymbolicationRules.lookupAddress(
                    Frame(address: address), index: 1, architecture: architecture.rawValue, inSorted: modules))
            #expect(lookup - image + build.textVMAddr == bl)
            let frames = try #require(module.resolve(moduleOffset: lookup - image)?.frames)
            #expect(frames.first?.function == "crash_now")
            #expect(frames.first?.line == callLine)
        }
        // llvm-symbolizer on the dSYM names the same line at the call.
        let reference = try Command.check(
            "llvm-symbolizer-19", ["--obj=" + build.dwarfFile, "0x" + String(bl, radix: 16)])
        #expect(reference.contains(":\(callLine):"))
    }
}
