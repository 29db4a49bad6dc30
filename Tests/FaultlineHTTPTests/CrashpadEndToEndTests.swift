import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The issue's first test, whole: the real `crashpad_handler` catches each crash of a small C program (a segfault three
/// calls deep with frame pointers, an abort without them, a crash in a library through an inlined function, a crash
/// on a second thread) and uploads the dump to the real server its own way (gzip'd, chunked multipart). With the
/// program and its library uploaded first, the server's worker walks the dump with libdw and the read API answers the
/// crashing thread's frames as the program's call chain, each frame saying how it was found. (The walker itself is
/// checked against symbolic 8.8.0, Breakpad's processor, in StackWalkCrashpadTests.)
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct CrashpadEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// The id of the one report the server stores, once it is there; nil if none or several come.
    func onlyReport(_ server: ServerProcess, read: [(String, String)]) async throws -> String? {
        var ids: [String] = []
        guard
            try await eventually({
                let listed = try await http.send(.GET, server.baseURL + "/api/v1/reports", headers: read)
                ids = (listed.json["reports"] as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
                return ids.count == 1
            })
        else { return nil }
        return ids.first
    }

    @Test(arguments: Crashpad.Scenario.allCases)
    func theHandlersUploadIsWalkedIntoTheProgramsCallChain(_ scenario: Crashpad.Scenario) async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(project.upload)")]

        // The program and its library first, as CI uploads them with the release.
        let built = try Crashpad.crash(scenario)
        for file in [built.program] + [built.library].compactMap({ $0 }) {
            let buildID = try #require(try ELFFixtures.readelfBuildID(file))
            let put = try await http.send(
                .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: read,
                body: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
            #expect(put.status == 201, "\(put.json)")
        }

        let url = server.baseURL + "/api/\(project.id)/minidump/?sentry_key=\(project.ingest)"
        let crash = try Crashpad.upload(scenario, to: url)
        #expect(crash.dump.contains("/completed/"), "the handler did not upload: \(crash.dump)")
        let id = try #require(try await onlyReport(server, read: read))
        let report = try #require(
            try await LauncherMinidumpEndToEndTests.settled(
                http, server.baseURL + "/api/v1/reports/\(id)", token: project.upload))

        // The crashing thread, walked and symbolicated: the program's call chain, innermost first (after abort's own
        // libc frames), each frame with its trust.
        let names = LauncherMinidumpEndToEndTests.functions(report)
        let start = try #require(names.firstIndex(of: crash.callChain[0]), "\(scenario): \(names)")
        #expect(Array(names[start...].prefix(crash.callChain.count)) == crash.callChain, "\(scenario): \(names)")
        let threads = report["threads"] as? [[String: Any]] ?? []
        let frames = threads.first?["frames"] as? [[String: Any]] ?? []
        #expect(frames.first?["trust"] as? String == "context")
        #expect(frames.count > 1 && frames.allSatisfy { $0["trust"] is String }, "\(frames)")
        if scenario == .secondThread { #expect(threads.first?["name"] as? String == "worker") }
        // The issue is named after the signal.
        let type = (report["error"] as? [String: Any])?["type"] as? String
        #expect(type == (crash.signal == SIGABRT ? "SIGABRT" : "SIGSEGV"), "\(String(describing: type))")
    }

    /// An abort's own words, when the process left them in its Crashpad annotations (`abort_message`), name the issue
    /// beside the signal.
    @Test func anAbortMessageAnnotationNamesTheIssue() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("native", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(project.upload)")]
        let url = server.baseURL + "/api/\(project.id)/minidump/?sentry_key=\(project.ingest)"
        _ = try Crashpad.upload(.abort, to: url, annotations: ["abort_message": "ledger out of balance"])
        let id = try #require(try await onlyReport(server, read: read))
        let report = try #require(
            try await LauncherMinidumpEndToEndTests.settled(
                http, server.baseURL + "/api/v1/reports/\(id)", token: project.upload))
        let error = report["error"] as? [String: Any]
        #expect(error?["type"] as? String == "SIGABRT")
        #expect(error?["message"] as? String == "ledger out of balance", "\(String(describing: error))")
        let issues = try await http.send(.GET, server.baseURL + "/api/v1/issues", headers: read)
        let title = (issues.json["issues"] as? [[String: Any]])?.first?["title"] as? String
        #expect(title?.contains("ledger out of balance") == true, "\(String(describing: title))")
    }
}
