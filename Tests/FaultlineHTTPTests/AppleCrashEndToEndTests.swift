import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Apple's own crash reports through the real server: `POST /api/v1/crashes/apple` and `faultline crashes import`.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct AppleCrashEndToEndTests {
    static let secondIncident = "0A1B2C3D-4E5F-4A6B-8C7D-8E9FA0B1C2D3"

    @Test func anIPSAndACrashReportBecomeReportsAndAnIssue() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ios", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let ingest = [("Authorization", "Bearer \(project.ingest)")]
        let read = [("Authorization", "Bearer \(project.upload)")]
        let url = server.baseURL + "/api/v1/crashes/apple"

        // An .ips as the device wrote it, gzip'd as curl --compressed would not but an uploader may.
        let ips = Array(AppleCrashSamples.ips().utf8)
        let first = try await http.send(
            .POST, url + "?environment=production", headers: ingest + [("Content-Encoding", "gzip")],
            body: Payloads.gzip(ips))
        #expect(first.status == 202, "\(String(decoding: first.body, as: UTF8.self))")
        let id = try #require((first.json["accepted"] as? [String])?.first)
        #expect(id == "6156848e344e4d9e84e087afd0d0ae7b")  // the incident id
        let again = try await http.send(
            .POST, url, headers: ingest + [("Content-Type", "application/octet-stream")], body: ips)
        #expect(again.status == 202)
        #expect(again.json["duplicates"] as? [String] == [id])

        // The classic text of another crash of the same kind, as text/plain.
        let text = Array(AppleCrashSamples.crash(incident: Self.secondIncident).utf8)
        let second = try await http.send(
            .POST, url, headers: ingest + [("Content-Type", "text/plain; charset=utf-8")], body: text)
        #expect(second.status == 202, "\(String(decoding: second.body, as: UTF8.self))")
        let secondID = try #require((second.json["accepted"] as? [String])?.first)
        #expect(secondID == "0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3")
        // `release` names the whole release, as a Sentry SDK's sessions do (`package@version+build`): release 2.1.
        let third = try await http.send(
            .POST, url + "?release=com.example.demo@2.1%2B42", headers: ingest,
            body: Array(AppleCrashSamples.ips(incident: "22222222-3333-4444-8555-666666666666").utf8))
        let thirdID = try #require((third.json["accepted"] as? [String])?.first, "\(third.json)")
        let sentryRelease = try await waitForIssue(http, server.baseURL + "/api/v1/reports/\(thirdID)", read)
        #expect(sentryRelease["release"] as? String == "2.1")

        for (event, environment) in [(id, "production"), (secondID, nil)] {
            let stored = try await waitForIssue(http, server.baseURL + "/api/v1/reports/\(event)", read)
            #expect(stored["kind"] as? String == "crash")
            #expect(stored["release"] as? String == "2.1")
            #expect(stored["environment"] as? String == environment)
            #expect(stored["install_id"] as? String == AppleCrashSamples.crashReporterKey)
            let app = stored["app"] as? [String: Any]
            #expect(app?["id"] as? String == "com.example.demo")
            let device = stored["device"] as? [String: Any]
            #expect(device?["model"] as? String == "iPhone15,2")
            #expect(device?["os"] as? String == "iOS")
            #expect(device?["os_version"] as? String == "17.2")
            #expect(device?["arch"] as? String == "arm64e")
            #expect(device?["os_build"] as? String == "21C62")
            #expect(device?["simulator"] as? Bool == false)
            #expect((stored["error"] as? [String: Any])?["type"] as? String == "EXC_BAD_ACCESS")
            let threads = stored["threads"] as? [[String: Any]] ?? []
            #expect(threads.first?["crashed"] as? Bool == true)
            let frames = threads.first?["frames"] as? [[String: Any]] ?? []
            #expect(frames.compactMap { $0["address"] as? String } == ["0x102b8c1a4", "0x102b8c09c", "0x1a1c25e9c"])
            #expect(frames.first?["kind"] as? String == "pc")
            #expect(frames.first?["function"] as? String == "parse")
            let modules = stored["modules"] as? [[String: Any]] ?? []
            #expect(
                modules.contains {
                    $0["build_id"] as? String == AppleCrashSamples.appBuildID && $0["name"] as? String == "Demo"
                })
        }

        // Both crashes are one issue, titled by the exception.
        let a = try await waitForIssue(http, server.baseURL + "/api/v1/reports/\(id)", read)
        let b = try await waitForIssue(http, server.baseURL + "/api/v1/reports/\(secondID)", read)
        let issueID = try #require(a["issue_id"] as? Int)
        #expect(b["issue_id"] as? Int == issueID)
        let issue = try await http.send(.GET, server.baseURL + "/api/v1/issues/\(issueID)", headers: read)
        let title = (issue.json["issue"] as? [String: Any])?["title"] as? String ?? ""
        #expect(title == "EXC_BAD_ACCESS (KERN_INVALID_ADDRESS) at 0x0000000000000010", "\(title)")
        // Without a dSYM, the app's UUID is listed as missing.
        let missing = try await http.send(
            .GET, server.baseURL + "/api/v1/missing-debug-files?release=2.1%20(42)", headers: read)
        let listed = missing.json["missing"] as? [[String: Any]] ?? []
        #expect(listed.contains { $0["build_id"] as? String == AppleCrashSamples.appBuildID }, "\(missing.json)")
    }

    @Test func aBrokenFileIs400NamingTheLineAndNothingIsStored() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ios", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let url = server.baseURL + "/api/v1/crashes/apple"
        let ingest = [("Authorization", "Bearer \(project.ingest)")]

        let broken = AppleCrashSamples.crash(images: "0x102b84000 - 0x102b8ffff Demo arm64 <4c4c> /x")
        let answer = try await http.send(.POST, url, headers: ingest, body: Array(broken.utf8))
        #expect(answer.status == 400)
        #expect(answer.json["field"] as? String == "line 46")
        #expect((answer.json["message"] as? String)?.contains("UUID") == true)

        let bad = AppleCrashSamples.ips(threads: #"[{"triggered":true,"frames":[{"imageOffset":1,"imageIndex":9}]}]"#)
        let second = try await http.send(.POST, url, headers: ingest, body: Array(bad.utf8))
        #expect(second.status == 400)
        #expect(second.json["field"] as? String == "threads[0].frames[0]")

        let conflicting = try await http.send(
            .POST, url + "?release=a&app_version=b", headers: ingest, body: Array(AppleCrashSamples.ips().utf8))
        #expect(conflicting.status == 400 && conflicting.json["error"] as? String == "conflicting_parameter")
        let unknown = try await http.send(
            .POST, url + "?color=red", headers: ingest, body: Array(AppleCrashSamples.ips().utf8))
        #expect(unknown.status == 400)
        let form = try await http.send(
            .POST, url, headers: ingest + [("Content-Type", "multipart/form-data; boundary=x")],
            body: Array(AppleCrashSamples.ips().utf8))
        #expect(form.status == 415)
        let stored = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/6156848e344e4d9e84e087afd0d0ae7b",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(stored.status == 404)
    }

    @Test func theImportCommandBringsInAFolderAndSaysWhatItRefused() async throws {
        let scratch = try TempFolder("apple-import")
        let reports = scratch.path + "/DiagnosticReports"
        try FileManager.default.createDirectory(atPath: reports + "/Retired", withIntermediateDirectories: true)
        try Data(AppleCrashSamples.ips().utf8).write(to: URL(fileURLWithPath: reports + "/Demo-2026-11-20-103351.ips"))
        try Data(AppleCrashSamples.crash(incident: Self.secondIncident).utf8)
            .write(to: URL(fileURLWithPath: reports + "/Retired/Demo-2026-11-20-103352.crash"))
        try Data("Thread 0 Crashed:\n0   Demo   garbage\n".utf8).write(
            to: URL(fileURLWithPath: reports + "/broken.crash"))
        try Data("not a report".utf8).write(to: URL(fileURLWithPath: reports + "/notes.txt"))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ios", in: folder)

        let help = try await ServerProcess.run(["crashes", "import", "--help"])
        #expect(help.status == 0 && help.out.contains("*.ips and *.crash"), "\(help)")
        let noProject = try await ServerProcess.run(["crashes", "import", "android", reports, "--data", folder])
        #expect(noProject.status != 0 && noProject.err.contains("no project 'android'"), "\(noProject)")
        let noFile = try await ServerProcess.run([
            "crashes", "import", "ios", reports + "/nothing-here", "--data", folder,
        ])
        #expect(noFile.status != 0 && noFile.err.contains("no such file or folder"), "\(noFile)")

        let run = try await ServerProcess.run([
            "crashes", "import", "ios", reports, "--data", folder, "--release", "2.1-beta",
        ])
        #expect(run.status == 1, "\(run)")
        let lines = run.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(run.out)")  // notes.txt is not looked at
        #expect(
            lines.contains {
                $0.hasPrefix("accepted\t\(reports)/Demo-2026-11-20-103351.ips\tevent 6156848e344e4d9e84e087afd0d0ae7b")
            })
        #expect(lines.contains { $0.hasPrefix("accepted\t\(reports)/Retired/Demo-2026-11-20-103352.crash") })
        #expect(lines.contains { $0.hasPrefix("refused\t\(reports)/broken.crash\tline 2: a frame must read") })

        // Again, the good files only: both are known already, and the command succeeds.
        let again = try await ServerProcess.run(
            [
                "crashes", "import", "ios", reports + "/Demo-2026-11-20-103351.ips", reports + "/Retired", "--data",
                folder,
            ])
        #expect(again.status == 0, "\(again)")
        #expect(again.out.split(separator: "\n").allSatisfy { $0.hasPrefix("duplicate\t") }, "\(again.out)")

        // What was imported is what the server serves.
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let stored = try await HTTP(client: HTTPClient.shared).send(
            .GET, server.baseURL + "/api/v1/reports/6156848e344e4d9e84e087afd0d0ae7b",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(stored.status == 200)
        #expect((stored.json["device"] as? [String: Any])?["model"] as? String == "iPhone15,2")
        #expect(stored.json["release"] as? String == "2.1-beta")
    }

    /// The documented limit (10 MiB) is the file's as uploaded: a file of exactly 10 MiB, which the stored form's JSON
    /// escaping makes larger, is taken by the route and by `crashes import` and is filed by the worker; one byte more is
    /// refused by both, with 413 on the route.
    @Test func aFileOfTheDocumentedLimitIsTakenAndOneByteMoreIsNot() async throws {
        let limit = 10 * 1024 * 1024
        let atLimit = AppleCrashSamples.ips(bytes: limit)
        let over = AppleCrashSamples.ips(incident: Self.secondIncident, bytes: limit + 1)
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("ios", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let url = server.baseURL + "/api/v1/crashes/apple"
        let ingest = [("Authorization", "Bearer \(project.ingest)")]
        let read = [("Authorization", "Bearer \(project.upload)")]

        let taken = try await http.send(.POST, url, headers: ingest, body: atLimit)
        #expect(taken.status == 202, "\(String(decoding: taken.body.prefix(300), as: UTF8.self))")
        // One byte over, declared: answered before the body (the client's send is cut short, so a raw connection).
        let connection = try RawConnection(port: server.port)
        try connection.send(
            "POST /api/v1/crashes/apple HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(project.ingest)\r\n"
                + "Content-Length: \(over.count)\r\n\r\n")
        try connection.send(Array(over.prefix(64 * 1024)))
        let refused = try #require(try await connection.readResponse(within: .seconds(20)))
        #expect(refused.status == 413)
        // One byte over once inflated, the whole body sent.
        let gzipped = try await http.send(
            .POST, url, headers: ingest + [("Content-Encoding", "gzip")], body: Payloads.gzip(over))
        #expect(gzipped.status == 413)
        let stored = try await waitForIssue(
            http, server.baseURL + "/api/v1/reports/6156848e344e4d9e84e087afd0d0ae7b", read)
        #expect(stored["issue_id"] is Int, "\(stored)")
        #expect((stored["device"] as? [String: Any])?["model"] as? String == "iPhone15,2")
        let missing = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/0a1b2c3d4e5f4a6b8c7d8e9fa0b1c2d3", headers: read)
        #expect(missing.status == 404)

        // The same two files through `faultline crashes import`, into a project of a data folder of its own.
        let scratch = try TempFolder("apple-import-limit")
        try Data(atLimit).write(to: URL(fileURLWithPath: scratch.path + "/at-limit.ips"))
        try Data(over).write(to: URL(fileURLWithPath: scratch.path + "/over-limit.ips"))
        let importFolder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("ios", in: importFolder)
        let run = try await ServerProcess.run(["crashes", "import", "ios", scratch.path, "--data", importFolder])
        #expect(run.status == 1, "\(run)")
        let lines = run.out.split(separator: "\n").map(String.init)
        #expect(
            lines.contains {
                $0.hasPrefix("accepted\t\(scratch.path)/at-limit.ips\tevent 6156848e344e4d9e84e087afd0d0ae7b")
            }, "\(run.out)")
        #expect(
            lines.contains { $0.hasPrefix("refused\t\(scratch.path)/over-limit.ips\t") && $0.contains("\(limit)") },
            "\(run.out)")
    }

    /// Polls a report until the worker has filed it under an issue.
    func waitForIssue(_ http: HTTP, _ url: String, _ headers: [(String, String)]) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let answer = try await http.send(.GET, url, headers: headers)
            if answer.json["issue_id"] is Int || ContinuousClock.now > deadline { return answer.json }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}
