import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// The real `sentry-cli debug-files upload` (3.8.2, the PyPI wheel's binary, installed by tools/test) against
/// the real server on 127.0.0.1: chunk upload, assemble, the same debug-file store as symupload, nothing sent
/// twice, clear errors.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct SentryCLIEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static var sentryCLI: String? {
        let found = try? Command.run("sh", ["-c", "command -v sentry-cli"])
        guard let found, found.status == 0 else { return nil }
        let path = found.out.trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : path
    }

    /// Keeps sentry-cli to 127.0.0.1 and to what the test passes (no update check, no config from elsewhere).
    static let quiet = [
        "SENTRY_DISABLE_UPDATE_CHECK": "true", "SENTRY_LOAD_DOTENV": "0", "SENTRY_ORG": "", "SENTRY_PROJECT": "",
    ]

    /// Runs sentry-cli in `directory`; returns the exit status and stdout + stderr.
    func sentryCLI(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws -> (
        status: Int32, output: String
    ) {
        let tool = try #require(Self.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        let result = try Command.run(
            tool, arguments, in: directory, environment: Self.quiet.merging(environment) { $1 })
        return (result.status, result.out + result.err)
    }

    /// A PIE built with `gcc -g`, its split debug file and the stripped binary that links to it.
    struct Program {
        let folder: TempFolder
        let buildID: String
        var full: String { folder.file("bin/crashy") }
        var debug: String { folder.file("bin/crashy.debug") }
        var stripped: String { folder.file("bin/crashy.stripped") }

        init() throws {
            folder = try TempFolder("sentry-cli-tree")
            try FileManager.default.createDirectory(atPath: folder.file("bin"), withIntermediateDirectories: true)
            let binary = try ELFFixtures.compileC(
                ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O2", "-g", "-fPIE", "-pie"])
            try FileManager.default.moveItem(atPath: binary, toPath: folder.file("bin/crashy"))
            try Command.check("objcopy", ["--only-keep-debug", "crashy", "crashy.debug"], in: folder.file("bin"))
            try Command.check(
                "objcopy", ["--strip-debug", "--add-gnu-debuglink=crashy.debug", "crashy", "crashy.stripped"],
                in: folder.file("bin"))
            buildID = try ELFFixtures.readelfBuildID(folder.file("bin/crashy")) ?? ""
        }
    }

    /// A counter's value in the server's Prometheus text (0 when it was never incremented).
    func metric(_ server: ServerProcess, _ name: String) async throws -> Int {
        let text = String(decoding: try await http.send(.GET, server.baseURL + "/metrics").body, as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }

    func storedFiles(_ server: ServerProcess, _ token: String) async throws -> [[String: Any]] {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/debug-files", headers: [("Authorization", "Bearer \(token)")])
        return answer.json["files"] as? [[String: Any]] ?? []
    }

    /// The debug id sentry-cli itself reads from a file (`debug-files check --json`).
    func debugID(_ path: String, in directory: String) throws -> String {
        let check = try sentryCLI(["debug-files", "check", "--json", path], in: directory)
        let output = check.output
        let start = try #require(output.firstIndex(of: "{"), "\(output)")
        let json = try JSONSerialization.jsonObject(with: Data(output[start...].utf8)) as? [String: Any]
        let variants = try #require(json?["variants"] as? [[String: Any]], "\(output)")
        return try #require(variants.first?["debug_id"] as? String)
    }

    @Test func uploadsIntoTheDebugFileStoreAndSendsNothingTheSecondTime() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let debugID = try debugID(program.full, in: program.folder.path)
        #expect(debugID.count == 36)

        // When sentry-cli uploads the folder (configured through the environment, as in CI)…
        let first = try sentryCLI(
            ["debug-files", "upload", "--org", "anything", "--project", "app", "--wait", "bin"],
            in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        #expect(first.status == 0, "\(first.output)\n\(server.log.suffix(3000))")
        // …every file is stored and described as sentry-cli itself sees it.
        #expect(first.output.contains("OK \(debugID) (crashy; x86_64 library)"), "\(first.output)")
        #expect(first.output.contains("OK \(debugID) (crashy.debug; x86_64 debug companion)"), "\(first.output)")
        #expect(first.output.contains("OK \(debugID) (crashy.stripped; x86_64 library)"), "\(first.output)")
        let files = try await storedFiles(server, project.upload)
        #expect(Set(files.compactMap { $0["kind"] as? String }) == ["debuginfo", "executable"])
        #expect(files.allSatisfy { $0["build_id"] as? String == program.buildID })
        let chunkRequests = try await metric(server, "faultline_chunk_upload_requests_total")
        #expect(chunkRequests >= 1)
        #expect(try await metric(server, "faultline_chunks_received_total{outcome=\"stored\"}") == 3)

        // The symbols serve debuginfod clients at once, like symupload's.
        let debuginfo = try await http.send(
            .GET, server.baseURL + "/buildid/\(program.buildID)/debuginfo",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(debuginfo.status == 200)

        // A second run (flags this time) finds everything on the server and sends no chunk.
        let second = try sentryCLI(
            [
                "--url", server.baseURL, "--auth-token", project.upload, "debug-files", "upload", "--org", "o",
                "--project", "app", "--wait", "bin",
            ],
            in: program.folder.path)
        #expect(second.status == 0, "\(second.output)")
        #expect(second.output.contains("Nothing to upload"), "\(second.output)")
        #expect(try await metric(server, "faultline_chunk_upload_requests_total") == chunkRequests)
        #expect(try await storedFiles(server, project.upload).count == files.count)
    }

    @Test func filesSymuploadStoredAreNotSentAgain() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ci", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        try FileManager.default.removeItem(atPath: program.full)  // CI ships the split pair

        // Given symupload stored the split debug file and the stripped binary…
        let symupload = URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().appendingPathComponent(
            "symupload"
        ).path
        let uploaded = try Command.run(
            symupload, ["--server", server.baseURL, "--token", project.upload, program.folder.file("bin")])
        #expect(uploaded.status == 0, "\(uploaded.out)\(uploaded.err)")
        #expect(uploaded.out.contains("2 uploaded"))

        // …sentry-cli, offered the same two files, recognises them on the server: nothing is uploaded.
        let run = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "ci", "--wait", "bin"], in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("Nothing to upload"), "\(run.output)")
        #expect(try await metric(server, "faultline_chunk_upload_requests_total") == 0)
        let files = try await storedFiles(server, project.upload)
        #expect(files.count == 2)
        #expect(Set(files.compactMap { $0["name"] as? String }) == ["crashy.debug", "crashy.stripped"])
    }

    @Test func wrongTokensAndUnusableFilesAreClearErrors() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let env = ["SENTRY_URL": server.baseURL]

        let wrongToken = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "app", "bin"], in: program.folder.path,
            environment: env.merging(["SENTRY_AUTH_TOKEN": "not-a-token"]) { $1 })
        #expect(wrongToken.status == 1)
        #expect(wrongToken.output.contains("401"), "\(wrongToken.output)")
        #expect(wrongToken.output.contains("upload token"), "\(wrongToken.output)")
        // The ingest key is not an upload token either.
        let ingestKey = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "app", "bin"], in: program.folder.path,
            environment: env.merging(["SENTRY_AUTH_TOKEN": project.ingest]) { $1 })
        #expect(ingestKey.status == 1)

        // Another project's slug.
        let otherProject = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "other", "bin"], in: program.folder.path,
            environment: env.merging(["SENTRY_AUTH_TOKEN": project.upload]) { $1 })
        #expect(otherProject.status == 1)
        #expect(otherProject.output.contains("Project not found"), "\(otherProject.output)")

        // An ELF file without a build-id cannot be stored: sentry-cli prints the server's reason and fails.
        let noBuildID = try TempFolder("sentry-cli-nobuildid")
        _ = try ELFFixtures.compileC(
            ELFFixtures.crashyC, name: "legacy", in: noBuildID, flags: ["-g", "-Wl,--build-id=none"])
        try FileManager.default.removeItem(atPath: noBuildID.file("legacy.c"))
        let refused = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "app", "--wait", "."], in: noBuildID.path,
            environment: env.merging(["SENTRY_AUTH_TOKEN": project.upload]) { $1 })
        #expect(refused.status == 1)
        #expect(refused.output.contains("ERROR legacy"), "\(refused.output)")
        #expect(refused.output.contains("no GNU build-id"), "\(refused.output)")
        #expect(try await storedFiles(server, project.upload).isEmpty)

        // `sentry-cli info` accepts the upload token.
        let info = try sentryCLI(
            ["info"], in: program.folder.path, environment: env.merging(["SENTRY_AUTH_TOKEN": project.upload]) { $1 })
        #expect(info.status == 0, "\(info.output)")
        #expect(info.output.contains("project:write"), "\(info.output)")
    }

    /// issue #39 (5), against the real server: an assemble request that lists one small chunk 64 times (a 64 MiB
    /// valid ELF file from 12 KB sent) is refused before anything is written, and sentry-cli's own upload still works.
    @Test func aChunkListedManyTimesIsRefusedAndSentryCLIStillUploads() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let auth = ("Authorization", "Bearer \(project.upload)")

        let elf = Array(try Data(contentsOf: URL(fileURLWithPath: program.full)))
        let chunk = elf + [UInt8](repeating: 0, count: (1 << 20) - elf.count)
        let sum = try SentryChunkUploadRouteTests.sha1(chunk)
        let body = SentryChunkUploadRouteTests.multipart([("file_gzip", sum, Payloads.gzip(chunk))])
        let uploaded = try await http.send(
            .POST, server.baseURL + "/api/0/organizations/o/chunk-upload/",
            headers: [auth, ("Content-Type", "multipart/form-data; boundary=\(SentryChunkUploadRouteTests.boundary)")],
            body: Array(body.readableBytesView))
        #expect(uploaded.status == 200)
        #expect(body.readableBytes < 64 << 10)
        let before = SentryChunkUploadRouteTests.storedBytes(folder)

        let fileSum = try SentryChunkUploadRouteTests.sha1(of: chunk, times: 64)
        let list = Array(repeating: "\"\(sum)\"", count: 64).joined(separator: ",")
        let assemble = try await http.send(
            .POST, server.baseURL + "/api/0/projects/o/app/files/difs/assemble/",
            headers: [auth, ("Content-Type", "application/json")],
            body: Array(#"{"\#(fileSum)":{"name":"crashy","debug_id":null,"chunks":[\#(list)]}}"#.utf8))
        #expect(assemble.status == 200)
        let file = assemble.json[fileSum] as? [String: Any]
        #expect(file?["state"] as? String == "error", "\(assemble.json)")
        #expect((file?["detail"] as? String)?.contains("listed 64 times") == true, "\(assemble.json)")
        #expect(SentryChunkUploadRouteTests.storedBytes(folder) == before)
        #expect(try await storedFiles(server, project.upload).isEmpty)

        // sentry-cli's own upload of the real files is planned and stored as ever.
        let run = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "app", "--wait", "bin"], in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("(crashy; x86_64 library)"), "\(run.output)")
        let stored = try await storedFiles(server, project.upload)
        #expect(Set(stored.compactMap { $0["kind"] as? String }) == ["debuginfo", "executable"])
    }

    /// A native crash event shaped like sentry-native's (address-only frames, `debug_meta.images` with the GNU
    /// build-id as `code_id`), sent with `sentry-cli send-event --raw` after the symbols went up with
    /// `sentry-cli debug-files upload`: its frames come back symbolicated by Faultline's libdw symbolicator.
    @Test func nativeCrashEventFramesAreSymbolicated() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let upload = try sentryCLI(
            ["debug-files", "upload", "--org", "o", "--project", "native", "--wait", "bin/crashy.debug"],
            in: program.folder.path,
            environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        #expect(upload.status == 0, "\(upload.output)")

        // Addresses as the crashed process saw them: the PIE loaded at `base`, the crash inside process_order,
        // its caller inside main (a return address).
        let symbols = try Command.check("nm", [program.full])
        func address(of name: String) throws -> UInt64 {
            let line = try #require(
                symbols.split(separator: "\n").first { $0.hasSuffix(" " + name) }, "no \(name) in nm output")
            return try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        }
        let base: UInt64 = 0x5581_a2b3_0000
        let crash = base + (try address(of: "process_order")) + 4
        let caller = base + (try address(of: "main")) + 12
        let eventID = "b3d7b6a8c9e04f1a9d2c3b4a5f6e7d8c"
        let event = """
            {"event_id":"\(eventID)","timestamp":\(Date().timeIntervalSince1970),"platform":"native","level":"fatal",
             "release":"crashy@1.0.0","environment":"production",
             "exception":{"values":[{"type":"SIGSEGV","value":"Segfault",
               "mechanism":{"type":"signalhandler","synthetic":true,"handled":false,"meta":{"signal":{"name":"SIGSEGV","number":11}}},
               "stacktrace":{"frames":[{"instruction_addr":"0x\(String(caller, radix: 16))"},{"instruction_addr":"0x\(String(crash, radix: 16))"}]}}]},
             "debug_meta":{"images":[{"type":"elf","code_file":"/opt/crashy/bin/crashy","image_addr":"0x\(String(base, radix: 16))",
               "image_size":1048576,"code_id":"\(program.buildID)"}]},
             "contexts":{"os":{"type":"os","name":"Linux","version":"6.1.0"},"device":{"type":"device","arch":"x86_64"}},
             "sdk":{"name":"sentry.native","version":"0.7.20"}}
            """
        let file = try program.folder.write("event.json", event.replacingOccurrences(of: "\n", with: ""))
        let sent = try sentryCLI(
            ["send-event", "--raw", "--no-environ", file], in: program.folder.path,
            environment: ["SENTRY_DSN": "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)"])
        #expect(sent.status == 0, "\(sent.output)\n\(server.log.suffix(2000))")

        let read = [("Authorization", "Bearer \(project.upload)")]
        let deadline = ContinuousClock.now + .seconds(30) * waitMargin
        var report: [String: Any] = [:]
        while ContinuousClock.now < deadline {
            report = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(eventID)", headers: read).json
            if (report["symbolication"] as? [String: Any])?["state"] as? String == "complete" { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(report["kind"] as? String == "crash")
        let symbolication = try #require(report["symbolication"] as? [String: Any], "\(report)")
        #expect(symbolication["state"] as? String == "complete")
        let slots = try #require((symbolication["threads"] as? [[[String: Any]]])?.first)
        // Innermost first: the crash in process_order (with compute/scale possibly inlined into it), then main.
        let top = (slots.first?["frames"] as? [[String: Any]] ?? []).compactMap { $0["function"] as? String }
        #expect(top.last == "process_order", "\(top)")
        let bottom = (slots.last?["frames"] as? [[String: Any]] ?? []).compactMap { $0["function"] as? String }
        #expect(bottom.last == "main", "\(bottom)")
        #expect(((slots.first?["frames"] as? [[String: Any]])?.last?["file"] as? String)?.hasSuffix("crashy.c") == true)
    }
}
