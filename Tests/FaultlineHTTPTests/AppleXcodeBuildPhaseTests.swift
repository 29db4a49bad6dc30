import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The Xcode "Run Script" build phase, `tools/xcode/upload-dsyms.sh`, run as Xcode runs it (`/bin/sh`, a short PATH,
/// Xcode's build settings in the environment) over a products folder of real dSYMs (`XcodeArchive`), with the real
/// `symupload` against the real server: what it sends is stored and symbolicates a crash of the build, what it skips
/// it says, and a failed upload fails the build with a line Xcode lists as an error. The fastlane lane of
/// docs/apple.md is a `sh(...)` of this same script, run here with what the lane sets.
@Suite(.serialized, .tags(.endToEnd)) struct AppleXcodeBuildPhaseTests {
    static let script = DocumentedExamplesTests.root + "/tools/xcode/upload-dsyms.sh"

    /// Runs the script with Xcode's settings for a Release build of Shop, `changes` laid over them, `without` removed.
    func runPhase(_ products: String, _ changes: [String: String], without: [String] = []) throws -> Command.Result {
        var environment = [
            "PATH": "/usr/bin:/bin", "CONFIGURATION": "Release", "DEBUG_INFORMATION_FORMAT": "dwarf-with-dsym",
            "DWARF_DSYM_FOLDER_PATH": products, "DWARF_DSYM_FILE_NAME": "Shop.app.dSYM", "TARGET_NAME": "Shop",
            "FAULTLINE_SYMUPLOAD": SymuploadEndToEndTests.binary,
        ]
        environment.merge(changes) { $1 }
        for name in without { environment[name] = nil }
        // Exactly these variables, none of the test's own (`env -i`).
        let assignments = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try Command.run("/usr/bin/env", ["-i"] + assignments + ["/bin/sh", Self.script])
    }

    @Test func theRunScriptPhaseSendsTheBuildsDSYMsAndTheyServe() async throws {
        let archive = try XcodeArchive()
        let work = try TempFolder("xcode-phase")
        let products = work.file("DerivedData/Shop/Build/Products/Release-iphoneos")
        try archive.buildProducts(at: products)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let read = [("Authorization", "Bearer \(project.upload)")]
        let faultline = ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload]
        func stored() async throws -> Set<String> {
            Set(
                try await SymuploadEndToEndTests().listed(server, project.upload).compactMap {
                    $0["kind"] as? String == "debuginfo" ? $0["build_id"] as? String : nil
                })
        }

        // Given a crash of the build on the server before its dSYM
        let app = archive.app
        let crashNow = try #require(app.address(of: "_crash_now"))
        let (ips, _) = AppleCrashSymbolicationEndToEndTests.reports(
            app, [.init(fileAddress: crashNow + 4, staleName: nil)])
        let posted = try await http.send(
            .POST, server.baseURL + "/api/v1/crashes/apple", headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(ips.utf8))
        let reportID = try #require((posted.json["accepted"] as? [String])?.first, "\(posted.json)")

        // A Debug build, a build without dSYMs and a machine without the server's settings send nothing, and say so
        let debug = try runPhase(products, ["CONFIGURATION": "Debug"].merging(faultline) { $1 })
        #expect(debug.status == 0 && debug.out.contains("note: faultline: the Debug configuration"), "\(debug)")
        let dwarf = try runPhase(products, ["DEBUG_INFORMATION_FORMAT": "dwarf"].merging(faultline) { $1 })
        #expect(dwarf.status == 0 && dwarf.out.contains("writes no dSYM"), "\(dwarf)")
        let unset = try runPhase(products, [:])
        #expect(unset.status == 0 && unset.out.contains("warning: faultline: FAULTLINE_URL"), "\(unset)")
        #expect(try await stored().isEmpty)

        // A wrong token fails the build with an error line, and a phase placed before the dSYM is written too
        let refused = try runPhase(products, faultline.merging(["FAULTLINE_UPLOAD_TOKEN": "not-a-token"]) { $1 })
        #expect(refused.status != 0 && refused.out.contains("error: faultline: symupload exited"), "\(refused)")
        let early = try runPhase(
            products, faultline.merging(["FAULTLINE_DSYMS": "target", "DWARF_DSYM_FILE_NAME": "Late.app.dSYM"]) { $1 })
        #expect(early.status == 1 && early.out.contains("error: faultline: no dSYM at"), "\(early)")
        let noTool = try runPhase(
            products, faultline.merging(["FAULTLINE_UPLOADER": "symupload"]) { $1 }, without: ["FAULTLINE_SYMUPLOAD"])
        #expect(noTool.status == 1 && noTool.out.contains("error: faultline: symupload not found"), "\(noTool)")

        // When the phase sends the target's own dSYM, then all of the build's
        let target = try runPhase(products, faultline.merging(["FAULTLINE_DSYMS": "target"]) { $1 })
        #expect(target.status == 0, "\(target)")
        #expect(try await stored() == [app.uuid])
        // (all of them as the fastlane lane of docs/apple.md runs the script: the archive's dSYMs folder, a
        // configuration, and no other Xcode variable)
        let lane = try runPhase(
            archive.path + "/dSYMs", faultline,
            without: ["DEBUG_INFORMATION_FORMAT", "DWARF_DSYM_FILE_NAME", "TARGET_NAME"])
        #expect(lane.status == 0, "\(lane)")
        #expect(lane.out.contains("note: faultline: sending 3 dSYM bundle(s)"), "\(lane.out)")

        // Then the server holds every slice of every dSYM, and the crash resolves through the app's dSYM as
        // llvm-symbolizer reads it
        let dSYMs = Set(archive.expected.filter { $0.fileType == "dsym" }.map(\.uuid))
        #expect(try await stored() == dSYMs)
        let reference = try AppleCrashSymbolicationEndToEndTests.reference(app.dwarfFile, crashNow + 4)
        let done = try await SymbolicationEndToEndTests().waitFor(
            http, server.baseURL + "/api/v1/reports/\(reportID)", read
        ) { $0 == "complete" }
        let slot = ((done["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]])?.first?.first
        let innermost = (slot?["frames"] as? [[String: Any]])?.first
        #expect(slot?["status"] as? String == "dwarf", "\(done)")
        #expect(innermost?["function"] as? String == reference.function, "\(done)")
        #expect(innermost?["line"] as? Int == reference.line, "\(done)")

        // And a second build sends nothing new
        let again = try runPhase(products, faultline)
        #expect(again.status == 0 && again.out.contains("0 uploaded"), "\(again)")
    }

    /// A Mac without symupload: the phase sends the build's dSYMs with the real sentry-cli (3.8.2, from PyPI) instead,
    /// which splits each universal file into its slices as it does for Sentry.
    @Test func withoutSymuploadThePhaseSendsWithSentryCLI() async throws {
        let tool = try #require(
            SentryCLIEndToEndTests.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        // The pip shim's target: the phase runs with Xcode's short PATH, where a shim finds no Python.
        let real = try Command.run("sh", ["-c", "pyenv which sentry-cli 2>/dev/null || command -v sentry-cli"])
        let binary = real.status == 0 ? real.out.trimmingCharacters(in: .whitespacesAndNewlines) : tool
        let archive = try XcodeArchive()
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let faultline = [
            "FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload, "FAULTLINE_SENTRY_CLI": binary,
        ]

        // Given no symupload: without the project's slug sentry-cli cannot be run, and the phase says so
        let noSlug = try runPhase(archive.path + "/dSYMs", faultline, without: ["FAULTLINE_SYMUPLOAD"])
        #expect(noSlug.status == 1 && noSlug.out.contains("error: faultline: sentry-cli needs"), "\(noSlug)")
        // and a wrong token fails the build
        let refused = try runPhase(
            archive.path + "/dSYMs",
            faultline.merging(["FAULTLINE_PROJECT": "shop", "FAULTLINE_UPLOAD_TOKEN": "not-a-token"]) { $1 },
            without: ["FAULTLINE_SYMUPLOAD"])
        #expect(refused.status != 0 && refused.out.contains("error: faultline: sentry-cli exited"), "\(refused)")

        // When the phase runs with the slug
        let sent = try runPhase(
            archive.path + "/dSYMs", faultline.merging(["FAULTLINE_PROJECT": "shop"]) { $1 },
            without: ["FAULTLINE_SYMUPLOAD"])
        #expect(sent.status == 0 && sent.out.contains("with sentry-cli"), "\(sent)")

        // Then the server holds every slice of every dSYM, as after symupload
        let listed = try await SymuploadEndToEndTests().listed(server, project.upload)
        let stored = Set(listed.compactMap { $0["kind"] as? String == "debuginfo" ? $0["build_id"] as? String : nil })
        let dSYMs = Set(archive.expected.filter { $0.fileType == "dsym" }.map(\.uuid))
        #expect(dSYMs.count > 1, "the archive has dSYMs of several slices")
        #expect(stored == dSYMs)
    }
}
