import Foundation
import TestSupport
import Testing

/// The Mach-O fixtures other suites rely on: each build has a UUID, its dSYM carries the same one, and the facts
/// read from the files hang together.
@Suite struct AppleBuildsTests {
    @Test(arguments: [
        AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 4), AppleBuilds.Request(.c, .x86_64, .macOS, dwarf: 5),
        AppleBuilds.Request(.cpp, .arm64e, .iOS), AppleBuilds.Request(.swift, .arm64, .macOS, dwarf: 4),
        AppleBuilds.Request(.embeddedSwift, .arm64, .iOS), AppleBuilds.Request(.c, .arm64, .iOS, dylib: true),
    ])
    func buildsHaveMatchingUUIDsAndFunctions(_ request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        #expect(build.uuid.count == 32)
        #expect(try AppleBuilds.uuid(build.dwarfFile) == build.uuid)
        #expect(try AppleBuilds.uuid(build.stripped) == build.uuid)
        #expect(build.textVMAddr == (request.dylib ? 0 : 0x1_0000_0000))
        #expect(build.functions.allSatisfy { build.text.contains($0.address) && $0.size > 0 })
        #expect(!build.functions.contains { $0.symbol == "__mh_execute_header" })
        switch request.language {
        case .c: #expect(build.address(of: "_checkout") != nil)
        case .cpp: #expect(build.functions.contains { $0.symbol.hasPrefix("__ZN4shop8payments6charge") })
        case .swift: #expect(build.functions.contains { $0.symbol.hasPrefix("_$s4shop8checkout") })
        case .embeddedSwift: #expect(build.functions.contains { $0.symbol.hasPrefix("_$e4shop8checkout") })
        }
        // Built once per process.
        #expect(try AppleBuilds.build(request).binary == build.binary)
    }

    @Test func fatBuildsHoldEverySliceInBinaryAndDSYM() throws {
        let fat = try AppleBuilds.fat([AppleBuilds.Request(.c, .arm64, .iOS), AppleBuilds.Request(.c, .x86_64, .macOS)])
        let ids = try AppleBuilds.uuids(fat.dwarfFile)
        #expect(Set(ids.map(\.uuid)) == Set(fat.slices.map(\.uuid)))
        #expect(Set(ids.map(\.architecture)) == ["arm64", "x86_64"])
        #expect(Set(try AppleBuilds.uuids(fat.binary).map(\.uuid)) == Set(fat.slices.map(\.uuid)))
    }
}
