import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Two real `faultline serve` processes on one real PostgreSQL database (`--database`) and one shared folder
/// (`--blobs`), no proxy: clients alternate between them (issue #14). `tools/test` starts the PostgreSQL server.
@Suite(.serialized, .tags(.endToEnd, .multiNode, .postgres), .provisioned) struct MultiNodeEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A fresh database and shared folder, with a project made through the CLI.
    struct Cluster {
        let url: String
        let blobs: String
        let project: (ingest: String, upload: String, id: Int)
        var arguments: [String] { ["--database", url, "--blobs", blobs] }

        init(slug: String = "app", rateLimit: Double? = nil) async throws {
            url = try Self.createDatabase()
            blobs = ServerProcess.newFolder()
            var extra = ["--database", url, "--blobs", blobs]
            if let rateLimit { extra += ["--rate-limit", String(rateLimit)] }
            project = try await ServerProcess.createProject(slug, in: ServerProcess.newFolder(), extra: extra)
        }

        /// A node on this cluster (its own `--data` folder, which holds nothing with PostgreSQL).
        func node(_ more: [String] = [], environment: [String: String] = [:]) async throws -> ServerProcess {
            try await ServerProcess(
                folder: ServerProcess.newFolder(), arguments: arguments + more,
                environment: ["FAULTLINE_RENDER_INTERVAL_MS": "300", "SWIFT_BACKTRACE": "enable=no"].merging(
                    environment
                ) { $1 })
        }

        /// One value from the database (`psql`): counts the tests check beside the API.
        func query(_ sql: String) throws -> String {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]
            let out = Pipe()
            process.standardOutput = out
            try process.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TestFailure("psql failed: \(sql)") }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }

        func count(_ sql: String) throws -> Int {
            guard let value = Int(try query(sql)) else { throw TestFailure("not a number from: \(sql)") }
            return value
        }

        static func createDatabase() throws -> String {
            guard let admin = TestEnvironment.value("FAULTLINE_TEST_POSTGRES_URL"), !admin.isEmpty else {
                throw TestFailure(
                    "FAULTLINE_TEST_POSTGRES_URL is not set: run the tests with tools/test, which starts a throwaway PostgreSQL server"
                )
            }
            let name = "e2e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["psql", admin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"]
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TestFailure("cannot create database \(name)") }
            var components = URLComponents(string: admin)!
            components.path = "/" + name
            return components.string!
        }

        func cleanUp() { try? FileManager.default.removeItem(atPath: blobs) }
    }

    /// A crash of one of three kinds (each its own issue: different frames), from user `n % 5`.
    static func crash(_ n: Int, kind: Int, buildID: String = "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a") -> String {
        let frames = (0..<4).map {
            #"{"address":"0x\#(String(0x7f00_0000_1000 + kind * 0x1000 + $0 * 0x10, radix: 16))"}"#
        }
        return """
            {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"2026-11-22T05:08:09.152Z","user_id":"user-\(n % 5)",
             "app":{"id":"com.example","version":"1.0","build":"7"},"error":{"type":"SIGSEGV","message":"boom \(kind)"},
             "threads":[{"name":"main","crashed":true,"frames":[\(frames.joined(separator: ","))]}],
             "modules":[{"name":"libapp.so","build_id":"\(buildID)","base_address":"0x7f0000000000","size":1048576}]}
            """
    }

    func issues(_ node: ServerProcess, _ cluster: Cluster) async throws -> [[String: Any]] {
        let answer = try await http.send(
            .GET, node.baseURL + "/api/v1/issues?limit=100",
            headers: [("Authorization", "Bearer \(cluster.project.upload)")])
        return answer.json["issues"] as? [[String: Any]] ?? []
    }

    @Test func twoNodesStoreGroupAndCountEveryReportOnceAndServeOneDashboard() async throws {
        let cluster = try await Cluster()
        defer { cluster.cleanUp() }
        let a = try await cluster.node(["--public-dashboard"])
        defer { a.cleanUp() }
        let b = try await cluster.node(["--public-dashboard"])
        defer { b.cleanUp() }
        let nodes = [a, b]

        // 120 reports from four clients; each is sent to one node and retried on the other (as a client whose answer
        // was lost would): both acknowledge it, the second as a duplicate.
        let total = 120
        // (accepted by the first node, duplicates by the second) of each report.
        let answers = Locked<[(accepted: Int, duplicates: Int)]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<4 {
                group.addTask {
                    for n in stride(from: client, to: total, by: 4) {
                        let body = Self.crash(n, kind: n % 3)
                        let first = try await http.postReports(nodes[n % 2].baseURL, key: cluster.project.ingest, body)
                        let second = try await http.postReports(
                            nodes[(n + 1) % 2].baseURL, key: cluster.project.ingest, body)
                        #expect(first.status == 202 && second.status == 202)
                        let accepted = (first.json["accepted"] as? [String])?.count ?? -1
                        let duplicates = (second.json["duplicates"] as? [String])?.count ?? -1
                        answers.withLock { $0.append((accepted, duplicates)) }
                    }
                }
            }
            try await group.waitForAll()
        }
        let all = answers.withLock { $0 }
        #expect(all.count == total)
        #expect(all.allSatisfy { $0.accepted == 1 && $0.duplicates == 1 })
        #expect(try cluster.count("SELECT count(*) FROM reports") == total)

        // Symbolicated and grouped once, by whichever node took each report: three issues, exact counts.
        let grouped = await eventually(timeout: .seconds(60)) {
            (try? cluster.count("SELECT count(*) FROM reports WHERE symbolication = 'pending' OR issue_id IS NULL"))
                == 0
        }
        #expect(grouped)
        for node in nodes {
            let list = try await issues(node, cluster)
            #expect(list.count == 3)
            #expect(list.compactMap { $0["events"] as? Int }.sorted() == [40, 40, 40])
            #expect(list.compactMap { $0["users"] as? Int } == [5, 5, 5])
        }
        #expect(try cluster.count("SELECT count(DISTINCT fingerprint) FROM issues") == 3)
        #expect(try cluster.count("SELECT coalesce(sum(events), 0) FROM issue_releases") == total)

        // One node renders (the lease), both serve the same pages from the shared folder.
        #expect(
            await eventually(timeout: .seconds(30)) {
                guard let one = try? await http.send(.GET, a.baseURL + "/app/issues.html"),
                    let other = try? await http.send(.GET, b.baseURL + "/app/issues.html"),
                    one.status == 200, other.status == 200, one.body == other.body
                else { return false }
                // Current: the list shows the three issues' 40 events each.
                return String(decoding: one.body, as: UTF8.self).components(
                    separatedBy: "<td data-label=\"Events\">40</td>"
                ).count - 1 >= 3
            })
        let metrics = [
            try await http.send(.GET, a.baseURL + "/metrics"), try await http.send(.GET, b.baseURL + "/metrics"),
        ]
        .map { String(decoding: $0.body, as: UTF8.self) }
        #expect(metrics.filter { $0.contains("faultline_render_lease_held 1.0") }.count == 1)
        #expect(
            await eventually(timeout: .seconds(15)) {
                guard let text = try? await http.send(.GET, a.baseURL + "/metrics") else { return false }
                return String(decoding: text.body, as: UTF8.self).contains("faultline_nodes 2.0")
            })
    }

    /// The renders a node has done (its `faultline_render_duration_seconds` samples, full and incremental).
    func renders(_ node: ServerProcess) async throws -> Int {
        let text = String(decoding: try await http.send(.GET, node.baseURL + "/metrics").body, as: UTF8.self)
        return text.split(separator: "\n")
            .filter { $0.hasPrefix("faultline_render_duration_seconds_count") }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0) { $0 + Int($1) }
    }

    @Test func theLeaseHolderRedrawsWhenAnotherNodeChangedDataAndNotWhileNothingChanges() async throws {
        let cluster = try await Cluster()
        defer { cluster.cleanUp() }
        let a = try await cluster.node(["--public-dashboard"])
        defer { a.cleanUp() }
        let b = try await cluster.node(["--public-dashboard"])
        defer { b.cleanUp() }
        // The holder, once its first (full) render is done.
        var holder: ServerProcess?
        #expect(
            await eventually(timeout: .seconds(20)) {
                for node in [a, b] {
                    guard let text = try? await http.send(.GET, node.baseURL + "/metrics") else { continue }
                    if String(decoding: text.body, as: UTF8.self).contains("faultline_render_lease_held 1.0"),
                        (try? await renders(node)) ?? 0 > 0
                    {
                        holder = node
                        return true
                    }
                }
                return false
            })
        guard let holder else { return }
        let other = holder === a ? b : a

        // Quiet: ten intervals (300 ms each) pass without a render (after the start: the second node's start announces
        // nothing).
        try await Task.sleep(for: .seconds(3))
        let quiet = try await renders(holder)
        try await Task.sleep(for: .seconds(3))
        #expect(try await renders(holder) == quiet, "the lease holder redrew the dashboard while nothing changed")

        // A report through the other node: the holder redraws within about an interval, and both serve the issue.
        let answer = try await http.postReports(other.baseURL, key: cluster.project.ingest, Self.crash(1, kind: 0))
        #expect(answer.status == 202)
        #expect(
            await eventually(timeout: .seconds(30)) {
                guard let page = try? await http.send(.GET, holder.baseURL + "/app/issues.html"), page.status == 200
                else { return false }
                return String(decoding: page.body, as: UTF8.self).contains("boom 0")
            })
        let heldB = String(decoding: try await http.send(.GET, b.baseURL + "/metrics").body, as: UTF8.self).contains(
            "faultline_render_lease_held 1.0")
        // Counted when the render ends (its summary pages are written first).
        #expect(await eventually(timeout: .seconds(10)) { ((try? await renders(holder)) ?? 0) > quiet })
        let page = try await http.send(.GET, other.baseURL + "/app/issues.html")
        #expect(String(decoding: page.body, as: UTF8.self).contains("boom 0"))

        // And quiet again once that is drawn.
        try await Task.sleep(for: .seconds(3))
        let after = try await renders(holder)
        try await Task.sleep(for: .seconds(3))
        #expect(try await renders(holder) == after)

        // A change made with the CLI (no node made it): the holder draws it too.
        let issue = try #require(try await issues(holder, cluster).first?["id"] as? Int)
        let muted = try await ServerProcess.run(
            ["issues", "mute", String(issue), "--data", ServerProcess.newFolder()] + cluster.arguments)
        #expect(muted.status == 0, "\(muted)")
        #expect(
            await eventually(timeout: .seconds(30)) {
                guard let page = try? await http.send(.GET, other.baseURL + "/app/index.html"), page.status == 200
                else { return false }
                return String(decoding: page.body, as: UTF8.self).contains("1 muted")
            })
    }

    @Test func killNineOfANodeUnderLoadLosesNothingAndTheOtherFinishesItsWork() async throws {
        let cluster = try await Cluster()
        defer { cluster.cleanUp() }
        // Short claims, so that the survivor takes the dead node's reports within the test.
        let a = try await cluster.node(["--claim-lease-seconds", "2"])
        defer { a.cleanUp() }
        let b = try await cluster.node(["--claim-lease-seconds", "2"])
        defer { b.cleanUp() }
        let nodes = [a, b]

        let acknowledged = Locked<[Int]>([])
        let killed = Locked(false)
        await withTaskGroup(of: Void.self) { group in
            for client in 0..<8 {
                group.addTask {
                    for i in 0..<150 {
                        let n = client * 1000 + i
                        // Once A is dead its share goes unsent (the HTTP client would retry connecting until its timeout).
                        if n % 2 == 0 && killed.withLock({ $0 }) { continue }
                        // A request caught by the kill may hang rather than fail: never acknowledged, a short timeout ends it.
                        guard
                            let answer = try? await http.postReports(
                                nodes[n % 2].baseURL, key: cluster.project.ingest, Self.crash(n, kind: n % 3),
                                timeout: .seconds(5))
                        else { continue }
                        if answer.status == 202 { acknowledged.withLock { $0.append(n) } }
                    }
                }
            }
            group.addTask {
                while acknowledged.withLock({ $0.count }) < 200 { try? await Task.sleep(for: .milliseconds(5)) }
                killed.withLock { $0 = true }
                try? await a.kill9()
            }
        }
        let acked = acknowledged.withLock { $0 }
        #expect(acked.count >= 200)
        #expect(acked.count < 1200)  // the kill landed mid-stream: half of the requests went to the dead node
        #expect(!a.process.isRunning)

        // Every acknowledged report is there, through the surviving node.
        var missing: [Int] = []
        for n in acked {
            let answer = try await http.send(
                .GET, b.baseURL + "/api/v1/reports/\(Payloads.eventID(n))",
                headers: [("Authorization", "Bearer \(cluster.project.upload)")])
            if answer.status != 200 { missing.append(n) }
        }
        #expect(missing.isEmpty, "acknowledged but lost after kill -9 of a node: \(missing)")

        // The survivor finishes everything, the dead node's claimed reports included, and counts each report once.
        #expect(
            await eventually(timeout: .seconds(60)) {
                (try? cluster.count("SELECT count(*) FROM reports WHERE symbolication = 'pending' OR issue_id IS NULL"))
                    == 0
            })
        let stored = try cluster.count("SELECT count(*) FROM reports")
        #expect(stored >= acked.count)
        let list = try await issues(b, cluster)
        #expect(list.count == 3)
        #expect(list.compactMap { $0["events"] as? Int }.reduce(0, +) == stored)
        #expect(try cluster.count("SELECT coalesce(sum(events), 0) FROM issue_releases") == stored)
    }

    @Test func aNodeThatDiesHoldingABatchLeavesItToTheOther() async throws {
        let cluster = try await Cluster()
        defer { cluster.cleanUp() }
        let poison = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef"
        // Node A aborts when it symbolicates the poison build-id: it dies holding the batch it took.
        let a = try await cluster.node(
            ["--claim-lease-seconds", "2"], environment: ["FAULTLINE_TEST_ABORT_ON_BUILD_ID": poison])
        defer { a.cleanUp() }
        let reports = (0..<30).map {
            Self.crash($0, kind: $0 % 3, buildID: $0 == 7 ? poison : "aba11aeff7e7e9e2e1bc84464f53a7e183a8930a")
        }
        // The worker may abort right after acknowledging: the answer can be lost, the reports are stored.
        _ = try? await http.postReports(
            a.baseURL, key: cluster.project.ingest, #"{"reports":["# + reports.joined(separator: ",") + "]}")
        try await a.waitForExit(timeout: .seconds(60))
        #expect(a.log.contains("aborting on purpose"))
        #expect(try cluster.count("SELECT count(*) FROM reports") == 30)
        // It died holding claims on reports it had not finished.
        let held = try cluster.count(
            "SELECT count(*) FROM reports WHERE symbolication = 'pending' AND claimed_until IS NOT NULL")
        #expect(held > 0)

        // Node B (no fault) takes them once the lease has passed, and files all 30 once.
        let b = try await cluster.node(["--claim-lease-seconds", "2"])
        defer { b.cleanUp() }
        // Under the whole suite on two cores this wait passed 60 s once (the whole test takes 35 s alone): generous wait, exact answer.
        #expect(
            await eventually(timeout: .seconds(180)) {
                (try? cluster.count("SELECT count(*) FROM reports WHERE symbolication = 'pending' OR issue_id IS NULL"))
                    == 0
            })
        let list = try await issues(b, cluster)
        #expect(list.compactMap { $0["events"] as? Int }.sorted() == [10, 10, 10])
        #expect(
            try cluster.count("SELECT symbolication_attempts FROM reports WHERE event_id = '\(Payloads.normalized(7))'")
                <= 1)
    }

    @Test func migrateOfAnInstallFilledThroughTheSQLiteServerGivesTheSameAnswersOnPostgreSQL() async throws {
        let folder = ServerProcess.newFolder()
        let blobs = ServerProcess.newFolder()
        defer {
            for path in [folder, blobs] { try? FileManager.default.removeItem(atPath: path) }
        }
        let project = try await ServerProcess.createProject("app", in: folder)
        let auth = [("Authorization", "Bearer \(project.upload)")]

        // Filled through the real SQLite server: 45 crashes of three kinds, sessions, one issue closed.
        let sqlite = try await ServerProcess(folder: folder)
        defer { sqlite.cleanUp() }
        let reports = (0..<45).map { Self.crash($0, kind: $0 % 3) }
        #expect(
            try await http.postReports(
                sqlite.baseURL, key: project.ingest, #"{"reports":["# + reports.joined(separator: ",") + "]}"
            ).status == 202)
        for n in 0..<6 {
            let body = Payloads.session("s\(n)", status: n < 2 ? "crashed" : "exited", user: "user-\(n)")
            let answer = try await http.send(
                .POST, sqlite.baseURL + "/api/v1/sessions",
                headers: [("Authorization", "Bearer \(project.ingest)"), ("Content-Type", "application/json")],
                body: Array(body.utf8))
            #expect(answer.status == 202)
        }
        #expect(
            await eventually(timeout: .seconds(60)) {
                let list =
                    (try? await http.send(.GET, sqlite.baseURL + "/api/v1/issues?limit=100", headers: auth))?.json[
                        "issues"] as? [[String: Any]]
                return list?.compactMap { $0["events"] as? Int }.reduce(0, +) == 45
            })
        let closed = try await http.send(
            .PATCH, sqlite.baseURL + "/api/v1/issues/1", headers: auth + [("Content-Type", "application/json")],
            body: Array(#"{"status":"closed"}"#.utf8))
        #expect(closed.status == 200)
        let paths = [
            "/api/v1/issues?limit=100", "/api/v1/issues?status=closed", "/api/v1/issues/1",
            "/api/v1/issues/2/reports?limit=5",
            "/api/v1/reports?limit=50", "/api/v1/reports/\(Payloads.eventID(7))", "/api/v1/health?days=30",
        ]
        var before: [String: [UInt8]] = [:]
        for path in paths {
            let answer = try await http.send(.GET, sqlite.baseURL + path, headers: auth)
            #expect(answer.status == 200, "\(path)")
            before[path] = Self.canonical(answer.body)
        }
        #expect(try await sqlite.terminate() == 0)

        // Moved, then served by a PostgreSQL node: the same bytes for every answer, the same keys still valid.
        let url = try Cluster.createDatabase()
        let moved = try await ServerProcess.run(["migrate", "--from", folder, "--to", url, "--blobs", blobs])
        #expect(moved.status == 0, "\(moved.err)")
        let node = try await ServerProcess(
            folder: ServerProcess.newFolder(), arguments: ["--database", url, "--blobs", blobs])
        defer { node.cleanUp() }
        for path in paths {
            let answer = try await http.send(.GET, node.baseURL + path, headers: auth)
            #expect(answer.status == 200, "\(path)")
            let after = Self.canonical(answer.body)
            #expect(
                after == before[path],
                "\(path): \(String(decoding: after, as: UTF8.self)) != \(String(decoding: before[path] ?? [], as: UTF8.self))"
            )
        }
        // A client retrying a report from before the move is told it is a duplicate; a new one is grouped with its kind.
        let retry = try await http.postReports(node.baseURL, key: project.ingest, reports[3])
        #expect((retry.json["duplicates"] as? [String])?.count == 1)
        #expect(try await http.postReports(node.baseURL, key: project.ingest, Self.crash(100, kind: 1)).status == 202)
        #expect(
            await eventually(timeout: .seconds(60)) {
                let list =
                    (try? await http.send(.GET, node.baseURL + "/api/v1/issues?limit=100", headers: auth))?.json[
                        "issues"] as? [[String: Any]]
                return list?.count == 3 && list?.compactMap { $0["events"] as? Int }.reduce(0, +) == 46
            })
    }

    /// A JSON answer with its keys sorted (each process orders an object's keys its own way).
    static func canonical(_ body: [UInt8]) -> [UInt8] {
        guard let value = try? JSONSerialization.jsonObject(with: Data(body)),
            let data = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys])
        else { return body }
        return Array(data)
    }

    @Test func aDatabaseThatCannotBeOpenedIsNamedWithTheReasonAndNoPassword() async throws {
        let admin = try #require(TestEnvironment.value("FAULTLINE_TEST_POSTGRES_URL"))
        var missing = try #require(URLComponents(string: admin))
        missing.path = "/no_such_database"
        missing.password = "s3cret-word"
        var nobody = try #require(URLComponents(string: "postgres://postgres@127.0.0.1:1/x?sslmode=disable"))
        nobody.password = "s3cret-word"
        for (url, reason) in [(missing.string!, "does not exist"), (nobody.string!, "refused")] {
            let result = try await ServerProcess.run(["projects", "list", "--database", url])
            #expect(result.status != 0)
            #expect(result.err.contains("cannot connect to PostgreSQL at postgres@"), "\(result.err)")
            #expect(result.err.contains(reason), "\(result.err)")
            #expect(!result.err.contains("s3cret-word") && !result.out.contains("s3cret-word"))
        }
        // The password from the environment works as one in the URL would (trust authentication ignores it here, but
        // a wrong database still fails the same way, with the password nowhere in the output).
        let served = try await ServerProcess.run(
            ["serve", "--port", "0", "--database", missing.string!.replacingOccurrences(of: ":s3cret-word", with: "")],
            environment: ["FAULTLINE_DATABASE_PASSWORD": "s3cret-word"])
        #expect(served.status != 0)
        #expect(served.err.contains("does not exist") && !served.err.contains("s3cret-word"))
    }

    @Test func eachNodeAllowsItsShareOfAProjectsRateLimit() async throws {
        // 1 report/s with a 10-second burst: one node alone accepts 10 at once; with two nodes each accepts about 5.
        let cluster = try await Cluster(rateLimit: 1)
        defer { cluster.cleanUp() }
        let a = try await cluster.node()
        defer { a.cleanUp() }
        let b = try await cluster.node()
        defer { b.cleanUp() }
        for node in [a, b] {
            #expect(
                await eventually(timeout: .seconds(20)) {
                    guard let text = try? await http.send(.GET, node.baseURL + "/metrics") else { return false }
                    return String(decoding: text.body, as: UTF8.self).contains("faultline_nodes 2.0")
                })
        }
        var accepted = 0
        for n in 0..<12 {
            let answer = try await http.postReports(a.baseURL, key: cluster.project.ingest, Self.crash(n, kind: 0))
            if answer.status == 202 { accepted += 1 } else { #expect(answer.status == 429) }
        }
        // Its half of the burst (5), and at most a token or two more refilled while the requests ran.
        #expect((5...7).contains(accepted), "accepted \(accepted) of 12 with the limit shared by two nodes")
    }
}
