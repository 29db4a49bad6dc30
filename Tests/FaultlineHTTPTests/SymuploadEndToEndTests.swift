import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// The real `symupload` binary against the real server.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SymuploadEndToEndTests {
    static var binary: String {
        URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent().appendingPathComponent("symupload").path
    }

    func symupload(_ arguments: [String], environment: [String: String] = [:]) throws -> Command.Result {
        try Command.run(Self.binary, arguments, environment: environment)
    }

    @Test func uploadsWhatIsMissingOnceAndGatesCI() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ci", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let tree = try TempFolder("symupload-tree")
        try FileManager.default.createDirectory(atPath: tree.file("bin/lib"), withIntermediateDirectories: true)
        let program = try BuiltProgram()
        for (from, to) in [
            (program.debug, "bin/crashy.debug"), (program.stripped, "bin/crashy"),
            (program.full, "bin/lib/crashy.full"),
        ] {
            try FileManager.default.copyItem(atPath: from, toPath: tree.file(to))
        }
        try tree.write("bin/README.txt", "not an ELF file")
        let env = ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload]

        let dry = try symupload(["--dry-run", "--json", tree.path], environment: env)
        #expect(dry.status == 0, "\(dry.err)")
        let planned = try JSONSerialization.jsonObject(with: Data(dry.out.utf8)) as? [String: Any]
        #expect((planned?["uploaded"] as? [[String: Any]])?.count == 2)
        #expect(try await listed(server, project.upload).isEmpty)  // a dry run uploads nothing

        let first = try symupload([tree.path, "--check"], environment: env)
        #expect(first.status == 0, "\(first.out)\(first.err)")
        #expect(first.out.contains("2 uploaded"))
        let files = try await listed(server, project.upload)
        #expect(Set(files.compactMap { $0["kind"] as? String }) == ["debuginfo", "executable"])
        // The smallest file that provides each kind was sent: the split debug file and the stripped binary.
        #expect(Set(files.compactMap { $0["name"] as? String }) == ["crashy.debug", "crashy"])

        let again = try symupload([tree.path, "--check"], environment: env)
        #expect(again.status == 0)
        #expect(again.out.contains("0 uploaded, 3 already on the server"))

        // A stripped library whose debug information is nowhere: --check fails, plain upload does not.
        let lib = try ELFFixtures.compileC(
            "int helper(int x) { return x * 2; }", name: "libhelper.so", in: tree, flags: ["-shared", "-fPIC", "-g"])
        try Command.check("objcopy", ["--strip-debug", lib])
        let gated = try symupload([tree.path, "--check"], environment: env)
        #expect(gated.status == 3)
        #expect(gated.err.contains("no debug information"))

        let wrongToken = try symupload(
            [tree.path], environment: ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": "nope"])
        #expect(wrongToken.status == 1)
        #expect(wrongToken.err.contains("401"))
        let usage = try symupload([tree.path], environment: ["FAULTLINE_URL": "", "FAULTLINE_UPLOAD_TOKEN": ""])
        #expect(usage.status == 64)
    }

    @Test func aServerThatIsDownIsAnErrorNotSuccess() throws {
        let tree = try TempFolder("symupload-tree")
        let program = try BuiltProgram()
        try FileManager.default.copyItem(atPath: program.full, toPath: tree.file("crashy"))
        // Port 9 (discard) on loopback: nothing listens there in the test environment.
        let result = try symupload(
            [tree.path, "--attempts", "1"],
            environment: ["FAULTLINE_URL": "http://127.0.0.1:9", "FAULTLINE_UPLOAD_TOKEN": "t"])
        #expect(result.status == 1)
        #expect(result.err.contains("cannot reach"))
    }

    /// Issue #39.8: a line table that names `/proc/self/environ`, `/etc/passwd` and a link out of the tree gets
    /// only the real sources uploaded, the rest listed, and the server has nothing else to serve.
    @Test func includeSourcesUploadsOnlyTheSourceTreeAndListsTheRest() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ci", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let tree = try HostileSourceTree()
        let buildID = try #require(try ELFFixtures.readelfBuildID(tree.binary))
        // A secret in symupload's own environment: what /proc/self/environ would have handed over.
        let secret = "ci-secret-\(UUID().uuidString)"
        let env = ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": project.upload, "CI_DEPLOY_KEY": secret]

        // A dry run says in one line per build-id what it leaves out, and why.
        let text = try symupload(["--include-sources", "--dry-run", tree.folder.file("bin")], environment: env)
        #expect(text.status == 0, "\(text.err)")
        #expect(
            text.out.contains("left out 6 files of \(tree.binary): /etc/passwd (outside the source roots)"),
            "\(text.out)")
        #expect(text.out.contains("/proc/self/environ (under /proc, never bundled)"), "\(text.out)")

        let run = try symupload(["--include-sources", "--json", tree.folder.file("bin")], environment: env)
        #expect(run.status == 0, "\(run.out)\(run.err)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any], "\(run.out)")
        let leftOut = (summary["left_out"] as? [[String: Any]] ?? []).compactMap { entry -> (String, String)? in
            guard entry["build_id"] as? String == buildID, let path = entry["path"] as? String else { return nil }
            return (path, entry["reason"] as? String ?? "")
        }
        let reasons = Dictionary(leftOut, uniquingKeysWith: { first, _ in first })
        #expect(Set(reasons.keys) == Set(tree.hostile), "\(run.out)")
        #expect(reasons["/proc/self/environ"] == "under /proc, never bundled")
        #expect(reasons["/etc/passwd"] == "outside the source roots")
        #expect(reasons[tree.sources + "/escape.h"]?.hasPrefix("a link out of the source roots") == true)
        let kinds = (summary["uploaded"] as? [[String: Any]] ?? []).flatMap { $0["kinds"] as? [String] ?? [] }
        #expect(kinds.contains("sources"), "\(run.out)")

        // The server serves the real sources and nothing the line table named beyond them.
        let auth = [("Authorization", "Bearer \(project.upload)")]
        let base = server.baseURL + "/buildid/\(buildID)/source"
        for path in tree.real {
            let served = try await HTTP(client: HTTPClient.shared).send(.GET, base + path, headers: auth)
            #expect(served.status == 200, "\(path)")
        }
        for path in tree.hostile {
            let served = try await HTTP(client: HTTPClient.shared).send(.GET, base + path, headers: auth)
            #expect(served.status == 404, "\(path) was served")
            #expect(!String(decoding: served.body, as: UTF8.self).contains(secret))
        }
    }

    @Test func sourceRootIsCheckedBeforeAnythingIsSent() throws {
        let env = ["FAULTLINE_URL": "http://127.0.0.1:9", "FAULTLINE_UPLOAD_TOKEN": "t"]
        let tree = try TempFolder("symupload-tree")
        let slash = try symupload(["--include-sources", "--source-root", "/", tree.path], environment: env)
        #expect(slash.status == 64)
        #expect(slash.err.contains("would let a line table name any file"), "\(slash.err)")
        let proc = try symupload(["--include-sources", "--source-root", "/proc/self", tree.path], environment: env)
        #expect(proc.status == 64)
        #expect(proc.err.contains("nothing under /proc is ever bundled"), "\(proc.err)")
        let alone = try symupload(["--source-root", tree.path, tree.path], environment: env)
        #expect(alone.status == 64)
        #expect(alone.err.contains("--source-root needs --include-sources"), "\(alone.err)")
    }

    func listed(_ server: ServerProcess, _ token: String) async throws -> [[String: Any]] {
        let answer = try await HTTP(client: HTTPClient.shared).send(
            .GET, server.baseURL + "/api/v1/debug-files", headers: [("Authorization", "Bearer \(token)")])
        return answer.json["files"] as? [[String: Any]] ?? []
    }
}
