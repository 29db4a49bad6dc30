import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// A gcc program with a chosen build-id (`-Wl,--build-id=0x…`) and one named function: two of them with the
/// same build-id and different functions are what an attacker and a victim would upload.
struct TwinProgram {
    let path: String
    let function: String
    /// The function's address in the file (nm).
    let address: UInt64
    let bytes: [UInt8]

    init(function: String, buildID: String, in folder: TempFolder) throws {
        let source = """
            #include <stdio.h>
            __attribute__((noinline)) int \(function)(int x) { return x * 3 + 1; }
            int main(int argc, char **argv) { printf("%d\\n", \(function)(argc)); return 0; }
            """
        path = try ELFFixtures.compileC(
            source, name: function, in: folder, flags: ["-O1", "-g", "-Wl,--build-id=0x\(buildID)"])
        self.function = function
        let nm = try Command.check("nm", ["--defined-only", path])
        let line = try #require(nm.split(separator: "\n").first { $0.hasSuffix(" T \(function)") })
        address = try #require(UInt64(line.split(separator: " ")[0], radix: 16))
        bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    static func randomBuildID() -> String {
        (0..<20).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }
}

/// Debug files belong to the project that uploaded them (issue #9, finding 1), against the real server:
/// two projects, one build-id, different bytes.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DebugFileIsolationTests {
    let http = HTTP(client: HTTPClient.shared)
    static let base: UInt64 = 0x7f00_0000_0000

    func put(_ server: ServerProcess, _ token: String, _ buildID: String, _ bytes: [UInt8]) async throws -> HTTP.Answer
    {
        try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: [("Authorization", "Bearer \(token)")],
            body: bytes)
    }

    func get(_ server: ServerProcess, _ token: String, _ path: String) async throws -> HTTP.Answer {
        try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
    }

    static func sha256(_ bytes: [UInt8]) throws -> String {
        let folder = try TempFolder("sha256")
        let file = folder.file("data")
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        return String(try Command.check("sha256sum", [file]).prefix(64))
    }

    /// Posts a crash whose one frame is inside `program.function`; returns its event id.
    func postCrash(_ server: ServerProcess, ingest: String, _ program: TwinProgram, buildID: String, n: Int)
        async throws -> String
    {
        let id = String(format: "%08x000040008000%012x", n, n)
        let report = """
            {"event_id":"\(id)","kind":"crash","timestamp":1795000000,
             "modules":[{"name":"twin","build_id":"\(buildID)","base_address":"0x\(String(Self.base, radix: 16))","size":16777216}],
             "threads":[{"crashed":true,"frames":[{"address":"0x\(String(Self.base + program.address + 1, radix: 16))","kind":"pc"}]}]}
            """
        let posted = try await http.postReports(server.baseURL, key: ingest, report)
        #expect(posted.status == 202)
        return id
    }

    /// The function the report's first frame resolved to, once it is `want` or 30 s × `waitMargin` have passed.
    func symbolicatedFunction(_ server: ServerProcess, _ token: String, _ id: String, want: String) async throws
        -> String?
    {
        let deadline = ContinuousClock.now + .seconds(30) * waitMargin
        var function: String?
        while ContinuousClock.now < deadline {
            let answer = try await get(server, token, "/api/v1/reports/\(id)")
            let threads = (answer.json["symbolication"] as? [String: Any])?["threads"] as? [[[String: Any]]]
            function = ((threads?.first?.first?["frames"] as? [[String: Any]])?.first?["function"] as? String)
            if function == want { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        return function
    }

    func blobs(_ folder: String) -> [String] {
        ((try? FileManager.default.subpathsOfDirectory(atPath: folder + "/debug-files/blobs")) ?? []).filter {
            $0.count > 3
        }
    }

    @Test func anAttackerWhoUploadsFirstNeitherServesNorPoisonsTheVictim() async throws {
        let scratch = try TempFolder("isolation")
        let buildID = TwinProgram.randomBuildID()
        let victimV1 = try TwinProgram(function: "victim_real", buildID: buildID, in: scratch)
        let victimV2 = try TwinProgram(function: "victim_fixed_version", buildID: buildID, in: scratch)
        let poison = try TwinProgram(function: "attacker_poison", buildID: buildID, in: scratch)
        #expect(try ELFFixtures.readelfBuildID(poison.path) == buildID)
        #expect(try ELFFixtures.readelfBuildID(victimV1.path) == buildID)
        #expect(poison.bytes != victimV1.bytes)

        let folder = ServerProcess.newFolder()
        let victim = try await ServerProcess.createProject("victim", in: folder)  // the older project (lower id)
        let attacker = try await ServerProcess.createProject("attacker", in: folder)
        let admin = try await ServerProcess.run(["admin-token", "--data", folder]).out.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // Given the attacker uploads first, the victim's later upload is stored and described as its own.
        #expect(try await put(server, attacker.upload, buildID, poison.bytes).status == 201)
        let stored = try await put(server, victim.upload, buildID, victimV1.bytes)
        #expect(stored.status == 201)
        let files = try #require(stored.json["files"] as? [[String: Any]])
        #expect(Set(files.compactMap { $0["kind"] as? String }) == ["debuginfo", "executable"])
        #expect(files.allSatisfy { $0["sha256"] as? String == (try? Self.sha256(victimV1.bytes)) })
        #expect(files.allSatisfy { $0["size"] as? Int == victimV1.bytes.count })

        // Then each project's debuginfod answer is its own file, byte for byte.
        for kind in ["debuginfo", "executable"] {
            #expect(try await get(server, victim.upload, "/buildid/\(buildID)/\(kind)").body == victimV1.bytes)
            #expect(try await get(server, attacker.upload, "/buildid/\(buildID)/\(kind)").body == poison.bytes)
        }
        // The admin token sees the oldest project's file, whoever uploaded last.
        #expect(try await get(server, admin, "/buildid/\(buildID)/debuginfo").body == victimV1.bytes)
        // Each project's listing shows its own hash.
        let victimList = try await get(server, victim.upload, "/api/v1/debug-files").json["files"] as? [[String: Any]]
        #expect(victimList?.first?["sha256"] as? String == (try Self.sha256(victimV1.bytes)))
        let attackerList =
            try await get(server, attacker.upload, "/api/v1/debug-files").json["files"] as? [[String: Any]]
        #expect(attackerList?.first?["sha256"] as? String == (try Self.sha256(poison.bytes)))

        // And each project's crash is symbolicated with its own DWARF.
        let victimCrash = try await postCrash(server, ingest: victim.ingest, victimV1, buildID: buildID, n: 1)
        let attackerCrash = try await postCrash(server, ingest: attacker.ingest, poison, buildID: buildID, n: 2)
        #expect(
            try await symbolicatedFunction(server, victim.upload, victimCrash, want: "victim_real") == "victim_real")
        #expect(
            try await symbolicatedFunction(server, attacker.upload, attackerCrash, want: "attacker_poison")
                == "attacker_poison")

        // When the victim replaces its file (newest wins), its crash is symbolicated again with the new one; the
        // attacker's stays as it was, and the victim's old blob is removed.
        #expect(try await put(server, victim.upload, buildID, victimV2.bytes).status == 201)
        #expect(try await get(server, victim.upload, "/buildid/\(buildID)/debuginfo").body == victimV2.bytes)
        #expect(
            try await symbolicatedFunction(server, victim.upload, victimCrash, want: "victim_fixed_version")
                == "victim_fixed_version")
        #expect(
            try await symbolicatedFunction(server, attacker.upload, attackerCrash, want: "attacker_poison")
                == "attacker_poison")
        #expect(try await get(server, attacker.upload, "/buildid/\(buildID)/debuginfo").body == poison.bytes)
        #expect(blobs(folder).count == 2)
    }

    @Test func aVictimWhoUploadsFirstKeepsItsFile() async throws {
        let scratch = try TempFolder("isolation")
        let buildID = TwinProgram.randomBuildID()
        let real = try TwinProgram(function: "victim_real", buildID: buildID, in: scratch)
        let poison = try TwinProgram(function: "attacker_poison", buildID: buildID, in: scratch)
        let folder = ServerProcess.newFolder()
        let victim = try await ServerProcess.createProject("victim", in: folder)
        let attacker = try await ServerProcess.createProject("attacker", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        #expect(try await put(server, victim.upload, buildID, real.bytes).status == 201)
        func listing() async throws -> [String] {
            let files =
                try await get(server, victim.upload, "/api/v1/debug-files").json["files"] as? [[String: Any]] ?? []
            return files.map { f in
                ["kind", "sha256", "size", "uploaded_at", "name"].map { "\(f[$0] ?? "-")" }.joined(separator: " ")
            }.sorted()
        }
        let before = try await listing()
        #expect(before.count == 2)
        let answer = try await put(server, attacker.upload, buildID, poison.bytes)
        #expect(answer.status == 201)
        #expect(
            (answer.json["files"] as? [[String: Any]])?.first?["sha256"] as? String == (try Self.sha256(poison.bytes)))

        // The victim's file, listing and debuginfod answers are unchanged.
        #expect(try await listing() == before)
        #expect(try await get(server, victim.upload, "/buildid/\(buildID)/debuginfo").body == real.bytes)
        #expect(try await get(server, attacker.upload, "/buildid/\(buildID)/debuginfo").body == poison.bytes)
        let crash = try await postCrash(server, ingest: victim.ingest, real, buildID: buildID, n: 3)
        #expect(try await symbolicatedFunction(server, victim.upload, crash, want: "victim_real") == "victim_real")
        // A project with nothing uploaded gets nothing, and is told the file is missing.
        let third = try await ServerProcess.run(["projects", "create", "third", "--data", folder, "--json"])
        let token = try #require(
            (try JSONSerialization.jsonObject(with: Data(third.out.utf8)) as? [String: Any])?["upload_token"] as? String
        )
        #expect(try await get(server, token, "/buildid/\(buildID)/debuginfo").status == 404)
        let missing = try await http.send(
            .POST, server.baseURL + "/api/v1/debug-files/missing", headers: [("Authorization", "Bearer \(token)")],
            body: Array(#"{"files":[{"build_id":"\#(buildID)"}]}"#.utf8))
        #expect(
            (missing.json["missing"] as? [[String: Any]])?.first?["kinds"] as? [String] == ["debuginfo", "executable"])
    }

    @Test func identicalFilesShareOneBlobAndStayEachProjectsOwn() async throws {
        let scratch = try TempFolder("isolation")
        let buildID = TwinProgram.randomBuildID()
        let shared = try TwinProgram(function: "shared_library_code", buildID: buildID, in: scratch)
        let other = try TwinProgram(function: "something_else", buildID: buildID, in: scratch)
        let folder = ServerProcess.newFolder()
        let a = try await ServerProcess.createProject("alpha", in: folder)
        let b = try await ServerProcess.createProject("beta", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        #expect(try await put(server, a.upload, buildID, shared.bytes).status == 201)
        #expect(try await put(server, b.upload, buildID, shared.bytes).status == 201)
        // One blob on disk, listed by both.
        #expect(blobs(folder) == ["\(try Self.sha256(shared.bytes).prefix(2))/\(try Self.sha256(shared.bytes))"])
        for token in [a.upload, b.upload] {
            let list = try await get(server, token, "/api/v1/debug-files").json["files"] as? [[String: Any]]
            #expect(list?.count == 2)
            #expect(list?.allSatisfy { $0["sha256"] as? String == (try? Self.sha256(shared.bytes)) } == true)
        }
        // When one project replaces its file, the other keeps the shared blob.
        #expect(try await put(server, a.upload, buildID, other.bytes).status == 201)
        #expect(try await get(server, b.upload, "/buildid/\(buildID)/debuginfo").body == shared.bytes)
        #expect(try await get(server, a.upload, "/buildid/\(buildID)/debuginfo").body == other.bytes)
        #expect(blobs(folder).count == 2)
    }

    @Test func sentryCLIChunksAndFilesAreNotSharedAcrossProjects() async throws {
        let scratch = try TempFolder("isolation")
        let buildID = TwinProgram.randomBuildID()
        let mine = try TwinProgram(function: "victim_real", buildID: buildID, in: scratch)
        let theirs = try TwinProgram(function: "attacker_poison", buildID: buildID, in: scratch)
        let folder = ServerProcess.newFolder()
        let a = try await ServerProcess.createProject("alpha", in: folder)
        let b = try await ServerProcess.createProject("beta", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let boundary = SentryChunkUploadRouteTests.boundary
        let debugID = SentryChunkUploadRouteTests.debugID(buildID)

        func upload(_ token: String, _ program: TwinProgram) async throws -> (sum: String, chunks: [String]) {
            let (parts, sums) = try SentryChunkUploadRouteTests.chunkParts(program.bytes, size: 4096)
            let answer = try await http.send(
                .POST, server.baseURL + "/api/0/organizations/o/chunk-upload/",
                headers: [
                    ("Authorization", "Bearer \(token)"), ("Content-Type", "multipart/form-data; boundary=\(boundary)"),
                ],
                body: Array(SentryChunkUploadRouteTests.multipart(parts).readableBytesView))
            #expect(answer.status == 200)
            return (try SentryChunkUploadRouteTests.sha1(program.bytes), sums)
        }
        func assemble(_ token: String, slug: String, _ sum: String, _ chunks: [String]) async throws -> [String: Any] {
            let list = chunks.map { "\"\($0)\"" }.joined(separator: ",")
            let answer = try await http.send(
                .POST, server.baseURL + "/api/0/projects/o/\(slug)/files/difs/assemble/",
                headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")],
                body: Array(#"{"\#(sum)":{"name":"twin","debug_id":"\#(debugID)","chunks":[\#(list)]}}"#.utf8))
            return answer.json[sum] as? [String: Any] ?? [:]
        }

        // Project A uploads its chunks. Project B naming A's file and chunks has none of them: every chunk is
        // asked for, nothing is assembled from A's chunks.
        let (sumA, chunksA) = try await upload(a.upload, mine)
        #expect(chunksA.count > 1)
        let early = try await assemble(b.upload, slug: "beta", sumA, chunksA)
        #expect(early["state"] as? String == "not_found")
        #expect(early["missingChunks"] as? [String] == chunksA)
        // A assembles its file; B still does not "already have" it.
        #expect(try await assemble(a.upload, slug: "alpha", sumA, chunksA)["state"] as? String == "ok")
        let offered = try await assemble(b.upload, slug: "beta", sumA, chunksA)
        #expect(offered["state"] as? String == "not_found")
        #expect(offered["missingChunks"] as? [String] == chunksA)
        #expect(try await get(server, b.upload, "/buildid/\(buildID)/debuginfo").status == 404)

        // B's own file with the same build-id is stored for B and described as B's.
        let (sumB, chunksB) = try await upload(b.upload, theirs)
        let assembled = try await assemble(b.upload, slug: "beta", sumB, chunksB)
        #expect(assembled["state"] as? String == "ok")
        let dif = assembled["dif"] as? [String: Any]
        #expect(dif?["size"] as? Int == theirs.bytes.count)
        #expect(dif?["sha1"] as? String == sumB)
        #expect(try await get(server, b.upload, "/buildid/\(buildID)/debuginfo").body == theirs.bytes)
        #expect(try await get(server, a.upload, "/buildid/\(buildID)/debuginfo").body == mine.bytes)
    }
}
