import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Sentry-Cocoa-shaped crashes of real Mach-O programs (built here by clang/swiftc + ld64.lld + dsymutil), at random
/// ASLR slides, through the real server, with the dSYM uploaded by the real `sentry-cli debug-files upload` between
/// the crashes: every app frame resolves as llvm-symbolizer resolves it on the dSYM, and the crashes that were
/// grouped by `module+offset` before the dSYM regroup by function after it.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct SentryCocoaSymbolicationEndToEndTests {
    typealias C = SentryCocoaEvents
    let http = HTTP(client: HTTPClient.shared)

    /// The address llvm-symbolizer and the server look up for a frame: a caller's is one instruction back.
    static func lookup(_ address: UInt64, caller: Bool, _ architecture: AppleBuilds.Architecture) -> UInt64 {
        guard caller else { return address }
        return architecture == .x86_64 ? address - 1 : (address & ~3) - 4
    }

    /// Sentry's debug-id spelling of a UUID: hyphenated, with the age (`4c4c44c1-5555-3144-a18d-19088842705b-0`).
    static func debugID(_ hex: String) -> String {
        let h = Array(hex)
        guard h.count == 32 else { return hex }
        return [h[0..<8], h[8..<12], h[12..<16], h[16..<20], h[20..<32]].map { String($0) }.joined(separator: "-")
            + "-0"
    }

    /// llvm-symbolizer's innermost (function, file base name, line) at `address` of the dSYM.
    static func reference(_ build: AppleBuilds.Build, _ address: UInt64) throws -> (
        function: String, file: String, line: Int
    ) {
        let out = try Command.check(
            "llvm-symbolizer-19", ["--obj=\(build.dwarfFile)", "--inlining", "0x" + String(address, radix: 16)])
        let lines = out.split(separator: "\n").map(String.init)
        guard lines.count >= 2 else { throw CommandError(description: "llvm-symbolizer said: \(out)") }
        let location = lines[1].split(separator: ":")
        guard location.count >= 2, let line = Int(location[1]) else {
            throw CommandError(description: "llvm-symbolizer said: \(out)")
        }
        return (lines[0], String(location[0].split(separator: "/").last ?? ""), line)
    }

    /// The report once `done` holds for it (or the last answer when it never does).
    func report(_ server: ServerProcess, _ id: String, _ read: [(String, String)], until done: ([String: Any]) -> Bool)
        async throws
        -> [String: Any]
    {
        var last: [String: Any] = [:]
        _ = try await eventually(timeout: .seconds(60)) {
            last = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(id)", headers: read).json
            return done(last)
        }
        return last
    }

    static func resolved(_ report: [String: Any]) -> Bool {
        let symbolication = report["symbolication"] as? [String: Any]
        let slots = (symbolication?["threads"] as? [[[String: Any]]])?.first ?? []
        return report["issue_id"] is Int && !slots.isEmpty && slots.allSatisfy { $0["status"] as? String == "dwarf" }
    }

    /// A server with a project `shop`, and the project's read headers.
    struct Setup {
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        var read: [(String, String)] { [("Authorization", "Bearer \(project.upload)")] }
    }

    func start() async throws -> Setup {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        return Setup(
            server: try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices),
            project: project)
    }

    /// The real `sentry-cli debug-files upload` of `bundles` (`.dSYM` folders, by the names they get in the upload).
    func uploadDSYMs(_ s: Setup, _ bundles: [(name: String, path: String)]) throws {
        let tool = try #require(
            SentryCLIEndToEndTests.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        let tree = try TempFolder("cocoa-dsyms")
        try FileManager.default.createDirectory(atPath: tree.file("dSYMs"), withIntermediateDirectories: true)
        for bundle in bundles {
            try FileManager.default.copyItem(atPath: bundle.path, toPath: tree.file("dSYMs/\(bundle.name).dSYM"))
        }
        let environment = SentryCLIEndToEndTests.quiet.merging([
            "SENTRY_URL": s.server.baseURL, "SENTRY_AUTH_TOKEN": s.project.upload,
        ]) { $1 }
        let upload = try Command.run(
            tool, ["debug-files", "upload", "--org", "o", "--project", "shop", "--wait", "dSYMs"], in: tree.path,
            environment: environment)
        #expect(upload.status == 0, "\(upload.out)\(upload.err)\n\(s.server.log.suffix(2000))")
    }

    /// A random page-aligned slide, as ASLR gives.
    static func slide(_ generator: inout SystemRandomNumberGenerator) -> UInt64 {
        0x1_0000_0000 + UInt64.random(in: 1...0x4000, using: &generator) * 0x4000
    }

    /// Checks each frame of a resolved report against llvm-symbolizer on the dSYM of the frame's build: the innermost
    /// function (`function: false` for Swift, whose names llvm-symbolizer does not demangle), file and line.
    func expectAgreement(
        _ done: [String: Any], _ frames: [(build: AppleBuilds.Build, file: UInt64)], function: Bool = true,
        _ what: String
    ) throws {
        let slots = ((done["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first ?? []
        #expect(slots.count == frames.count, "\(what): \(done)")
        for (index, frame) in frames.enumerated() where index < slots.count {
            let expected = try Self.reference(
                frame.build, Self.lookup(frame.file, caller: index > 0, frame.build.request.architecture))
            let innermost = (slots[index]["frames"] as? [[String: Any]])?.first ?? [:]
            let file = (innermost["file"] as? String)?.split(separator: "/").last.map(String.init)
            #expect(
                file == expected.file && innermost["line"] as? Int == expected.line,
                "\(what) frame \(index): \(innermost) vs \(expected)")
            if function { #expect(innermost["function"] as? String == expected.function, "\(what) frame \(index)") }
            #expect(slots[index]["build_id"] as? String == frame.build.uuid, "\(what) frame \(index)")
        }
    }

    @Test(arguments: [
        AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 5), AppleBuilds.Request(.c, .x86_64, .macOS, dwarf: 4),
        AppleBuilds.Request(.swift, .arm64, .iOS, dwarf: 5),
    ])
    func lateDSYMsResolveCocoaFramesAndRegroup(_ request: AppleBuilds.Request) async throws {
        let build = try AppleBuilds.build(request)
        // The crashing function and its caller, as file addresses of the build.
        let inner = request.language == .c ? "crash_now" : "total"
        let (innerSymbol, outerSymbol) =
            request.language == .c ? ("_crash_now", "_main") : ("_$s4shop5total", "_$s4shop8checkout")
        let innerFunction = try #require(
            build.functions.first { $0.symbol.hasPrefix(innerSymbol) }, "\(build.functions)")
        let outerFunction = try #require(
            build.functions.first { $0.symbol.hasPrefix(outerSymbol) && $0.size > 12 }, "\(build.functions)")
        let fileFrames = [innerFunction.address + (innerFunction.size >= 8 ? 4 : 0), outerFunction.address + 8]

        let s = try await start()
        defer { s.server.cleanUp() }
        var device = C.Device()
        device.arch = request.architecture.rawValue
        var generator = SystemRandomNumberGenerator()

        func crash(_ n: Int) async throws -> (id: String, base: UInt64) {
            // The UUID spelled as Sentry Cocoa sends it (upper case).
            let base = Self.slide(&generator)
            let image = C.Image(
                path: C.appPath("Shop"), debugID: build.uuid.uppercased(), address: base,
                size: build.text.upperBound - build.textVMAddr + 0x4000, arch: request.architecture.rawValue)
            let frames = fileFrames.map { C.Frame(image, base + ($0 - build.textVMAddr)) }
            let id = String(format: "%08x", n) + "0000400080000000" + String(format: "%08x", n)
            try await SentryCocoaEndToEndTests.send(
                http, s.server, s.project,
                C.event(eventID: id, crash: .badAccess(address: 0x10), frames: frames, device: device), id: id)
            return (id, base)
        }

        // Two crashes before the dSYM: grouped by module+offset, the UUID listed as lacking a dSYM.
        var crashes = [try await crash(1), try await crash(2)]
        for c in crashes {
            let before = try await report(s.server, c.id, s.read) { $0["issue_id"] is Int }
            let slots = ((before["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first ?? []
            #expect(slots.first?["status"] as? String == "missing_debug_file", "\(before)")
        }
        let early = try await report(s.server, crashes[0].id, s.read) { $0["issue_id"] is Int }["issue_id"] as? Int

        // The real sentry-cli uploads the dSYM bundle; one crash comes after it.
        try uploadDSYMs(s, [("Shop", build.dSYMBundle)])
        crashes.append(try await crash(3))

        // Every frame of every crash resolves as llvm-symbolizer resolves it, whatever the slide.
        var issues: Set<Int> = []
        for c in crashes {
            let done = try await report(s.server, c.id, s.read, until: Self.resolved)
            #expect(Self.resolved(done), "\(c.id) never resolved: \(done)\n\(s.server.log.suffix(2000))")
            try expectAgreement(
                done, fileFrames.map { (build, $0) }, function: request.language == .c,
                "\(request) slide 0x\(String(c.base, radix: 16))")
            if let issue = done["issue_id"] as? Int { issues.insert(issue) }
        }
        // All three are one issue, blamed on the crashing function; the module+offset issue is left behind.
        #expect(issues.count == 1, "\(issues)")
        let issue = try #require(issues.first)
        #expect(issue != early, "the reports moved to the issue their function names")
        let summary =
            try await http.send(.GET, s.server.baseURL + "/api/v1/issues/\(issue)", headers: s.read).json["issue"]
            as? [String: Any]
        let culprit = summary?["culprit"] as? String ?? ""
        #expect(culprit.contains(inner), "\(culprit)")
        #expect(summary?["title"] as? String == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010")
        // The UUID is no longer missing.
        let missing = try await http.send(.GET, s.server.baseURL + "/api/v1/missing-debug-files", headers: s.read).json
        let ids = (missing["missing"] as? [[String: Any]] ?? []).compactMap { $0["build_id"] as? String }
        #expect(!ids.contains(build.uuid), "\(missing)")
    }

    /// An embedded framework (a dylib, `__TEXT` at 0) crashing under the app's `main`, dSYMs uploaded first: both
    /// images resolve, and the framework's frame is the app's own code, so the crash is blamed on it.
    @Test func anEmbeddedFrameworkIsTheAppsCodeAndResolves() async throws {
        let app = try AppleBuilds.build(AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 5))
        let kit = try AppleBuilds.build(AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 5, dylib: true))
        #expect(kit.textVMAddr == 0 && app.uuid != kit.uuid)
        let crashNow = try #require(kit.functions.first { $0.symbol == "_crash_now" }, "\(kit.functions)")
        let main = try #require(app.functions.first { $0.symbol == "_main" && $0.size > 12 }, "\(app.functions)")

        let s = try await start()
        defer { s.server.cleanUp() }
        try uploadDSYMs(s, [("Shop.app", app.dSYMBundle), ("ShopKit.framework", kit.dSYMBundle)])

        var generator = SystemRandomNumberGenerator()
        let appBase = Self.slide(&generator)
        let kitBase = appBase + 0x100_0000 + UInt64.random(in: 1...0x400, using: &generator) * 0x4000
        let appImage = C.Image(path: C.appPath("Shop"), debugID: app.uuid, address: appBase, size: 0x10_0000)
        let kitImage = C.Image(
            path:
                "/private/var/containers/Bundle/Application/8C6F3C39-0A1B-4D47-9E55-7A0C41D2B3AA/Shop.app/Frameworks/ShopKit.framework/ShopKit",
            debugID: Self.debugID(kit.uuid), address: kitBase, size: 0x10_0000)
        let kitPC = crashNow.address + 4
        let mainReturn = main.address + 8
        let id = "e1d2e3f4a5b64c7d8e9fa0b1c2d3e4f5"
        try await SentryCocoaEndToEndTests.send(
            http, s.server, s.project,
            C.event(
                eventID: id, crash: .badAccess(address: 0),
                frames: [
                    C.Frame(kitImage, kitBase + kitPC), C.Frame(appImage, appBase + (mainReturn - app.textVMAddr)),
                ]),
            id: id)

        let done = try await report(s.server, id, s.read, until: Self.resolved)
        #expect(Self.resolved(done), "never resolved: \(done)\n\(s.server.log.suffix(2000))")
        try expectAgreement(done, [(kit, kitPC), (app, mainReturn)], "framework under the app")
        let issue = try #require(done["issue_id"] as? Int)
        let summary =
            try await http.send(.GET, s.server.baseURL + "/api/v1/issues/\(issue)", headers: s.read).json["issue"]
            as? [String: Any]
        #expect((summary?["culprit"] as? String)?.hasPrefix("crash_now") == true, "\(summary ?? [:])")
        #expect(summary?["title"] as? String == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000000")
    }

    /// A universal dSYM (arm64 + x86_64) uploaded by sentry-cli, which stores one file per slice: crashes of either
    /// slice, each by its own UUID, resolve as llvm-symbolizer resolves them.
    @Test func aFatDSYMServesTheCrashesOfEachSlice() async throws {
        let fat = try AppleBuilds.fat([
            AppleBuilds.Request(.c, .arm64, .iOS, dwarf: 5), AppleBuilds.Request(.c, .x86_64, .macOS, dwarf: 4),
        ])
        let s = try await start()
        defer { s.server.cleanUp() }
        try uploadDSYMs(s, [("Shop.app", fat.dSYMBundle)])

        var generator = SystemRandomNumberGenerator()
        for (n, slice) in fat.slices.enumerated() {
            let crashNow = try #require(slice.functions.first { $0.symbol == "_crash_now" })
            let main = try #require(slice.functions.first { $0.symbol == "_main" && $0.size > 12 })
            let base = Self.slide(&generator)
            let image = C.Image(
                path: C.appPath("Shop"), debugID: slice.uuid, address: base, size: 0x10_0000,
                arch: slice.request.architecture.rawValue)
            let files = [crashNow.address + 4, main.address + 8]
            var device = C.Device()
            device.arch = slice.request.architecture.rawValue
            let id = "f\(n)d2e3f4a5b64c7d8e9fa0b1c2d3e4f5"
            try await SentryCocoaEndToEndTests.send(
                http, s.server, s.project,
                C.event(
                    eventID: id, crash: .badAccess(address: 8),
                    frames: files.map { C.Frame(image, base + ($0 - slice.textVMAddr)) },
                    device: device),
                id: id)
            let done = try await report(s.server, id, s.read, until: Self.resolved)
            #expect(Self.resolved(done), "\(slice.request) never resolved: \(done)\n\(s.server.log.suffix(2000))")
            try expectAgreement(done, files.map { (slice, $0) }, "\(slice.request) of the fat dSYM")
        }
    }
}
