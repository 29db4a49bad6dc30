import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Source bundles end to end, with the real clients against the real server on 127.0.0.1: the real
/// `sentry-cli debug-files upload --include-sources` stores a program's sources, a crash of that program shows the
/// crashing frame's line of code on its issue page (also in headless Chromium), and the real `debuginfod-find source`
/// fetches a file; the native upload route takes a bundle by its magic.
@Suite(.serialized, .tags(.endToEnd, .chromium, .sentryClients), .provisioned) struct SourceBundleEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// `crashy.c` built with `gcc -g -O0` (each statement its own line) as a PIE.
    struct Program {
        let folder: TempFolder
        let buildID: String
        var binary: String { folder.file("bin/crashy") }
        var source: String { folder.file("crashy.c") }
        init() throws {
            folder = try TempFolder("source-bundle-e2e")
            try FileManager.default.createDirectory(atPath: folder.file("bin"), withIntermediateDirectories: true)
            let built = try ELFFixtures.compileC(
                ELFFixtures.crashyC, name: "crashy", in: folder, flags: ["-O0", "-g", "-fPIE", "-pie"])
            try FileManager.default.moveItem(atPath: built, toPath: folder.file("bin/crashy"))
            buildID = try ELFFixtures.readelfBuildID(folder.file("bin/crashy")) ?? ""
        }

        /// The address of `symbol` + `offset` in the binary (nm), and the line binutils' addr2line gives it.
        func address(of symbol: String, plus offset: UInt64) throws -> (address: UInt64, line: Int) {
            let symbols = try Command.check("nm", [binary])
            let line = try #require(
                symbols.split(separator: "\n").first { $0.hasSuffix(" " + symbol) }, "no \(symbol) in nm output")
            let address = try #require(UInt64(line.split(separator: " ")[0], radix: 16)) + offset
            let where_ = try Command.check("addr2line", ["-e", binary, "0x" + String(address, radix: 16)])
            let number = try #require(
                Int(where_.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ":").last ?? ""),
                "\(where_)")
            return (address, number)
        }

        /// Line `number` of the source (1-based).
        func sourceLine(_ number: Int) throws -> String {
            try String(contentsOfFile: source, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false)[number - 1].description
        }
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }

    func sentryCLI(_ arguments: [String], in directory: String, environment: [String: String]) throws -> (
        status: Int32, output: String
    ) {
        let tool = try #require(
            SourceBundles.sentryCLI, "sentry-cli is not installed (tools/test installs it with pip)")
        let result = try Command.run(
            tool, arguments, in: directory, environment: SourceBundles.quiet.merging(environment) { $1 })
        return (result.status, result.out + result.err)
    }

    @Test func sentryCLIIncludeSourcesPutsTheCrashingLineOnTheIssuePage() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()

        // When sentry-cli uploads the binary with its sources…
        let upload = try sentryCLI(
            [
                "debug-files", "upload", "--include-sources", "--org", "o", "--project", "native", "--wait",
                "bin/crashy",
            ],
            in: program.folder.path, environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        // …both the binary and its source bundle are accepted (the bundle as a source bundle, not "not an ELF file").
        #expect(upload.status == 0, "\(upload.output)\n\(server.log.suffix(3000))")
        #expect(upload.output.contains("(crashy; x86_64 sources)"), "\(upload.output)")
        #expect(upload.output.contains("(crashy; x86_64 library)"), "\(upload.output)")
        #expect(!upload.output.contains("ERROR"), "\(upload.output)")
        let files = try await http.send(
            .GET, server.baseURL + "/api/v1/debug-files", headers: [("Authorization", "Bearer \(project.upload)")])
        let kinds = (files.json["files"] as? [[String: Any]] ?? []).filter {
            $0["build_id"] as? String == program.buildID
        }.compactMap { $0["kind"] as? String }
        #expect(Set(kinds) == ["debuginfo", "executable", "sources"], "\(files.json)")
        // A second run finds everything on the server.
        let again = try sentryCLI(
            [
                "debug-files", "upload", "--include-sources", "--org", "o", "--project", "native", "--wait",
                "bin/crashy",
            ],
            in: program.folder.path, environment: ["SENTRY_URL": server.baseURL, "SENTRY_AUTH_TOKEN": project.upload])
        #expect(again.status == 0, "\(again.output)")
        #expect(again.output.contains("Nothing to upload"), "\(again.output)")

        // Then a crash of that program (a native event, as sentry-native sends it)…
        let crash = try program.address(of: "process_order", plus: 8)
        let caller = try program.address(of: "main", plus: 12)
        let base: UInt64 = 0x5581_a2b3_0000
        let eventID = "c4e8c7b9dae15f2bae3d4c5b6a7f8e9d"
        let event = """
            {"event_id":"\(eventID)","timestamp":\(Date().timeIntervalSince1970),"platform":"native","level":"fatal",
             "release":"crashy@1.0.0",
             "exception":{"values":[{"type":"SIGSEGV","value":"Segfault",
               "mechanism":{"type":"signalhandler","synthetic":true,"handled":false,"meta":{"signal":{"name":"SIGSEGV","number":11}}},
               "stacktrace":{"frames":[{"instruction_addr":"0x\(String(base + caller.address, radix: 16))"},
                                       {"instruction_addr":"0x\(String(base + crash.address, radix: 16))"}]}}]},
             "debug_meta":{"images":[{"type":"elf","code_file":"/opt/crashy/bin/crashy","image_addr":"0x\(String(base, radix: 16))",
               "image_size":1048576,"code_id":"\(program.buildID)"}]},
             "contexts":{"os":{"type":"os","name":"Linux","version":"6.1.0"},"device":{"type":"device","arch":"x86_64"}},
             "sdk":{"name":"sentry.native","version":"0.7.20"}}
            """
        let file = try program.folder.write("event.json", event.replacingOccurrences(of: "\n", with: ""))
        let sent = try sentryCLI(
            ["send-event", "--raw", "--no-environ", file], in: program.folder.path,
            environment: ["SENTRY_DSN": "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)"])
        #expect(sent.status == 0, "\(sent.output)")
        let read = [("Authorization", "Bearer \(project.upload)")]
        var issueID = 0
        #expect(
            try await eventually {
                let report = try await http.send(.GET, server.baseURL + "/api/v1/reports/\(eventID)", headers: read)
                    .json
                guard (report["symbolication"] as? [String: Any])?["state"] as? String == "complete" else {
                    return false
                }
                let issues = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: read).json
                issueID = (issues["issues"] as? [[String: Any]])?.first?["id"] as? Int ?? 0
                return issueID > 0
            })

        // …has an issue page that shows the crashing frame's line of code among its neighbours, marked.
        let site = try TempFolder("source-bundle-site")
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site.path])
        #expect(rendered.status == 0, "\(rendered.err)")
        let page = try String(contentsOfFile: site.file("native/issues/\(issueID).html"), encoding: .utf8)
        let focus =
            "<li class=\"source-focus\"><mark><code>\(Self.escaped(try program.sourceLine(crash.line)))</code></mark>"
        #expect(page.contains(focus), "line \(crash.line) not marked:\n\(page)")
        #expect(
            page.contains(
                "<figcaption>crashy.c, lines \(max(1, crash.line - 5))–\(crash.line + 5) (line \(crash.line) marked)</figcaption>"
            ))
        #expect(page.contains("<li><code>\(Self.escaped(try program.sourceLine(crash.line + 1)))</code></li>"))
        // The caller's line too, and both frames are the app's own.
        #expect(page.contains("(line \(caller.line) marked)"))
        #expect(page.components(separatedBy: "<li class=\"frame-in-app\">").count - 1 == 2)

        // In a real browser the page loads cleanly and the marked line is in the DOM.
        if let browser = ChromiumDashboardTests.chromium {
            let profile = try TempFolder("chromium-source-profile")
            let result = try Command.run(
                browser,
                [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                    "--user-data-dir=\(profile.path)",
                    "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files", "--dump-dom",
                    "file://" + site.file("native/issues/\(issueID).html"),
                ])
            #expect(result.status == 0)
            #expect(result.out.contains("class=\"source-focus\""))
            #expect(result.out.contains(Self.escaped(try program.sourceLine(crash.line))))
            for failure in ["ERR_FILE_NOT_FOUND", "Uncaught"] { #expect(!result.err.contains(failure)) }
        } else {
            Issue.record("chromium is not installed (tools/test installs it)")
        }
    }

    @Test func symuploadsRouteTakesABundleAndDebuginfodFindFetchesASource() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("symbols", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let bundle = Array(try Data(contentsOf: URL(fileURLWithPath: try SourceBundles.bundle(program.binary))))
        let auth = [("Authorization", "Bearer \(project.upload)")]

        // The "what is missing" question accepts kind `sources`…
        let question = Array(
            #"{"files":[{"build_id":"\#(program.buildID)","kinds":["sources"]},{"build_id":"\#(program.buildID)"}]}"#
                .utf8)
        let before = try await http.send(
            .POST, server.baseURL + "/api/v1/debug-files/missing", headers: auth, body: question)
        #expect(before.status == 200)
        let missing = (before.json["missing"] as? [[String: Any]] ?? []).compactMap { $0["kinds"] as? [String] }
        #expect(missing == [["sources"], ["debuginfo", "executable"]], "\(before.json)")

        // …a bundle whose manifest names another build-id is refused, the right one stored as kind `sources`.
        let wrong = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/abcdef", headers: auth, body: bundle)
        #expect(wrong.status == 400)
        #expect(wrong.json["error"] as? String == "build_id_mismatch", "\(wrong.json)")
        let stored = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(program.buildID)?name=crashy.src.zip", headers: auth,
            body: bundle)
        #expect(stored.status == 201, "\(stored.json)")
        #expect((stored.json["files"] as? [[String: Any]])?.compactMap { $0["kind"] as? String } == ["sources"])
        let after = try await http.send(
            .POST, server.baseURL + "/api/v1/debug-files/missing", headers: auth, body: question)
        #expect(
            (after.json["missing"] as? [[String: Any]] ?? []).compactMap { $0["kinds"] as? [String] } == [
                ["debuginfo", "executable"]
            ])
        // A damaged bundle is refused with the reason.
        var damaged = bundle
        damaged.removeLast(30)
        let refused = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(program.buildID)", headers: auth, body: damaged)
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("source bundle"))

        // debuginfod-find fetches the source by build-id and absolute path.
        let headers = try program.folder.write("headers", "Authorization: Bearer \(project.upload)\n")
        /// The exit status and, on success, the fetched file's text (else the client's error output).
        func find(_ path: String, headers: String?) throws -> (status: Int32, out: String, err: String) {
            let cache = try TempFolder("debuginfod-source-cache")
            var environment = ["DEBUGINFOD_URLS": server.baseURL, "DEBUGINFOD_CACHE_PATH": cache.path]
            if let headers { environment["DEBUGINFOD_HEADERS_FILE"] = headers }
            let result = try Command.run(
                "debuginfod-find", ["source", program.buildID, path], environment: environment)
            if result.status == 0 {
                let fetched = result.out.trimmingCharacters(in: .whitespacesAndNewlines)
                return (0, (try? String(contentsOfFile: fetched, encoding: .utf8)) ?? "", result.err)
            }
            return (result.status, result.out, result.err)
        }
        let fetched = try find(program.source, headers: headers)
        #expect(fetched.status == 0, "\(fetched.err)")
        #expect(fetched.out == (try String(contentsOfFile: program.source, encoding: .utf8)))
        // The same path written another way is the same file; a path the bundle lacks is not found.
        let parent = (program.folder.path as NSString).lastPathComponent
        #expect(try find(program.folder.path + "/../" + parent + "/./crashy.c", headers: headers).out == fetched.out)
        #expect(try find("/nowhere/crashy.c", headers: headers).status != 0)
        // Without a token, or with another project's, there is nothing.
        #expect(try find(program.source, headers: nil).status != 0)
        let otherHeaders = try program.folder.write("other-headers", "Authorization: Bearer \(other.upload)\n")
        #expect(try find(program.source, headers: otherHeaders).status != 0)
        // The route answers 404 with a reason for a path the bundle lacks.
        let absent = try await http.send(
            .GET, server.baseURL + "/buildid/\(program.buildID)/source/nowhere/x.c", headers: auth)
        #expect(absent.status == 404)
        let present = try await http.send(
            .GET, server.baseURL + "/buildid/\(program.buildID)/source" + program.source, headers: auth)
        #expect(present.status == 200)
        #expect(String(decoding: present.body, as: UTF8.self) == fetched.out)
        // Percent-encoded and dotted paths are decoded and normalised before the lookup, never used on disk.
        let encoded = try await http.send(
            .GET,
            server.baseURL + "/buildid/\(program.buildID)/source" + program.folder.path + "/%2E/sub/%2E%2E/crashy%2Ec",
            headers: auth)
        #expect(encoded.status == 200)
        #expect(String(decoding: encoded.body, as: UTF8.self) == fetched.out)
        let outside = try await http.send(
            .GET, server.baseURL + "/buildid/\(program.buildID)/source/etc/passwd", headers: auth)
        #expect(outside.status == 404)
    }

    /// Issue #39.4: 128 directory entries naming one 8 MiB local entry (17 KB on the wire) made the server inflate and
    /// CRC 1 GiB; the upload is now refused as it is opened, with the reason.
    @Test func aBundleWhoseEntriesShareTheirDataIsRefusedWithTheReason() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("alias", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let buildID = "a1b2c3d4e5f60718293a4b5c6d7e8f9001122334"
        let files = try TempFolder("source-bundle-alias-e2e")
        let bundle = Array(
            try Data(
                contentsOf: URL(
                    fileURLWithPath: try SourceBundles.crafted(
                        buildID: buildID, size: 8 << 20, aliases: 128, in: files))))
        #expect(bundle.count < 20_000)
        let auth = [("Authorization", "Bearer \(project.upload)")]
        let answer = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: auth, body: bundle)
        #expect(answer.status == 400)
        #expect(answer.json["error"] as? String == "not_elf", "\(answer.json)")
        #expect(
            (answer.json["message"] as? String)?.contains("overlap (entries may not share their data)") == true,
            "\(answer.json)")
        let listed = try await http.send(.GET, server.baseURL + "/api/v1/debug-files", headers: auth)
        #expect((listed.json["files"] as? [Any])?.isEmpty == true, "\(listed.json)")
    }

    /// Issue #39.4: checking a bundle (inflating and CRC-ing every file) runs on threads of its own, so two uploads
    /// being checked at once no longer hold the threads that answer requests: `/healthz` answers meanwhile.
    @Test func healthzAnswersWhileTwoHeavyBundlesAreChecked() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("heavy", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        // Given bundles as heavy as the limits allow: 128 distinct files of 8 MiB of zeros, 1 MiB on the wire, 1 GiB
        // to inflate and CRC each.
        let files = try TempFolder("source-bundle-heavy-e2e")
        let ids = ["b1b2c3d4e5f60718293a4b5c6d7e8f9001122334", "c1b2c3d4e5f60718293a4b5c6d7e8f9001122334"]
        var bundles: [[UInt8]] = []
        for (i, id) in ids.enumerated() {
            bundles.append(
                Array(
                    try Data(
                        contentsOf: URL(
                            fileURLWithPath: try SourceBundles.crafted(
                                buildID: id, files: 128, size: 8 << 20, in: files, name: "heavy\(i).sysb")))))
        }
        #expect(bundles[0].count < 2 << 20)
        let auth = [("Authorization", "Bearer \(project.upload)")]
        let clock = ContinuousClock()
        let start = clock.now
        let pending = Locked(ids.count)
        // When both are uploaded at once…
        let uploads = Task { [http] in
            try await withThrowingTaskGroup(of: (status: Int, after: Duration).self) { group in
                for (id, bundle) in zip(ids, bundles) {
                    group.addTask {
                        let answer = try await http.send(
                            .PUT, server.baseURL + "/api/v1/debug-files/\(id)", headers: auth, body: bundle,
                            timeout: .seconds(300))
                        pending.withLock { $0 -= 1 }
                        return (answer.status, clock.now - start)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // …/healthz is asked, one request after another, until both are answered.
        var latencies: [Duration] = []
        while pending.withLock({ $0 }) > 0 {
            let asked = clock.now
            let health = try await http.send(.GET, server.baseURL + "/healthz", timeout: .seconds(300))
            #expect(health.status == 200)
            if pending.withLock({ $0 }) > 0 { latencies.append(clock.now - asked) }
            try await Task.sleep(for: .milliseconds(20))
        }
        let answers = try await uploads.value
        #expect(answers.map(\.status) == [201, 201], "\(server.log.suffix(2000))")
        // Then every /healthz answered in less than half the time the first check took (a ratio within one run, not a
        // wall-clock bound). Before, each check held a thread of the two-thread cooperative pool, and a /healthz asked
        // during the checks waited for one of them to end.
        let firstCheck = try #require(answers.map(\.after).min())
        let slowest = try #require(latencies.max(), "no /healthz was asked while the uploads were being checked")
        #expect(slowest * 2 < firstCheck, "slowest /healthz \(slowest), first upload answered after \(firstCheck)")
        #expect(latencies.count >= 3, "\(latencies)")
    }

    /// `symupload --include-sources` (the real binary) bundles what the line tables name and the server serves it.
    @Test func symuploadIncludeSourcesStoresTheProgramsSources() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ci", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let program = try Program()
        let symupload = URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().appendingPathComponent(
            "symupload"
        ).path
        let env = ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload]
        // compileC runs gcc from the package folder (the compilation directory): the source's folder is a root only when given.
        let first = try Command.run(
            symupload,
            ["--include-sources", "--source-root", program.folder.path, "--check", program.folder.file("bin")],
            environment: env)
        #expect(first.status == 0, "\(first.out)\(first.err)")
        #expect(first.out.contains("uploaded the sources of"), "\(first.out)")
        let auth = [("Authorization", "Bearer \(project.upload)")]
        let files = try await http.send(.GET, server.baseURL + "/api/v1/debug-files", headers: auth)
        let kinds = (files.json["files"] as? [[String: Any]] ?? []).filter {
            $0["build_id"] as? String == program.buildID
        }.compactMap { $0["kind"] as? String }
        #expect(Set(kinds) == ["debuginfo", "executable", "sources"], "\(files.json)")
        // The crashing program's own source comes back through debuginfod, byte for byte.
        let served = try await http.send(
            .GET, server.baseURL + "/buildid/\(program.buildID)/source" + program.source, headers: auth)
        #expect(served.status == 200)
        #expect(
            String(decoding: served.body, as: UTF8.self)
                == (try String(contentsOfFile: program.source, encoding: .utf8)))
        // A second run asks again and uploads nothing.
        let again = try Command.run(symupload, ["--include-sources", program.folder.file("bin")], environment: env)
        #expect(again.status == 0)
        #expect(!again.out.contains("uploading sources"), "\(again.out)")
    }
}
