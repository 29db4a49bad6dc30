import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// `faultline backup` and `faultline restore` on the real binary: a backup taken while reports stream in is consistent
/// and restores; a backup of the settled server, restored into a new folder and served, answers the read API exactly
/// as the original does; `--without-events` keeps issues, their numbers and the debug files, without the reports.
@Suite(.serialized, .tags(.endToEnd)) struct BackupEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    func get(_ server: ServerProcess, _ path: String, token: String) async throws -> HTTP.Answer {
        try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
    }

    /// The JSON of a read-API path, as canonical text (sorted keys) to compare two servers' answers.
    func canonical(_ server: ServerProcess, _ path: String, token: String) async throws -> String {
        let answer = try await get(server, path, token: token)
        guard answer.status == 200 else {
            throw TestFailure("GET \(path) → \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        }
        let value = try JSONSerialization.jsonObject(with: Data(answer.body))
        return String(
            decoding: try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys]), as: UTF8.self)
    }

    func issues(_ server: ServerProcess, token: String) async throws -> [[String: Any]] {
        try await get(server, "/api/v1/issues", token: token).json["issues"] as? [[String: Any]] ?? []
    }

    @Test func backupWhileIngestingThenRestoreAnswersTheSame() async throws {
        let scratch = try TempFolder("backup")
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("app", in: folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }

        // A debug file, so that the backup carries blobs.
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: scratch, flags: ["-O2", "-g"])
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let elf = Array(try Data(contentsOf: URL(fileURLWithPath: binary)))
        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)",
            headers: [("Authorization", "Bearer \(project.upload)")], body: elf)
        #expect(uploaded.status == 201, "\(uploaded.json)")

        // Reports stream in while the first backup is taken.
        let base = server.baseURL
        let key = project.ingest
        let client = http
        let streaming = Task {
            var posted = 0
            for batch in 0..<40 {
                let answer = try await client.postReports(
                    base, key: key, Payloads.batch((batch * 10)..<(batch * 10 + 10)))
                if answer.status == 202 { posted += 10 }
            }
            return posted
        }
        try await Task.sleep(for: .milliseconds(300))
        let live = scratch.file("live")
        let during = try await ServerProcess.run(["backup", "--data", folder, "--to", live])
        #expect(during.status == 0, "\(during)")
        #expect(during.out.contains("checked"))
        let posted = try await streaming.value
        #expect(posted == 400)

        // The live copy restores (it was checked: integrity, foreign keys, every debug file present).
        let fromLive = scratch.file("restored-live")
        let restoredLive = try await ServerProcess.run(["restore", "--from", live, "--data", fromLive])
        #expect(restoredLive.status == 0, "\(restoredLive)")
        #expect(FileManager.default.fileExists(atPath: fromLive + "/faultline.sqlite"))

        // Settled: every report grouped (the worker takes them in order: the last one grouped, the issues stay put).
        var previous = ""
        let settled = try await eventually(timeout: .seconds(60)) {
            let last = try await get(server, "/api/v1/reports/\(Payloads.eventID(399))", token: project.upload).json
            let state = (last["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            let now = try await canonical(server, "/api/v1/issues", token: project.upload)
            defer { previous = now }
            return state != "pending" && now == previous
        }
        #expect(settled)

        let full = scratch.file("full")
        let small = scratch.file("small")
        #expect(try await ServerProcess.run(["backup", "--data", folder, "--to", full]).status == 0)
        let lean = try await ServerProcess.run(["backup", "--data", folder, "--to", small, "--without-events"])
        #expect(lean.status == 0, "\(lean)")
        #expect(lean.out.contains("0 reports"))
        // A folder that holds something is refused: a backup never mixes with other files.
        let again = try await ServerProcess.run(["backup", "--data", folder, "--to", full])
        #expect(again.status != 0)
        #expect(again.err.contains("not empty"))
        let size = { (path: String) in
            ((try? FileManager.default.attributesOfItem(atPath: path + "/faultline.sqlite"))?[.size] as? Int) ?? 0
        }
        #expect(size(small) < size(full))

        // The full backup, restored and served, answers as the original does.
        let restoredFolder = scratch.file("restored")
        #expect(try await ServerProcess.run(["restore", "--from", full, "--data", restoredFolder]).status == 0)
        let restored = try await ServerProcess(folder: restoredFolder)
        defer { restored.cleanUp() }
        let paths = [
            "/api/v1/issues", "/api/v1/reports?limit=50", "/api/v1/reports/\(Payloads.eventID(7))",
            "/api/v1/debug-files", "/api/v1/health", "/api/v1/releases",
        ]
        for path in paths {
            let original = try await canonical(server, path, token: project.upload)
            let copy = try await canonical(restored, path, token: project.upload)
            #expect(original == copy, "\(path) differs")
        }
        let file = try await get(restored, "/buildid/\(buildID)/debuginfo", token: project.upload)
        #expect(file.status == 200)
        #expect(file.body == elf)

        // Without events: the issues and their numbers, the debug files; no reports.
        let leanFolder = scratch.file("restored-lean")
        #expect(try await ServerProcess.run(["restore", "--from", small, "--data", leanFolder]).status == 0)
        let leanServer = try await ServerProcess(folder: leanFolder)
        defer { leanServer.cleanUp() }
        let originalIssues = try await issues(server, token: project.upload)
        let leanIssues = try await issues(leanServer, token: project.upload)
        #expect(leanIssues.count == originalIssues.count)
        #expect(leanIssues.map { $0["events"] as? Int } == originalIssues.map { $0["events"] as? Int })
        #expect(leanIssues.map { $0["title"] as? String } == originalIssues.map { $0["title"] as? String })
        let reports = try await get(leanServer, "/api/v1/reports?limit=5", token: project.upload).json
        #expect((reports["reports"] as? [Any])?.isEmpty == true)
        #expect(try await get(leanServer, "/buildid/\(buildID)/debuginfo", token: project.upload).body == elf)
    }

    @Test func restoreRefusesWhatIsNotABackupAndAFolderInUse() async throws {
        let scratch = try TempFolder("restore")
        let notBackup = try await ServerProcess.run(["restore", "--from", scratch.path, "--data", scratch.file("new")])
        #expect(notBackup.status != 0)
        #expect(notBackup.err.contains("faultline backup"))

        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("app", in: folder)
        let backup = scratch.file("b")
        #expect(try await ServerProcess.run(["backup", "--data", folder, "--to", backup]).status == 0)
        // The source folder itself is not empty: restoring over it is refused, and it is left as it was.
        let over = try await ServerProcess.run(["restore", "--from", backup, "--data", folder])
        #expect(over.status != 0)
        #expect(over.err.contains("not empty"))
        // A corrupted copy is refused by the check.
        let database = backup + "/faultline.sqlite"
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: database)))
        for index in stride(from: 4096, to: min(bytes.count, 4096 * 6), by: 7) { bytes[index] ^= 0xFF }
        try Data(bytes).write(to: URL(fileURLWithPath: database))
        let corrupt = try await ServerProcess.run(["restore", "--from", backup, "--data", scratch.file("c")])
        #expect(corrupt.status != 0)
        #expect(!FileManager.default.fileExists(atPath: scratch.file("c") + "/faultline.sqlite"))
    }
}

/// The PostgreSQL backup recipe of docs/operations.md, as written there: `pg_dump --format=custom` of the database,
/// then a copy of the files folder's `debug-files`; restored with `pg_restore` into a new database and a new folder,
/// a node on them answers the read API as the original does.
@Suite(.serialized, .tags(.endToEnd, .postgres), .provisioned) struct PostgresBackupRecipeTests {
    let http = HTTP(client: HTTPClient.shared)

    /// The read API's answer as canonical text (`BackupEndToEndTests.canonical`).
    func canonical(_ server: ServerProcess, _ path: String, token: String) async throws -> String {
        try await BackupEndToEndTests().canonical(server, path, token: token)
    }

    @Test func pgDumpAndTheFilesFolderRestoreToTheSameAnswers() async throws {
        let scratch = try TempFolder("pg-backup")
        let cluster = try await MultiNodeEndToEndTests.Cluster()
        defer { cluster.cleanUp() }
        let node = try await cluster.node()
        defer { node.cleanUp() }
        let binary = try ELFFixtures.compileC(ELFFixtures.crashyC, name: "crashy", in: scratch, flags: ["-O2", "-g"])
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let elf = Array(try Data(contentsOf: URL(fileURLWithPath: binary)))
        let upload = cluster.project.upload
        let put = try await http.send(
            .PUT, node.baseURL + "/api/v1/debug-files/\(buildID)", headers: [("Authorization", "Bearer \(upload)")],
            body: elf)
        #expect(put.status == 201)
        #expect(
            try await http.postReports(node.baseURL, key: cluster.project.ingest, Payloads.batch(0..<30)).status == 202)
        var previous = ""
        let settled = try await eventually(timeout: .seconds(60)) {
            let last = try await http.send(
                .GET, node.baseURL + "/api/v1/reports/\(Payloads.eventID(29))",
                headers: [("Authorization", "Bearer \(upload)")])
            let state = (last.json["symbolication"] as? [String: Any])?["state"] as? String ?? "pending"
            let now = try await canonical(node, "/api/v1/issues", token: upload)
            defer { previous = now }
            return state != "pending" && now == previous
        }
        #expect(settled)

        // The recipe: dump, then copy the files folder's debug files.
        let dump = scratch.file("faultline.dump")
        try Command.check("pg_dump", ["--format=custom", "--file=\(dump)", cluster.url])
        let copiedFiles = scratch.file("files")
        try FileManager.default.createDirectory(atPath: copiedFiles, withIntermediateDirectories: true)
        try Command.check("cp", ["-a", cluster.blobs + "/debug-files", copiedFiles + "/debug-files"])

        // Restore: a new, empty database and the copied folder.
        let restoredURL = try MultiNodeEndToEndTests.Cluster.createDatabase()
        try Command.check("pg_restore", ["--no-owner", "--exit-on-error", "--dbname=\(restoredURL)", dump])
        let restored = try await ServerProcess(
            folder: ServerProcess.newFolder(), arguments: ["--database", restoredURL, "--blobs", copiedFiles],
            environment: ["SWIFT_BACKTRACE": "enable=no"])
        defer { restored.cleanUp() }
        for path in ["/api/v1/issues", "/api/v1/reports?limit=50", "/api/v1/debug-files", "/api/v1/releases"] {
            let original = try await canonical(node, path, token: upload)
            let copy = try await canonical(restored, path, token: upload)
            #expect(original == copy, "\(path) differs")
        }
        let file = try await http.send(
            .GET, restored.baseURL + "/buildid/\(buildID)/debuginfo", headers: [("Authorization", "Bearer \(upload)")])
        #expect(file.status == 200)
        #expect(file.body == elf)
    }
}
