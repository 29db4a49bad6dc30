import FaultlineCore
import Foundation
import TestSupport
import Testing

@testable import Formats

/// Reports over real programs (`AppleBuilds`: clang + ld64.lld-19): an `.ips` and a `.crash` whose frames are every
/// function of the build at a slide are read back to the build's own UUID (as llvm-dwarfdump-19 prints it) and to
/// the functions' file addresses — for an arm64 iOS executable, an x86_64 macOS executable and an arm64 dylib
/// (`__TEXT` at 0).
@Suite struct AppleCrashBuildsTests {
    static let requests = [
        AppleBuilds.Request(.c, .arm64, .iOS), AppleBuilds.Request(.cpp, .x86_64, .macOS),
        AppleBuilds.Request(.c, .arm64, .iOS, dylib: true),
    ]

    /// The image's load address: its `__TEXT` vmaddr plus a slide, as the dynamic loader places it.
    static func base(_ build: AppleBuilds.Build) -> UInt64 {
        build.textVMAddr + 0x2b8_4000 + (build.request.dylib ? 0x1_0000_0000 : 0)
    }

    static func ips(_ build: AppleBuilds.Build) -> String {
        let base = Self.base(build)
        let size = build.text.upperBound - build.textVMAddr
        let frames = build.functions.map { #"{"imageOffset":\#($0.address + 4 - build.textVMAddr),"imageIndex":0}"# }
        let uuid = XcodeArchive.appleSpelling(build.uuid)
        return AppleCrashSamples.ips(
            threads: #"[{"triggered":true,"frames":[\#(frames.joined(separator: ","))]}]"#,
            images:
                #"[{"source":"P","arch":"\#(build.request.architecture)","base":\#(base),"size":\#(size),"uuid":"\#(uuid)","name":"Shop"}]"#
        )
    }

    static func crash(_ build: AppleBuilds.Build) -> String {
        let base = Self.base(build)
        let size = build.text.upperBound - build.textVMAddr
        let frames = build.functions.enumerated().map { i, f in
            let address = base + (f.address + 4 - build.textVMAddr)
            return "\(i)   Shop     \t0x\(String(address, radix: 16)) 0x\(String(base, radix: 16)) + \(address - base)"
        }
        // macOS spells the UUID as Apple's tools print it; iOS as 32 lower-case digits.
        let uuid = build.request.platform == .macOS ? XcodeArchive.appleSpelling(build.uuid) : build.uuid
        return AppleCrashSamples.crash(
            threads: "Thread 0 Crashed:\n" + frames.joined(separator: "\n"),
            images:
                "0x\(String(base, radix: 16)) - 0x\(String(base + size - 1, radix: 16)) Shop \(build.request.architecture)  <\(uuid)> /x/Shop"
        )
    }

    @Test(arguments: requests)
    func framesAreTheBuildsFunctionsAndTheImageItsUUID(request: AppleBuilds.Request) throws {
        let build = try AppleBuilds.build(request)
        let dwarfdump = try AppleBuilds.uuid(build.binary)
        #expect(!build.functions.isEmpty)
        for text in [Self.ips(build), Self.crash(build)] {
            let report = try AppleCrashReports.report(
                file: Array(text.utf8), metadata: .init(eventID: "6156848e344e4d9e84e087afd0d0ae7b"),
                limits: IngestLimits())
            let image = try #require(report.modules.first)
            #expect(image.buildID?.rawValue == dwarfdump)
            #expect(image.baseAddress == Self.base(build))
            #expect(image.arch == request.architecture.rawValue)
            // Every frame, moved back by the slide, is the function's address + 4 in the file.
            let frames = try #require(report.threads.first?.frames)
            #expect(
                frames.map { $0.address! - image.baseAddress + build.textVMAddr }
                    == build.functions.map { $0.address + 4 })
            #expect(frames.allSatisfy { $0.module == "Shop" })
        }
    }
}
