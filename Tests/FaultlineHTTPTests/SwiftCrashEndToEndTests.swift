import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// A real Swift program traps in a release build; the crash file the Swift runtime wrote is posted as is.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SwiftCrashEndToEndTests {
    @Test func theRuntimesCrashFileBecomesAReport() async throws {
        let scratch = try TempFolder("swift-crash")
        let (binary, file) = try SwiftCrashFixture.crash(in: scratch)
        let crash = try JSONSerialization.jsonObject(with: file) as? [String: Any]
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("swift", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let url =
            server.baseURL + "/api/v1/crashes/swift?app_version=2.0&app_build=7&install_id=install-1&session_id=s-9"

        let first = try await http.send(
            .POST, url,
            headers: [
                ("Authorization", "Bearer \(project.ingest)"), ("Content-Encoding", "gzip"),
                ("X-Faultline-Environment", "staging"),
            ],
            body: Payloads.gzip(Array(file)))
        #expect(first.status == 202, "\(String(decoding: first.body, as: UTF8.self))")
        let id = try #require((first.json["accepted"] as? [String])?.first)
        // The same file again (a retry) is the same event.
        let again = try await http.send(
            .POST, url, headers: [("Authorization", "Bearer \(project.ingest)")], body: Array(file))
        #expect(again.json["duplicates"] as? [String] == [id])

        let stored = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/\(id)", headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(stored.status == 200)
        let report = stored.json
        #expect(report["kind"] as? String == "crash")
        #expect(report["release"] as? String == "2.0")
        #expect(report["install_id"] as? String == "install-1")
        #expect(report["session_id"] as? String == "s-9")
        #expect(report["environment"] as? String == "staging")
        #expect(report["fault_address"] != nil)
        #expect((report["error"] as? [String: Any])?["message"] as? String == crash?["description"] as? String)

        // Every frame address of the file is kept, in order, with its kind.
        let fileThreads = crash?["threads"] as? [[String: Any]] ?? []
        let storedThreads = report["threads"] as? [[String: Any]] ?? []
        #expect(storedThreads.count == fileThreads.count)
        func numbers(_ frames: [[String: Any]]) -> [UInt64] {
            frames.compactMap { ($0["address"] as? String).flatMap { UInt64($0.dropFirst(2), radix: 16) } }
        }
        for (fileThread, storedThread) in zip(fileThreads, storedThreads) {
            #expect(
                numbers(storedThread["frames"] as? [[String: Any]] ?? [])
                    == numbers(fileThread["frames"] as? [[String: Any]] ?? []))
            #expect(
                (storedThread["registers"] as? [String: Any])?.count
                    == (fileThread["registers"] as? [String: Any])?.count)
        }
        #expect((storedThreads.first?["frames"] as? [[String: Any]])?.first?["kind"] as? String == "pc")
        // The program's own image is there with the build-id readelf reports.
        let buildID = try ELFFixtures.readelfBuildID(binary)
        let modules = report["modules"] as? [[String: Any]] ?? []
        #expect(
            modules.contains {
                $0["build_id"] as? String == buildID && ($0["path"] as? String)?.hasSuffix("/trap") == true
            })
    }

    @Test func notACrashFileIs400() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("swift", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let answer = try await HTTP(client: HTTPClient.shared).send(
            .POST, server.baseURL + "/api/v1/crashes/swift", headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(#"{"kind":"something"}"#.utf8))
        #expect(answer.status == 400)
        #expect(answer.json["field"] as? String == "kind")
    }
}
