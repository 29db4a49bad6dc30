import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The real `symupload` binary on an Xcode archive (real Mach-O files and dSYMs, `XcodeArchive`) against the real
/// server: `--check` names exactly the UUIDs the server lacks, an upload stores every slice of every file.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SymuploadAppleEndToEndTests {
    func symupload(_ arguments: [String], _ env: [String: String]) throws -> Command.Result {
        try Command.run(SymuploadEndToEndTests.binary, arguments, environment: env)
    }

    /// The UUIDs (32 lower-case hex digits) that `--check` lines name as not on the server.
    func missingUUIDs(_ err: String) -> [String] {
        err.split(separator: "\n").filter { $0.contains("not on the server") }.compactMap { line in
            line.split(separator: " ").dropFirst().first { $0.count == 36 }.map {
                $0.replacingOccurrences(of: "-", with: "").lowercased()
            }
        }
    }

    /// A server with an `ios` project, and an Xcode archive.
    struct Fixture {
        let server: ServerProcess
        let token: String
        let archive: XcodeArchive
        var env: [String: String] { ["FAULTLINE_URL": server.baseURL, "FAULTLINE_UPLOAD_TOKEN": token] }

        init() async throws {
            let folder = ServerProcess.newFolder()
            let project = try await ServerProcess.createProject("ios", in: folder)
            server = try await ServerProcess(folder: folder)
            token = project.upload
            archive = try XcodeArchive()
        }

        /// The project's stored debug files (`GET /api/v1/debug-files`).
        func listed() async throws -> [[String: Any]] { try await SymuploadEndToEndTests().listed(server, token) }
    }

    @Test func checkListsExactlyTheUUIDsTheServerLacks() async throws {
        let fixture = try await Fixture()
        defer { fixture.server.cleanUp() }
        let (archive, env) = (fixture.archive, fixture.env)

        // A dry run with --check asks the server and lists every slice it lacks, by UUID, architecture and file
        let dry = try symupload(["--check", "--dry-run", archive.path], env)
        #expect(dry.status == 3, "\(dry.out)\(dry.err)")
        #expect(Set(missingUUIDs(dry.err)) == archive.uuids, "\(dry.err)")
        // One line per file and slice: the dSYM and the binary of each of the four UUIDs
        #expect(missingUUIDs(dry.err).count == archive.expected.count, "\(dry.err)")
        let tool = archive.tool.slices.first { $0.request.architecture == .x86_64 }!
        let toolDSYM = archive.path + "/dSYMs/Tool.dSYM/Contents/Resources/DWARF/Tool"
        let toolUUID = XcodeArchive.appleSpelling(tool.uuid)
        let toolLine = "UUID \(toolUUID) (x86_64): not on the server (\(toolDSYM) [x86_64])"
        #expect(dry.err.contains(toolLine), "\(dry.err)")
        // Every file found is named with its UUID, architecture and type
        #expect(dry.out.contains("found \(archive.expected.count) debug files"), "\(dry.out)")
        #expect(
            dry.out.contains("Shop.app/Shop: UUID \(XcodeArchive.appleSpelling(archive.app.uuid)) (arm64, executable)"),
            "\(dry.out)")
        #expect(try await fixture.listed().isEmpty)

        // --help says what it reads and how to see what it skipped
        let help = try symupload(["--help"], [:])
        #expect(help.status == 0)
        #expect(
            help.out.contains("Mach-O") && help.out.contains("dSYM") && help.out.contains("-v, --verbose"),
            "\(help.out)")

        // Quietly skipped without -v, named with it
        #expect(!dry.out.contains("shop.o"))
        let verbose = try symupload(["--dry-run", "-v", archive.path], env)
        #expect(
            verbose.out.contains("skipped \(archive.path)/Intermediates/shop.o: a Mach-O object file"), "\(verbose.out)"
        )
        #expect(verbose.out.contains("skipped \(archive.path)/outside: a link out of the folder"), "\(verbose.out)")
    }

    @Test func anUploadStoresEverySliceAndTheCheckThenPasses() async throws {
        let fixture = try await Fixture()
        defer { fixture.server.cleanUp() }
        let (archive, env) = (fixture.archive, fixture.env)

        // Given the app's dSYM alone already on the server
        let first = try symupload([archive.path + "/dSYMs/Shop.app.dSYM"], env)
        #expect(first.status == 0, "\(first.out)\(first.err)")
        #expect(first.out.contains("1 uploaded"), "\(first.out)")

        // When the whole archive is uploaded with --check
        let run = try symupload(["--check", archive.path], env)

        // Then every other slice of every file is sent once, the check passes, and the server lists one file per
        // UUID and kind, each with its own architecture (the universal files were sent one slice at a time)
        #expect(run.status == 0, "\(run.out)\(run.err)")
        #expect(run.out.contains("\(archive.expected.count - 1) uploaded, 1 already on the server"), "\(run.out)")
        let files = try await fixture.listed()
        let stored = Set(
            files.map { file in
                ["build_id", "kind", "architecture"].map { file[$0] as? String ?? "" }.joined(separator: " ")
            })
        #expect(stored == Set(archive.expected.map { "\($0.uuid) \($0.kind) \($0.architecture)" }), "\(files)")
        #expect(
            Set(files.compactMap { $0["name"] as? String }).isSuperset(of: [
                "Shop.app.dSYM", "Tool.dSYM", "Kit.framework.dSYM", "Shop", "Kit", "Tool",
            ]))

        // And a second run finds nothing to send
        let again = try symupload(["--check", archive.path], env)
        #expect(again.status == 0, "\(again.err)")
        #expect(again.out.contains("0 uploaded, \(archive.expected.count) already on the server"), "\(again.out)")
    }

    @Test func appStoreConnectsZipIsUploadedOneSliceAFile() async throws {
        let fixture = try await Fixture()
        defer { fixture.server.cleanUp() }
        let zip = try fixture.archive.appStoreConnectZip()

        func scratchFolders() throws -> Set<String> {
            Set(
                try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter {
                    $0.hasPrefix("symupload-zips-")
                })
        }
        let before = try scratchFolders()
        let run = try symupload(["--check", "--json", zip], fixture.env)
        #expect(run.status == 0, "\(run.out)\(run.err)")
        let dSYMs = fixture.archive.expected.filter { $0.fileType == "dsym" }
        let stored = try await fixture.listed().map {
            "\($0["build_id"] as? String ?? "") \($0["kind"] as? String ?? "")"
        }
        #expect(stored.sorted() == dSYMs.map { "\($0.uuid) debuginfo" }.sorted())
        // The images were taken out into a scratch folder that is gone afterwards
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let uploaded = (summary["uploaded"] as? [[String: Any]] ?? []).compactMap { $0["path"] as? String }
        #expect(uploaded.count == dSYMs.count && uploaded.allSatisfy { $0.hasPrefix(zip + ": ") }, "\(uploaded)")
        #expect(try scratchFolders().isSubset(of: before))
    }
}
