import AsyncHTTPClient
import Foundation
import NIOHTTP1
import Testing
import TestSupport

/// The real `symupload` binary against the real server.
@Suite(.serialized) struct SymuploadEndToEndTests {
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
        for (from, to) in [(program.debug, "bin/crashy.debug"), (program.stripped, "bin/crashy"), (program.full, "bin/lib/crashy.full")] {
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
        let lib = try ELFFixtures.compileC("int helper(int x) { return x * 2; }", name: "libhelper.so", in: tree, flags: ["-shared", "-fPIC", "-g"])
        try Command.check("objcopy", ["--strip-debug", lib])
        let gated = try symupload([tree.path, "--check"], environment: env)
        #expect(gated.status == 3)
        #expect(gated.err.contains("no debug information"))

        let wrongToken = try symupload([tree.path], environment: ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": "nope"])
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
        let result = try symupload([tree.path, "--attempts", "1"], environment: ["FAULTLINE_URL": "http://127.0.0.1:9", "FAULTLINE_UPLOAD_TOKEN": "t"])
        #expect(result.status == 1)
        #expect(result.err.contains("cannot reach"))
    }

    func listed(_ server: ServerProcess, _ token: String) async throws -> [[String: Any]] {
        let answer = try await HTTP(client: HTTPClient.shared).send(.GET, server.baseURL + "/api/v1/debug-files", headers: [("Authorization", "Bearer \(token)")])
        return answer.json["files"] as? [[String: Any]] ?? []
    }
}
