import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Issue #9, finding 2, against the real `faultline` binary: crafted debug files do not kill the server, and
/// a report that does stop the worker is retried a bounded number of times, then failed with a reason.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct HostileSymbolicationEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    static func report(_ n: Int, buildID: String, module: String, address: UInt64) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"2026-11-22T05:08:09.152Z","user_id":"u\(n)",
         "app":{"id":"com.example","version":"1.0","build":"7"},
         "error":{"type":"SIGSEGV","message":"boom \(n)"},
         "threads":[{"name":"main","crashed":true,"frames":[{"address":"0x\(String(address, radix: 16))"}]}],
         "modules":[{"name":"\(module)","build_id":"\(buildID)","base_address":"0x0"}]}
        """
    }

    func symbolication(_ server: ServerProcess, _ n: Int, token: String) async throws -> [String: Any]? {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/\(Payloads.eventID(n))",
            headers: [("Authorization", "Bearer \(token)")])
        return answer.status == 200 ? answer.json["symbolication"] as? [String: Any] : nil
    }

    func state(_ server: ServerProcess, _ n: Int, token: String) async throws -> String {
        try await symbolication(server, n, token: token)?["state"] as? String ?? "pending"
    }

    @Test func hostileDebugFilesUploadedToTheServerDoNotStopIt() async throws {
        let scratch = try TempFolder("hostile-e2e")
        let absolute = try HostileELF.absoluteSymbolLibrary(in: scratch)
        let inline = try HostileELF.inlineLibrary(
            callFile: .max, callLine: .max, callColumn: .max, name: "libinline", in: scratch)
        let absoluteID = try #require(try ELFFixtures.readelfBuildID(absolute))
        let inlineID = try #require(try ELFFixtures.readelfBuildID(inline))
        let outer = try #require(try HostileELF.address(of: "outer", in: inline))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("hostile", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let token = [("Authorization", "Bearer \(project.upload)")]

        for (id, path) in [(absoluteID, absolute), (inlineID, inline)] {
            let uploaded = try await http.send(
                .PUT, server.baseURL + "/api/v1/debug-files/\(id)", headers: token,
                body: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
            #expect(uploaded.status == 201)
        }
        // The issue's reproduction: a frame at 0xffffffffffffff10 in a module based at 0; and a frame in
        // the inlined call whose call site is all ones.
        let reports = [
            Self.report(1, buildID: absoluteID, module: "libabsolute.so", address: 0xffff_ffff_ffff_ff10),
            Self.report(2, buildID: inlineID, module: "libinline.so", address: outer + 1),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
                .status == 202)

        #expect(
            try await eventually {
                let first = try await state(server, 1, token: project.upload)
                let second = try await state(server, 2, token: project.upload)
                return first != "pending" && second != "pending"
            })
        #expect(server.process.isRunning)
        let first = try #require(try await symbolication(server, 1, token: project.upload))
        #expect(first["state"] as? String == "partial")
        let slot = try #require((first["threads"] as? [[[String: Any]]])?.first?.first)
        #expect(slot["status"] as? String == "symbol_table")
        #expect((slot["frames"] as? [[String: Any]])?.first?["function"] as? String == "huge_absolute")
        let second = try #require(try await symbolication(server, 2, token: project.upload))
        #expect(second["state"] as? String == "complete")
        let frames = try #require(
            ((second["threads"] as? [[[String: Any]]])?.first?.first?["frames"]) as? [[String: Any]])
        #expect(frames.map { $0["function"] as? String } == ["inlined_callee", "outer"])
        #expect(frames.last?["line"] == nil)
        // Still serving.
        #expect(try await http.send(.GET, server.baseURL + "/healthz").status == 200)
    }

    @Test func aReportThatStopsTheWorkerIsFailedAfterThreeAttemptsAndTheServerStaysUp() async throws {
        let poison = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
        let innocent = "0123456789abcdef0123456789abcdef01234567"
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("poison", in: folder)
        // No Swift backtrace on abort: it takes seconds per crash and says nothing here.
        let environment = ["FAULTLINE_TEST_ABORT_ON_BUILD_ID": poison, "SWIFT_BACKTRACE": "enable=no"]
        defer {
            for suffix in ["", "-stdout.txt", "-stderr.txt"] {
                try? FileManager.default.removeItem(atPath: folder + suffix)
            }
        }

        var crashes = 0
        var survivor: ServerProcess?
        var posted = false
        // Each pass is one life of the server; a supervisor (systemd) would restart it the same way.
        for _ in 0..<8 {
            let server: ServerProcess
            do {
                server = try await ServerProcess(folder: folder, environment: environment)
            } catch let failure as TestFailure where failure.description.contains("aborting on purpose") {
                crashes += 1  // died before it was listening
                continue
            }
            if !posted {
                posted = true
                let reports = [
                    Self.report(1, buildID: innocent, module: "libgood.so", address: 0x1234),
                    Self.report(2, buildID: poison, module: "libpoison.so", address: 0x5678),
                ]
                // The worker may abort right after acknowledging: the answer can be lost, the reports are stored.
                _ = try? await http.postReports(
                    server.baseURL, key: project.ingest, "[" + reports.joined(separator: ",") + "]")
            }
            var done = false
            while server.process.isRunning, !done {
                done = (try? await state(server, 2, token: project.upload)).map { $0 != "pending" } ?? false
                if !done { try await Task.sleep(for: .milliseconds(100)) }
            }
            if done {
                survivor = server
                break
            }
            #expect(server.log.contains("aborting on purpose"))
            crashes += 1
        }
        let server = try #require(survivor)
        defer { server.cleanUp() }

        #expect(crashes == 3)
        let failed = try #require(try await symbolication(server, 2, token: project.upload))
        #expect(failed["state"] as? String == "missing")
        #expect((failed["failure_reason"] as? String)?.contains("stopped while processing this report 3 times") == true)
        // The innocent report of the same batch was symbolicated (no debug file: missing, no failure).
        #expect(try await eventually { try await state(server, 1, token: project.upload) != "pending" })
        let fine = try #require(try await symbolication(server, 1, token: project.upload))
        #expect(fine["state"] as? String == "missing")
        #expect(fine["failure_reason"] == nil)
        // Both are grouped: the poison one by module and offset.
        let issues = try await http.send(
            .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
        let culprits = (issues.json["issues"] as? [[String: Any]])?.compactMap { $0["culprit"] as? String } ?? []
        #expect(culprits.contains("libpoison.so+0x5678"))
        #expect(culprits.count == 2)
        // And the server stays up.
        #expect(try await http.send(.GET, server.baseURL + "/healthz").status == 200)
        #expect(server.process.isRunning)
    }
}
