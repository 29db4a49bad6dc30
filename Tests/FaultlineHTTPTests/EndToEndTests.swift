import AsyncHTTPClient
import FaultlineCore
import Foundation
import NIOCore
import NIOHTTP1
import SQLiteStorage
import Synchronization
import Testing

/// A value shared by concurrent test tasks.
final class Locked<Value: Sendable>: Sendable {
    let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { mutex.withLock { body(&$0) } }
}

/// The real `faultline` binary on 127.0.0.1, a real SQLite file, real HTTP.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct EndToEndTests {
    @Test func cliCreatesProjectsAndRefusesBadInput() async throws {
        let folder = ServerProcess.newFolder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let help = try await ServerProcess.run(["--help"])
        #expect(help.status == 0)
        for command in ["serve", "projects", "admin-token"] { #expect(help.out.contains(command)) }

        let created = try await ServerProcess.run(["projects", "create", "my-app", "--data", folder])
        #expect(created.status == 0)
        #expect(created.out.contains("ingest key:"))
        #expect(created.out.contains("upload token: flu_"))
        let listed = try await ServerProcess.run(["projects", "list"], environment: ["FAULTLINE_DATA": folder])
        #expect(listed.out.contains("my-app"))

        let duplicate = try await ServerProcess.run(["projects", "create", "my-app", "--data", folder])
        #expect(duplicate.status != 0)
        let bad = try await ServerProcess.run(["projects", "create", "My App", "--data", folder])
        #expect(bad.status == 64)  // EX_USAGE from ArgumentParser's ValidationError
        #expect(bad.err.contains("not a slug"))
        let badPort = try await ServerProcess.run(["serve", "--data", folder, "--port", "70000"])
        #expect(badPort.status == 64)
    }

    @Test func gzippedReportsAndSessionsOverRealHTTP() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("demo", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)

        let posted = try await http.postReports(server.baseURL, key: project.ingest, Payloads.batch(0..<50))
        #expect(posted.status == 202)
        #expect((posted.json["accepted"] as? [String])?.count == 50)

        let sessions =
            "["
            + [
                Payloads.session("a", status: "exited", seq: 2), Payloads.session("b", status: "crashed", errors: 1),
                Payloads.session("c", status: "ok", user: "user-2"),
            ].joined(separator: ",") + "]"
        let sessionAnswer = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Encoding", "gzip")],
            body: Payloads.gzip(Array(sessions.utf8)))
        #expect(sessionAnswer.status == 202)
        #expect(sessionAnswer.json["applied"] as? Int == 3)

        let list = try await http.send(
            .GET, server.baseURL + "/api/v1/reports?limit=100", headers: [("Authorization", "Bearer \(project.upload)")]
        )
        #expect((list.json["reports"] as? [Any])?.count == 50)
        let one = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/\(Payloads.eventID(17))",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(one.status == 200)
        #expect((one.json["error"] as? [String: String])?["message"] == "Segmentation fault 17")

        let bad = try await http.postReports(server.baseURL, key: "not-a-key", Payloads.crash(1))
        #expect(bad.status == 401)

        // A second process reads the same SQLite file while the server runs (WAL allows it).
        let database = try SQLiteEngine(path: folder + "/faultline.sqlite")
        let state = try await SQLiteReportReader(database: database).session(
            project: ProjectID(Int64(project.id)), id: SessionID("b")!)
        #expect(state?.status == .crashed)
        try database.close()
    }

    @Test func everyAcknowledgedReportSurvivesKillNine() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("durable", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)

        // Eight clients post single reports as fast as they can; the server is killed mid-stream.
        let acknowledged = Locked<[Int]>([])
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                group.addTask {
                    for i in 0..<200 {
                        let n = client * 1000 + i
                        // A request caught by the kill may hang rather than fail; it was never acknowledged,
                        // so a short timeout only ends the wait.
                        guard
                            let answer = try? await http.postReports(
                                server.baseURL, key: project.ingest, Payloads.crash(n), timeout: .seconds(5))
                        else { return }
                        if answer.status == 202 { acknowledged.withLock { $0.append(n) } }
                    }
                }
            }
            group.addTask {
                while acknowledged.withLock({ $0.count }) < 150 { try? await Task.sleep(for: .milliseconds(5)) }
                try? await server.kill9()
            }
        }
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= 150)
        #expect(acked.count < 1600)  // the kill landed mid-stream

        let restarted = try await ServerProcess(folder: folder)
        defer { restarted.cleanUp() }
        var missing: [Int] = []
        for n in acked {
            let answer = try await http.send(
                .GET, restarted.baseURL + "/api/v1/reports/\(Payloads.eventID(n))",
                headers: [("Authorization", "Bearer \(project.upload)")])
            if answer.status != 200 { missing.append(n) }
        }
        #expect(missing.isEmpty, "acknowledged but lost after kill -9: \(missing)")
    }

    @Test func aGzipBombCostsNoMoreMemoryThanTheLimit() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("bomb", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)

        let bomb = Payloads.bomb(memberMiB: 100, members: 100)  // 10 GiB of zeros
        let answer = try await http.send(
            .POST, server.baseURL + "/api/v1/reports",
            headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Encoding", "gzip")],
            body: Array(bomb.readableBytesView))
        #expect(answer.status == 413)
        #expect(answer.json["error"] as? String == "too_large")
        // Inflating even 1 % of it would take 100 MiB; the limits allow 10 MiB in and 10 MiB out.
        let peak = try #require(server.peakMemoryBytes())
        #expect(peak < 150 << 20, "peak RSS \(peak >> 20) MiB")
        let health = try await http.send(.GET, server.baseURL + "/healthz")
        #expect(health.status == 200)
    }

    @Test func sigtermShutsDownCleanly() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("graceful", in: folder)
        let server = try await ServerProcess(folder: folder, environment: ["FAULTLINE_LOG_LEVEL": "info"])
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        #expect(try await http.postReports(server.baseURL, key: project.ingest, Payloads.crash(1)).status == 202)

        let status = try await server.terminate()
        #expect(status == 0)
        #expect(server.log.contains("\"msg\":\"stopped\""))
        // The WAL was checkpointed into the main file and removed on close.
        let wal =
            (try? FileManager.default.attributesOfItem(atPath: folder + "/faultline.sqlite-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
    }

    @Test func lowDiskSpaceAnswers507FromTheEnvironmentSetting() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("full", in: folder)
        // A floor of 100 TB: no test machine has that much free.
        let server = try await ServerProcess(folder: folder, environment: ["FAULTLINE_MIN_FREE_MB": "100000000"])
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let answer = try await http.postReports(server.baseURL, key: project.ingest, Payloads.crash(1))
        #expect(answer.status == 507)
        #expect(answer.headers.first(name: "Retry-After") != nil)
    }
}
