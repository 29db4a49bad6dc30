import FaultlineCore
import Foundation
import Testing

/// The symbolication rules Apple reports need: caller frames looked up one instruction back per architecture,
/// pointer-authentication bits stripped from arm64e addresses, and the client's own names kept only until a debug
/// file resolves the frame.
@Suite struct AppleSymbolicationRulesTests {
    let app = BuildID("aa11")!
    let system = BuildID("bb22")!

    func report(_ frames: [Frame], modules: [LoadedModule], arch: String? = nil) -> Report {
        Report(
            eventID: EventID(String(repeating: "a", count: 32))!, kind: .crash,
            timestamp: Date(timeIntervalSince1970: 0),
            device: DeviceInfo(arch: arch), threads: [ThreadInfo(crashed: true, frames: frames)], modules: modules)
    }

    @Test func callerFramesAreLookedUpOneInstructionBackPerArchitecture() {
        // arm64 and arm64e: the 4-byte instruction before the (aligned) return address.
        #expect(SymbolicationRules.callerAddress(0x1_0000_4010, architecture: "arm64") == 0x1_0000_400c)
        #expect(SymbolicationRules.callerAddress(0x1_0000_4013, architecture: "arm64e") == 0x1_0000_400c)
        // x86-64 and unknown: one byte back.
        #expect(SymbolicationRules.callerAddress(0x1_0000_4010, architecture: "x86_64") == 0x1_0000_400f)
        #expect(SymbolicationRules.callerAddress(0x1_0000_4010, architecture: nil) == 0x1_0000_400f)
        // Addresses too small to step back stay (hostile input never traps).
        #expect(SymbolicationRules.callerAddress(2, architecture: "arm64") == 2)
        #expect(SymbolicationRules.callerAddress(0, architecture: nil) == 0)
        let frame = Frame(address: 0x2010)
        #expect(SymbolicationRules.lookupAddress(frame, index: 0, architecture: "arm64") == 0x2010)  // the program counter
        #expect(SymbolicationRules.lookupAddress(frame, index: 1, architecture: "arm64") == 0x200c)
        #expect(SymbolicationRules.lookupAddress(frame, index: 1) == 0x200f)
    }

    @Test func pointerAuthenticationBitsAreStrippedOnlyWhenThatLandsInAModule() {
        let modules = [LoadedModule(name: "App", buildID: app, baseAddress: 0x1_0000_0000, size: 0x10_0000)]
        // A signed return address: a PAC above bit 39.
        #expect(
            SymbolicationRules.strippingPointerAuthentication(
                0x2c1d_0001_0000_4321, architecture: "arm64e", inSorted: modules)
                == 0x1_0000_4321)
        // Bits 36…38 set too (a 36-bit device): the 39-bit mask lands nowhere, the 36-bit one does.
        #expect(
            SymbolicationRules.strippingPointerAuthentication(
                0x2c1d_0071_0000_4321, architecture: "arm64e", inSorted: modules)
                == 0x1_0000_4321)
        // Already in a module, no mask lands it in one, or an x86-64 report: unchanged.
        #expect(
            SymbolicationRules.strippingPointerAuthentication(0x1_0000_4321, architecture: "arm64e", inSorted: modules)
                == nil)
        #expect(
            SymbolicationRules.strippingPointerAuthentication(
                0x2c1d_0005_0000_4321, architecture: "arm64e", inSorted: modules) == nil)
        #expect(
            SymbolicationRules.strippingPointerAuthentication(
                0x2c1d_0001_0000_4321, architecture: "x86_64", inSorted: modules) == nil)
        #expect(
            SymbolicationRules.strippingPointerAuthentication(
                0x2c1d_0001_0000_4321, architecture: nil, inSorted: modules)
                == 0x1_0000_4321)
    }

    @Test func signedCallerAddressesResolveInTheirModule() async {
        let modules = [LoadedModule(name: "App", buildID: app, baseAddress: 0x1_0000_0000, size: 0x10_0000)]
        let symbols = TableSymbolicator([
            app: [0x400c: .resolved([ResolvedFrame(function: "checkout", file: "a.swift", line: 3)])]
        ])
        let result = await SymbolicationRules.symbolicate(
            report(
                [Frame(address: 0x1_0000_0000), Frame(address: 0x5e00_0001_0000_4010)], modules: modules, arch: "arm64e"
            ),
            project: ProjectID(1), with: symbols)
        #expect(result.threads[0][1].status == "dwarf")
        #expect(result.threads[0][1].frames.first?.function == "checkout")
        #expect(result.threads[0][1].offset == 0x400c)

        // Without a device architecture, the images' says.
        let imageArch = [
            LoadedModule(name: "App", buildID: app, baseAddress: 0x1_0000_0000, size: 0x10_0000, arch: "arm64e")
        ]
        let fromImage = await SymbolicationRules.symbolicate(
            report([Frame(address: 0x1_0000_0000), Frame(address: 0x5e00_0001_0000_4010)], modules: imageArch),
            project: ProjectID(1), with: symbols)
        #expect(fromImage.threads[0][1].offset == 0x400c)
    }

    /// Grouping takes a raw frame's `module+0xoffset` where the symbolicator looks it up: a return address signed
    /// with a pointer-authentication code groups with the same address unsigned, and an arm64 caller frame is counted
    /// at its call instruction (`(a & ~3) - 4`), not one byte back.
    @Test func rawArm64FramesGroupAtTheirCallInstructionWithOrWithoutPointerAuthentication() {
        // The crash is in a system library; the app's caller frame is the one blamed.
        let modules = [
            LoadedModule(name: "App", buildID: app, baseAddress: 0x1_0000_0000, size: 0x10_0000),
            LoadedModule(name: "UIKitCore", buildID: system, baseAddress: 0x1_8000_0000, size: 0x100_0000),
        ]
        func frames(_ caller: UInt64) -> [Frame] { [Frame(address: 0x1_8000_1000), Frame(address: caller)] }
        func grouped(_ caller: UInt64, arch: String?, modules: [LoadedModule] = modules) -> GroupingResult {
            Grouping.group(report(frames(caller), modules: modules, arch: arch), symbols: nil)
        }
        let unsigned = grouped(0x1_0000_4010, arch: "arm64e")
        let signed = grouped(0x5e00_0001_0000_4010, arch: "arm64e")
        #expect(unsigned.fingerprint == signed.fingerprint)
        #expect(signed.fingerprint.version == 3)
        #expect(signed.components == ["App+0x400c"])
        // The images' architecture says the same when the device does not.
        let imageArch = modules.map { module in
            var module = module
            module.arch = "arm64e"
            return module
        }
        #expect(grouped(0x5e00_0001_0000_4010, arch: nil, modules: imageArch).fingerprint == signed.fingerprint)
        // x86-64 callers stay one byte back, and its addresses are never unsigned.
        #expect(grouped(0x1_0000_4010, arch: "x86_64").components == ["App+0x400f"])
        #expect(grouped(0x5e00_0001_0000_4010, arch: "x86_64").components.contains("<unknown module>"))
        // The in-app badges see the signed frame in its module too.
        let badges = Grouping.inAppFrames(
            report(frames(0x5e00_0001_0000_4010), modules: modules, arch: "arm64e"), thread: 0, symbols: nil,
            rules: .none)
        #expect(badges == [false, true])
    }

    @Test func clientNamesStandUntilADebugFileResolvesTheFrame() async {
        let modules = [
            LoadedModule(name: "App", buildID: app, baseAddress: 0x1_0000_0000, size: 0x10_0000),
            LoadedModule(name: "UIKitCore", buildID: system, baseAddress: 0x1_8000_0000, size: 0x100_0000),
        ]
        let symbols = TableSymbolicator([
            app: [
                0x100: .resolved([ResolvedFrame(function: "Shop.checkout()", file: "Shop.swift", line: 9)]),
                0x200: .symbolOnly(ResolvedFrame(function: "checkout"), offset: 8),
            ]
        ])
        let frames = [
            Frame(address: 0x1_0000_0100, instructionKind: .programCounter, function: "checkout + 0"),
            Frame(address: 0x1_0000_0200, instructionKind: .programCounter, function: "$s4Shop8checkoutyyF"),
            Frame(address: 0x1_8000_1000, instructionKind: .programCounter, function: "-[UIApplication sendEvent:]"),
            Frame(address: 0x1_8000_2000, instructionKind: .programCounter, function: "UIApplicationMain"),
        ]
        let result = await SymbolicationRules.symbolicate(
            report(frames, modules: modules, arch: "arm64"), project: ProjectID(1), with: symbols)
        // DWARF replaces the client's name; a symbol-table answer does not (the client's is as good and stays stable).
        #expect(result.threads[0].map(\.status) == ["dwarf", "client", "client", "client"])
        #expect(result.threads[0][0].frames.first?.function == "Shop.checkout()")
        #expect(result.threads[0][1].frames.first?.function == "$s4Shop8checkoutyyF")
        // System frames without a debug file keep their names, are not listed missing, but carry their build-id
        // (a debug file uploaded later has the report symbolicated again).
        #expect(result.threads[0][2].frames.first?.function == "-[UIApplication sendEvent:]")
        #expect(result.threads[0][2].buildID == "bb22")
        #expect(result.missing.isEmpty)
        #expect(result.state == .complete)
        // The symbolicator is asked once for a build-id it has no file for.
        #expect(await symbols.asked.filter { $0.0 == system }.count == 1)

        // Grouping is the same with and without the lookups when nothing resolved.
        let unresolved = Array(frames.dropFirst(2))
        let before = Grouping.group(report(unresolved, modules: modules), symbols: nil)
        let after = Grouping.group(
            report(unresolved, modules: modules),
            symbols: await SymbolicationRules.symbolicate(
                report(unresolved, modules: modules), project: ProjectID(1), with: symbols))
        #expect(before.fingerprint == after.fingerprint)
    }
}
