import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// A real iOS program (C, arm64, built by clang + ld64.lld-19, its dSYM by dsymutil-19): an `.ips` and a `.crash` over
/// its UUID and function addresses, at a slide, are posted, its dSYM uploaded, and every frame of the app resolves
/// to what llvm-symbolizer says the dSYM holds, in place of the stale names the reports carried. A system frame
/// without a dSYM keeps the report's own name.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct AppleCrashSymbolicationEndToEndTests {
    static let slide: UInt64 = 0x2b8_4000

    /// One frame to write into the reports: a file address in the app, or a system library's address and name.
    struct Planned {
        var fileAddress: UInt64?
        var systemOffset: UInt64?
        /// The name the report carries, or nil for a bare address.
        var staleName: String?
    }

    /// The report files over `build`: an `.ips` and a `.crash` (different incidents) with the same frames.
    static func reports(_ build: AppleBuilds.Build, _ frames: [Planned]) -> (ips: String, crash: String) {
        let base = build.textVMAddr + slide
        let size = (build.text.upperBound - build.textVMAddr + 0x3fff) & ~0x3fff
        let systemBase: UInt64 = 0x1_ce4c_8000
        let uuid = XcodeArchive.appleSpelling(build.uuid)
        let path = "/private/var/containers/Bundle/Application/51346174-37EF-4F60-B72D-8DE5F01035F5/Shop.app/Shop"
        let ipsFrames = frames.map { f -> String in
            let (index, offset) = f.fileAddress.map { (0, $0 - build.textVMAddr) } ?? (1, f.systemOffset!)
            let symbol = f.staleName.map { #","symbol":"\#($0)","symbolLocation":4"# } ?? ""
            return #"{"imageOffset":\#(offset)\#(symbol),"imageIndex":\#(index)}"#
        }
        let ips = AppleCrashSamples.ips(
            incident: "11111111-2222-4333-8444-555555555555",
            threads:
                #"[{"triggered":true,"queue":"com.apple.main-thread","frames":[\#(ipsFrames.joined(separator: ","))]}]"#,
            images: """
                [{"source":"P","arch":"arm64","base":\(base),"size":\(size),"uuid":"\(uuid.lowercased())","path":"\(path)","name":"Shop"},
                 {"source":"P","arch":"arm64e","base":\(systemBase),"size":233472,"uuid":"b2e8c4d6-e3e0-3c2d-9b0d-8e6d5b3d0a1f","path":"/usr/lib/system/libsystem_kernel.dylib","name":"libsystem_kernel.dylib"}]
                """)
        let crashFrames = frames.enumerated().map { i, f -> String in
            let (module, imageBase) = f.fileAddress == nil ? ("libsystem_kernel.dylib", systemBase) : ("Shop", base)
            let address = f.fileAddress.map { base + ($0 - build.textVMAddr) } ?? systemBase + f.systemOffset!
            let hex = String(address, radix: 16)
            let tail = f.staleName.map { "\($0) + 4" } ?? "0x\(String(imageBase, radix: 16)) + \(address - imageBase)"
            return
                "\(i)   \(module.padding(toLength: 30, withPad: " ", startingAt: 0))\t0x\(String(repeating: "0", count: 16 - hex.count))\(hex) \(tail)"
        }
        let crash = AppleCrashSamples.crash(
            incident: "66666666-7777-4888-9999-000000000000",
            threads: "Thread 0 Crashed:\n" + crashFrames.joined(separator: "\n"),
            images: """
                0x\(String(base, radix: 16)) - 0x\(String(base + size - 1, radix: 16)) Shop arm64  <\(build.uuid)> \(path)
                0x\(String(systemBase, radix: 16)) - 0x\(String(systemBase + 233471, radix: 16)) libsystem_kernel.dylib arm64e  <b2e8c4d6e3e03c2d9b0d8e6d5b3d0a1f> /usr/lib/system/libsystem_kernel.dylib
                """)
        return (ips, crash)
    }

    /// llvm-symbolizer's innermost function and line at a file address of the dSYM (the reference).
    static func reference(_ dwarf: String, _ address: UInt64) throws -> (function: String, file: String, line: Int) {
        let out = try Command.check(
            "llvm-symbolizer-19", ["--obj=\(dwarf)", "--inlining", "0x" + String(address, radix: 16)])
        let lines = out.split(separator: "\n").map(String.init)
        let location = lines[1].split(separator: ":")
        return (lines[0], String(location[0]), Int(location[1]) ?? -1)
    }

    @Test func theDSYMsAnswersReplaceTheReportsOwnNames() async throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let crashNow = try #require(build.address(of: "_crash_now"))
        let main = try #require(build.address(of: "_main"))
        let frames = [
            Planned(fileAddress: crashNow + 4, staleName: "stale_crash_now"),
            Planned(fileAddress: main + 8, staleName: nil),
            Planned(systemOffset: 4084, staleName: "__pthread_kill"),
        ]
        // The reference: a program counter as is, a return address one arm64 instruction back.
        let expected = [
            try Self.reference(build.dwarfFile, crashNow + 4), try Self.reference(build.dwarfFile, main + 8 - 4),
        ]
        #expect(expected[0].function == "crash_now" && expected[1].function == "main")
        let (ips, crash) = Self.reports(build, frames)

        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let ingest = [("Authorization", "Bearer \(project.ingest)")]
        let read = [("Authorization", "Bearer \(project.upload)")]

        // The crashes come first: without the dSYM, the frames keep the reports' names (the bare address has none)
        // and the UUID is missing.
        var ids: [String] = []
        for file in [ips, crash] {
            let answer = try await http.send(
                .POST, server.baseURL + "/api/v1/crashes/apple", headers: ingest, body: Array(file.utf8))
            #expect(answer.status == 202, "\(String(decoding: answer.body, as: UTF8.self))")
            ids.append(try #require((answer.json["accepted"] as? [String])?.first))
        }
        for id in ids {
            let before = try await waitFor(http, server.baseURL + "/api/v1/reports/\(id)", read) { $0 != "pending" }
            let slots = try #require(
                ((before["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first,
                "\(before["symbolication"] ?? "none")")
            #expect(
                slots.map { ($0["frames"] as? [[String: Any]])?.first?["function"] as? String }
                    == frames.map(\.staleName))
            #expect((before["symbolication"] as? [String: Any])?["state"] as? String == "missing")
        }
        let missing = try await http.send(.GET, server.baseURL + "/api/v1/missing-debug-files", headers: read)
        #expect(
            (missing.json["missing"] as? [[String: Any]] ?? []).contains { $0["build_id"] as? String == build.uuid },
            "\(missing.json)")

        // The dSYM arrives: both reports are symbolicated again, the app's frames by DWARF.
        let dsym = Array(try Data(contentsOf: URL(fileURLWithPath: build.dwarfFile)))
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(build.uuid)", headers: read, body: dsym)
        #expect(uploaded.status == 201, "\(uploaded.json)")
        for id in ids {
            let after = try await waitFor(http, server.baseURL + "/api/v1/reports/\(id)", read) { state in
                state == "complete" || state == "partial"
            }
            let slots = try #require(
                ((after["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first, "\(after)")
            #expect(slots.count == 3)
            for (slot, want) in zip(slots, expected) {
                let innermost = (slot["frames"] as? [[String: Any]])?.first
                #expect(slot["status"] as? String == "dwarf", "\(slot)")
                #expect(innermost?["function"] as? String == want.function, "\(slot)")
                #expect(innermost?["line"] as? Int == want.line, "\(slot)")
                #expect(
                    (innermost?["file"] as? String).map {
                        $0.hasSuffix(URL(fileURLWithPath: want.file).lastPathComponent)
                    } == true, "\(slot)")
            }
            // The system library has no dSYM here: its frame keeps the report's name.
            #expect((slots.last?["frames"] as? [[String: Any]])?.first?["function"] as? String == "__pthread_kill")
            #expect(slots.last?["status"] as? String == "client")
        }
    }

    /// The same crash three ways — a Sentry Cocoa event, an `.ips` and a `.crash` of one program at one slide — is one
    /// issue, and once the dSYM is there every frame of the three resolves to the same function, file and line.
    @Test func anEventAnIPSAndACrashOfOneCrashAreOneIssueWithTheSameFrames() async throws {
        let build = try AppleBuilds.build(.init(.c, .arm64, .iOS))
        let fileFrames = [
            try #require(build.address(of: "_crash_now")) + 4, try #require(build.address(of: "_main")) + 8,
        ]
        let (ips, crash) = Self.reports(build, fileFrames.map { Planned(fileAddress: $0, staleName: nil) })
        let base = build.textVMAddr + Self.slide
        let image = SentryCocoaEvents.Image(
            path: SentryCocoaEvents.appPath("Shop"), debugID: build.uuid.uppercased(), address: base,
            size: build.text.upperBound - build.textVMAddr + 0x4000)
        let eventID = "aaaaaaaa0000400080000000aaaaaaaa"
        let event = SentryCocoaEvents.event(
            eventID: eventID, crash: .badAccess(address: 0x10),
            frames: fileFrames.map { SentryCocoaEvents.Frame(image, base + ($0 - build.textVMAddr)) })

        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let read = [("Authorization", "Bearer \(project.upload)")]
        try await SentryCocoaEndToEndTests.send(http, server, project, event, id: eventID)
        var ids = [eventID]
        for file in [ips, crash] {
            let answer = try await http.send(
                .POST, server.baseURL + "/api/v1/crashes/apple",
                headers: [("Authorization", "Bearer \(project.ingest)")], body: Array(file.utf8))
            ids.append(try #require((answer.json["accepted"] as? [String])?.first, "\(answer.json)"))
        }
        let dsym = Array(try Data(contentsOf: URL(fileURLWithPath: build.dwarfFile)))
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(build.uuid)", headers: read, body: dsym)
        #expect(uploaded.status == 201, "\(uploaded.json)")

        var served: [[String]] = []
        var issues: Set<Int> = []
        for id in ids {
            let done = try await waitFor(http, server.baseURL + "/api/v1/reports/\(id)", read) { $0 == "complete" }
            let slots = ((done["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first ?? []
            #expect(slots.count == 2 && slots.allSatisfy { $0["status"] as? String == "dwarf" }, "\(id): \(done)")
            served.append(
                slots.map { slot in
                    let f = (slot["frames"] as? [[String: Any]])?.first ?? [:]
                    return
                        "\(f["function"] as? String ?? "?") \((f["file"] as? String)?.split(separator: "/").last ?? "?"):\(f["line"] as? Int ?? -1)"
                })
            if let issue = done["issue_id"] as? Int { issues.insert(issue) }
        }
        #expect(served[1] == served[0] && served[2] == served[0], "\(served)")
        #expect(served[0].first?.hasPrefix("crash_now ") == true, "\(served)")
        #expect(issues.count == 1, "\(issues)")
    }

    /// Polls a report until its symbolication state satisfies `done` (`SymbolicationEndToEndTests`'s poll).
    func waitFor(_ http: HTTP, _ url: String, _ headers: [(String, String)], _ done: (String) -> Bool) async throws
        -> [String: Any]
    {
        try await SymbolicationEndToEndTests().waitFor(http, url, headers, done)
    }
}
