import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing

/// Database faults under steady ingest (issue #38): two real `faultline serve` nodes on one real PostgreSQL, each on
/// 127.0.0.1; the database restarted with `pg_ctl` (a server this suite owns), cut off and slowed by a TCP proxy the
/// test drives (`tools/lib/fault-proxy.py`), and a node killed with SIGKILL while it holds claimed work and the render
/// lease. In every case: every answer is 202 or 503 with `Retry-After` (never a 500, never a hang), the nodes reconnect
/// by themselves, nothing acknowledged is lost, and recounting the raw reports and sessions in the database gives the
/// issues' counters and the crash-free rollups.
///
/// How long a fault lasts: `FAULTLINE_FAULT_SECONDS` (default 4, so that `tools/test` stays lean;
/// `tools/bench/pg-faults/run` passes 60).
@Suite(.serialized, .tags(.endToEnd, .multiNode, .postgres), .provisioned) struct PostgresFaultEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// How long each fault lasts.
    static var faultDuration: Duration {
        .seconds(Int(ProcessInfo.processInfo.environment["FAULTLINE_FAULT_SECONDS"] ?? "") ?? 4)
    }

    /// What every node runs with: a short request deadline and claim lease, so each test takes seconds.
    static let nodeOptions = ["--database-timeout-seconds", "2", "--claim-lease-seconds", "3"]

    @Test func aDatabaseRestartedWithPgCtlIsAnswered503UntilItIsBackAndNothingIsLostOrCountedTwice() async throws {
        let server = try OwnedPostgres()
        defer { server.destroy() }
        let cluster = try await FaultCluster(admin: server.url)
        defer { cluster.cleanUp() }
        let a = try await cluster.node(Self.nodeOptions)
        defer { a.cleanUp() }
        let b = try await cluster.node(Self.nodeOptions)
        defer { b.cleanUp() }
        let load = SteadyLoad(http: http, nodes: [a, b], key: cluster.project.ingest)

        try await load.during {
            try await Task.sleep(for: .seconds(2))
            try server.stop()
            try await Task.sleep(for: Self.faultDuration)
            // A loaded machine may answer later than the fault's length: the database stays down until a 503 comes.
            #expect(await eventually { load.count(503) > 0 }, "no 503 while the database was stopped")
            try server.start()
        }
        try await checkAfterFault(load, cluster: cluster, nodes: [a, b])
    }

    @Test func aDatabaseCutOffByTheProxyIsAnswered503AndNothingIsLostOrCountedTwice() async throws {
        let proxy = try await FaultProxy(upstream: try FaultCluster.sharedAdmin())
        defer { proxy.stop() }
        let cluster = try await FaultCluster(admin: try FaultCluster.sharedAdmin())
        defer { cluster.cleanUp() }
        let a = try await cluster.node(Self.nodeOptions, through: proxy)
        defer { a.cleanUp() }
        let b = try await cluster.node(Self.nodeOptions, through: proxy)
        defer { b.cleanUp() }
        let load = SteadyLoad(http: http, nodes: [a, b], key: cluster.project.ingest)

        try await load.during {
            try await Task.sleep(for: .seconds(2))
            // A partition: open connections stall and new ones get no answer; then every connection is cut (as a
            // link that comes back after the peers' TCP gave up), then the link is back.
            try await proxy.set("block")
            try await Task.sleep(for: Self.faultDuration)
            // A loaded machine may answer later than the fault's length: the link stays blocked until a 503 comes.
            #expect(await eventually { load.count(503) > 0 }, "no 503 while the database was cut off")
            try await proxy.set("drop")
            try await proxy.set("forward")
        }
        try await checkAfterFault(load, cluster: cluster, nodes: [a, b])
    }

    /// A node told to stop (SIGTERM) while its database is cut off cannot finish its graceful stop (its background
    /// loops wait on connections that never answer): past `--shutdown-timeout-seconds` it exits by itself, saying why,
    /// rather than waiting for the orchestrator's SIGKILL; what it acknowledged before is stored.
    @Test func aNodeToldToStopWhileItsDatabaseIsCutOffExitsAtItsShutdownDeadline() async throws {
        let proxy = try await FaultProxy(upstream: try FaultCluster.sharedAdmin())
        defer { proxy.stop() }
        let cluster = try await FaultCluster(admin: try FaultCluster.sharedAdmin())
        defer { cluster.cleanUp() }
        let node = try await cluster.node(Self.nodeOptions + ["--shutdown-timeout-seconds", "2"], through: proxy)
        defer { node.cleanUp() }
        let load = SteadyLoad(http: http, nodes: [node], key: cluster.project.ingest)
        for n in 0..<10 { _ = await load.send(report: n) }
        let acked = load.reportsAcked.withLock { $0 }
        #expect(acked.count == 10)

        try await proxy.set("block")
        // The worker asks for work every 200 ms when idle: within a second one of its queries waits on the cut link.
        try await Task.sleep(for: .seconds(1))
        kill(node.pid, SIGTERM)
        try await node.waitForExit(timeout: .seconds(60))
        #expect(node.log.contains("stopping now: the graceful stop did not end within 2.0 seconds"), "\(node.log)")
        #expect(node.exitStatus == 0)

        try await proxy.set("forward")
        let stored = Set(try cluster.query("SELECT event_id FROM reports").split(separator: "\n").map(String.init))
        #expect(acked.allSatisfy { stored.contains(Payloads.normalized($0)) })
    }

    @Test func aSlowDatabaseSlowsIngestAndLosesNothing() async throws {
        let proxy = try await FaultProxy(upstream: try FaultCluster.sharedAdmin())
        defer { proxy.stop() }
        let cluster = try await FaultCluster(admin: try FaultCluster.sharedAdmin())
        defer { cluster.cleanUp() }
        let a = try await cluster.node(Self.nodeOptions, through: proxy)
        defer { a.cleanUp() }
        let b = try await cluster.node(Self.nodeOptions, through: proxy)
        defer { b.cleanUp() }
        let load = SteadyLoad(http: http, nodes: [a, b], key: cluster.project.ingest)

        try await load.during {
            try await Task.sleep(for: .seconds(2))
            let before = load.count(202)
            try await proxy.set("latency?ms=30")
            try await Task.sleep(for: Self.faultDuration)
            // Slower, not stopped: reports are still acknowledged through the slow link.
            #expect(load.count(202) > before, "nothing acknowledged while the database was slow")
            try await proxy.set("forward")
        }
        try await checkAfterFault(load, cluster: cluster, nodes: [a, b])
    }

    @Test func aNodeKilledHoldingClaimedWorkAndTheRenderLeaseIsTakenOverAndEachReportIsFiledOnce() async throws {
        let proxy = try await FaultProxy(upstream: try FaultCluster.sharedAdmin())
        defer { proxy.stop() }
        let cluster = try await FaultCluster(admin: try FaultCluster.sharedAdmin())
        defer { cluster.cleanUp() }
        // Node A reaches the database through a slow link, so that its batches stay claimed for a while; it is alone
        // at first, so the claims and the render lease are its own.
        try await proxy.set("latency?ms=40")
        let a = try await cluster.node(Self.nodeOptions + ["--public-dashboard"], through: proxy)
        defer { a.cleanUp() }
        let load = SteadyLoad(http: http, nodes: [a], key: cluster.project.ingest)
        let claimedAtKill = Locked(0)
        try await load.during {
            let holding = await eventually(timeout: .seconds(60)) {
                guard (try? await self.leaseHeld(a)) == true else { return false }
                return
                    (try? cluster.count(
                        "SELECT count(*) FROM reports WHERE symbolication = 'pending' AND claimed_until > \(FaultCluster.nowMillis)"
                    )) ?? 0 > 0
            }
            #expect(holding, "node A never held claimed reports and the render lease at once")
            // The clients stop sending to A as it dies (what they had in flight may go unanswered, and is resent).
            load.stopped.withLock { $0 = true }
            try await a.kill9()
            let claimed = try cluster.count(
                "SELECT count(*) FROM reports WHERE symbolication = 'pending' AND claimed_until IS NOT NULL")
            claimedAtKill.withLock { $0 = claimed }
        }
        #expect(claimedAtKill.withLock { $0 } > 0)

        // Node B starts after the kill: it takes the render lease (A's connection died with it) and, once the claims'
        // lease ends, A's claimed reports; reports A acknowledged are all there.
        let b = try await cluster.node(Self.nodeOptions + ["--public-dashboard"])
        defer { b.cleanUp() }
        #expect(await eventually(timeout: .seconds(30)) { (try? await leaseHeld(b)) == true })
        let more = SteadyLoad(http: http, nodes: [b], key: cluster.project.ingest, first: 500_000)
        try await more.during { try await Task.sleep(for: .seconds(2)) }
        try await checkAfterFault(load, cluster: cluster, nodes: [b], also: [more])
    }

    // MARK: - What every case checks

    /// Every answer was 202 or 503 with `Retry-After`; the nodes answer 202 again; everything not acknowledged is sent
    /// again until it is (as an SDK would); then every report and session is stored once, every report filed, and the
    /// issues' counters and the crash-free rollups equal a recount of the raw rows.
    func checkAfterFault(
        _ load: SteadyLoad, cluster: FaultCluster, nodes: [ServerProcess], also: [SteadyLoad] = []
    ) async throws {
        for run in [load] + also {
            let statuses = run.statuses.withLock { $0 }
            #expect(Set(statuses.keys).isSubset(of: [202, 503, -1]), "answers other than 202/503: \(statuses)")
            #expect(run.missingRetryAfter.withLock { $0 } == 0, "a 503 without Retry-After")
        }
        // A node that lived through the fault answered without hanging (a request past 30 s counts as -1).
        if also.isEmpty { #expect(load.count(-1) == 0, "requests that got no answer: \(load.count(-1))") }

        // Reconnected by themselves: each node acknowledges again.
        for (index, node) in nodes.enumerated() {
            let probe = SteadyLoad(http: http, nodes: [node], key: cluster.project.ingest)
            #expect(
                await eventually(timeout: .seconds(60)) { await probe.send(report: 900_000 + index * 1000) == 202 },
                "node \(index) does not acknowledge after the fault")
        }
        var reports = 0
        for run in [load] + also { reports += await run.resendUnacknowledged(to: nodes) }
        let probes = nodes.count
        let sent = load.reportsSent + also.map(\.reportsSent).reduce(0, +)
        let sessions = load.sessionsSent + also.map(\.sessionsSent).reduce(0, +)
        #expect(reports == 0, "reports still unacknowledged after the retries")

        // Every report and session once (an acknowledged one is never lost; a retried one is a duplicate).
        #expect(try cluster.count("SELECT count(*) FROM reports") == sent + probes)
        #expect(try cluster.count("SELECT count(*) FROM sessions") == sessions)
        for run in [load] + also {
            let acked = run.reportsAcked.withLock { $0 }
            let stored = Set(try cluster.query("SELECT event_id FROM reports").split(separator: "\n").map(String.init))
            let lost = acked.filter { !stored.contains(Payloads.normalized($0)) }
            #expect(lost.isEmpty, "acknowledged and lost: \(lost.sorted().prefix(20))")
        }

        // Processed by the nodes, each report filed once, none failed for the outage. (A report that stays pending or
        // unfiled is shown with its state, attempts and claim: what a failure here needs to be told apart.)
        let unprocessed = "SELECT count(*) FROM reports WHERE symbolication = 'pending' OR issue_id IS NULL"
        let done = await eventually(timeout: .seconds(120)) { (try? cluster.count(unprocessed)) == 0 }
        let left =
            done
            ? ""
            : (try? cluster.query(
                """
                SELECT state || ': ' || count(*) FROM (
                    SELECT symbolication || ' filed=' || (issue_id IS NOT NULL) || ' attempts=' || symbolication_attempts
                        || ' failed=' || (symbolication_failure IS NOT NULL) || ' claimed=' || (claimed_until IS NOT NULL)
                        AS state
                    FROM reports WHERE symbolication = 'pending' OR issue_id IS NULL) left_over
                GROUP BY state ORDER BY state
                """)) ?? ""
        #expect(done, "reports left unprocessed:\n\(left)")
        #expect(try cluster.count("SELECT count(*) FROM reports WHERE symbolication_failure IS NOT NULL") == 0)
        #expect(try cluster.count("SELECT coalesce(sum(events), 0) FROM issues") == sent + probes)
        let mismatches = try cluster.recount()
        #expect(mismatches.isEmpty, "counters differ from the raw rows:\n\(mismatches.joined(separator: "\n"))")
    }

    /// Whether `node` holds the render lease (its metric).
    func leaseHeld(_ node: ServerProcess) async throws -> Bool {
        let text = String(decoding: try await http.send(.GET, node.baseURL + "/metrics").body, as: UTF8.self)
        return text.contains("faultline_render_lease_held 1.0")
    }
}

/// A database of its own on a PostgreSQL server, a shared folder, and a project made with the CLI (on the direct URL).
struct FaultCluster {
    let url: String
    let blobs: String
    let project: (ingest: String, upload: String, id: Int)

    /// The throwaway server every suite shares (`tools/test` starts it).
    static func sharedAdmin() throws -> String {
        guard let admin = TestEnvironment.value("FAULTLINE_TEST_POSTGRES_URL"), !admin.isEmpty else {
            throw TestFailure("FAULTLINE_TEST_POSTGRES_URL is not set: run the tests with tools/test")
        }
        return admin
    }

    /// Now in milliseconds, as SQL (the claims' `claimed_until` is in milliseconds since 1970).
    static let nowMillis = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"

    init(admin: String) async throws {
        let name = "fault_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let made = try Command.run(
            "psql", [admin, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", "CREATE DATABASE \(name)"])
        guard made.status == 0 else { throw TestFailure("cannot create database \(name): \(made.err)") }
        var components = try #require(URLComponents(string: admin))
        components.path = "/" + name
        url = try #require(components.string)
        blobs = ServerProcess.newFolder()
        project = try await ServerProcess.createProject(
            "app", in: ServerProcess.newFolder(), extra: ["--database", url, "--blobs", blobs])
    }

    /// A node on this database, directly or through `proxy`.
    func node(_ more: [String] = [], through proxy: FaultProxy? = nil) async throws -> ServerProcess {
        var target = url
        if let proxy, var components = URLComponents(string: url) {
            components.port = proxy.port
            target = components.string ?? url
        }
        return try await ServerProcess(
            folder: ServerProcess.newFolder(), arguments: ["--database", target, "--blobs", blobs] + more,
            environment: ["FAULTLINE_RENDER_INTERVAL_MS": "300", "SWIFT_BACKTRACE": "enable=no"])
    }

    func query(_ sql: String) throws -> String {
        let result = try Command.run("psql", [url, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        guard result.status == 0 else { throw TestFailure("psql failed: \(sql): \(result.err)") }
        return result.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func count(_ sql: String) throws -> Int {
        guard let value = Int(try query(sql)) else { throw TestFailure("not a number from: \(sql)") }
        return value
    }

    /// The issues' counters and the crash-free rollups recounted from the raw reports and sessions: one line per row
    /// that differs (none when everything was counted once).
    func recount() throws -> [String] {
        let checks = [
            // Issues: events and users from the reports filed under them, and their per-release, per-day and
            // per-user rows adding up to the same.
            """
            SELECT 'issue ' || i.id || ': events ' || i.events || ', reports ' || r.n || ', users ' || i.users
                || ', distinct users ' || r.u
            FROM issues i JOIN (SELECT issue_id, count(*) AS n, count(DISTINCT user_key) AS u FROM reports
                GROUP BY issue_id) r ON r.issue_id = i.id
            WHERE i.events <> r.n OR i.users <> r.u
            """,
            """
            SELECT 'issue ' || i.id || ' without reports counts ' || i.events FROM issues i
            WHERE i.events <> 0 AND NOT EXISTS (SELECT 1 FROM reports r WHERE r.issue_id = i.id)
            """,
            """
            SELECT 'issue ' || i.id || ': releases ' || coalesce(x.e, 0) || ', days ' || coalesce(d.e, 0)
                || ', users rows ' || coalesce(u.e, 0) || '/' || coalesce(u.n, 0) || ' vs ' || i.events || '/' || i.users
            FROM issues i
            LEFT JOIN (SELECT issue_id, sum(events) AS e FROM issue_releases GROUP BY issue_id) x ON x.issue_id = i.id
            LEFT JOIN (SELECT issue_id, sum(events) AS e FROM issue_days GROUP BY issue_id) d ON d.issue_id = i.id
            LEFT JOIN (SELECT issue_id, sum(events) AS e, count(*) AS n FROM issue_users GROUP BY issue_id) u
                ON u.issue_id = i.id
            WHERE coalesce(x.e, 0) <> i.events OR coalesce(d.e, 0) <> i.events OR coalesce(u.e, 0) <> i.events
                OR coalesce(u.n, 0) <> i.users
            """,
            // Crash-free: each release's sessions, crashed sessions, users and crashed users from the sessions.
            """
            SELECT 'release ' || s.release || ': sessions ' || coalesce(h.sessions, 0) || ' of ' || s.n
                || ', crashed ' || coalesce(h.crashed, 0) || ' of ' || s.c || ', users ' || coalesce(h.users, 0)
                || ' of ' || s.u || ', crashed users ' || coalesce(h.crashed_users, 0) || ' of ' || s.cu
            FROM (SELECT project_id, release, count(*) AS n, count(*) FILTER (WHERE status = 'crashed') AS c,
                    count(DISTINCT distinct_id) AS u,
                    count(DISTINCT distinct_id) FILTER (WHERE status = 'crashed') AS cu
                  FROM sessions GROUP BY project_id, release) s
            LEFT JOIN health_releases h ON h.project_id = s.project_id AND h.release = s.release
            WHERE h.sessions IS DISTINCT FROM s.n OR h.crashed IS DISTINCT FROM s.c OR h.users IS DISTINCT FROM s.u
                OR h.crashed_users IS DISTINCT FROM s.cu
            """,
            // The daily rows add up to the release's sessions.
            """
            SELECT 'release ' || h.release || ': days add up to ' || d.n || ' sessions, ' || d.c || ' crashed, not '
                || h.sessions || '/' || h.crashed
            FROM health_releases h
            JOIN (SELECT project_id, release, sum(sessions) AS n, sum(crashed) AS c FROM health_days
                  GROUP BY project_id, release) d ON d.project_id = h.project_id AND d.release = h.release
            WHERE d.n <> h.sessions OR d.c <> h.crashed
            """,
        ]
        return try checks.flatMap { try query($0).split(separator: "\n").map(String.init) }
    }

    func cleanUp() { try? FileManager.default.removeItem(atPath: blobs) }
}

/// Steady ingest against some nodes: `clients` tasks, each sending in turn a native crash report (three kinds, so
/// three issues; seven users) and a session (every fourth crashed) until stopped, the nodes taken in turn. Records
/// every answer's status (-1: no answer within 30 s, or the connection failed) and what was acknowledged.
final class SteadyLoad: Sendable {
    let http: HTTP
    let nodes: [ServerProcess]
    let key: String
    let first: Int
    let clients = 4
    let statuses = Locked<[Int: Int]>([:])
    let missingRetryAfter = Locked(0)
    let reportsAcked = Locked<Set<Int>>([])
    let sessionsAcked = Locked<Set<Int>>([])
    /// The numbers sent (each a report and a session).
    let used = Locked<Set<Int>>([])
    let stopped = Locked(false)

    init(http: HTTP, nodes: [ServerProcess], key: String, first: Int = 0) {
        self.http = http
        self.nodes = nodes
        self.key = key
        self.first = first
    }

    var reportsSent: Int { used.withLock { $0.count } }
    var sessionsSent: Int { used.withLock { $0.count } }

    func count(_ status: Int) -> Int { statuses.withLock { $0[status, default: 0] } }

    /// Runs the load while `fault` runs, and a second after it.
    func during(_ fault: @Sendable () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                group.addTask {
                    var n = self.first + client
                    while !self.stopped.withLock({ $0 }) {
                        self.used.withLock { _ = $0.insert(n) }
                        _ = await self.send(report: n)
                        _ = await self.send(session: n)
                        n += self.clients
                        try? await Task.sleep(for: .milliseconds(20))
                    }
                }
            }
            do {
                try await fault()
                try await Task.sleep(for: .seconds(1))
            } catch {
                stopped.withLock { $0 = true }
                throw error
            }
            stopped.withLock { $0 = true }
            try await group.waitForAll()
        }
    }

    /// Sends report `n` (to a node chosen by `n`); its status, or -1.
    func send(report n: Int, to chosen: ServerProcess? = nil) async -> Int {
        let node = chosen ?? nodes[n % nodes.count]
        let body = MultiNodeEndToEndTests.crash(n, kind: n % 3).replacingOccurrences(
            of: "\"user_id\":\"user-\(n % 5)\"", with: "\"user_id\":\"user-\(n % 7)\"")
        let answer = try? await http.postReports(node.baseURL, key: key, body, timeout: .seconds(30))
        record(answer)
        if answer?.status == 202 { reportsAcked.withLock { _ = $0.insert(n) } }
        return answer?.status ?? -1
    }

    /// Sends session `n` (one update, final: exited, or crashed for every fourth) to the other node; its status.
    func send(session n: Int, to chosen: ServerProcess? = nil) async -> Int {
        let node = chosen ?? nodes[(n + 1) % nodes.count]
        let body = Payloads.session(
            "s-\(n)", status: n % 4 == 0 ? "crashed" : "exited", release: "1.0 (7)", user: "user-\(n % 7)")
        let answer = try? await http.send(
            .POST, node.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(key)"), ("Content-Type", "application/json")],
            body: Array(body.utf8), timeout: .seconds(30))
        record(answer)
        if answer?.status == 202 { sessionsAcked.withLock { _ = $0.insert(n) } }
        return answer?.status ?? -1
    }

    func record(_ answer: HTTP.Answer?) {
        statuses.withLock { $0[answer?.status ?? -1, default: 0] += 1 }
        if answer?.status == 503, answer?.headers.first(name: "Retry-After") == nil {
            missingRetryAfter.withLock { $0 += 1 }
        }
    }

    /// Every report and session sent but not acknowledged, sent again (as an SDK does after a 503 or no answer)
    /// until acknowledged; returns how many reports are still not.
    func resendUnacknowledged(to live: [ServerProcess]) async -> Int {
        var left = 0
        for n in used.withLock({ $0 }).sorted() {
            if !reportsAcked.withLock({ $0.contains(n) }) {
                let ok = await eventually(timeout: .seconds(30)) {
                    await self.send(report: n, to: live[n % live.count]) == 202
                }
                if !ok { left += 1 }
            }
            if !sessionsAcked.withLock({ $0.contains(n) }) {
                _ = await eventually(timeout: .seconds(30)) {
                    await self.send(session: n, to: live[n % live.count]) == 202
                }
            }
        }
        return left
    }
}

/// `tools/lib/fault-proxy.py` between the nodes and PostgreSQL, driven through its control port.
final class FaultProxy: Sendable {
    let process: ChildProcess
    let port: Int
    let control: Int

    init(upstream admin: String) async throws {
        let components = try #require(URLComponents(string: admin))
        let upstream = "\(components.host ?? "127.0.0.1"):\(components.port ?? 5432)"
        let folder = ServerProcess.newFolder()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let portsFile = folder + "/ports"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("tools/lib/fault-proxy.py").path
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--upstream", upstream, "--ports-file", portsFile]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        var ports: [Int] = []
        let deadline = ContinuousClock.now + .seconds(20)
        while ports.count != 2, ContinuousClock.now < deadline {
            ports = ((try? String(contentsOfFile: portsFile, encoding: .utf8)) ?? "").split(separator: " ").compactMap {
                Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            if ports.count != 2 { try await Task.sleep(for: .milliseconds(50)) }
        }
        guard ports.count == 2 else {
            process.terminate()
            throw TestFailure("the fault proxy did not start")
        }
        (port, control) = (ports[0], ports[1])
    }

    /// `forward`, `latency?ms=N`, `block` or `drop` (answered once in effect).
    func set(_ mode: String) async throws {
        let answer = try await HTTP(client: HTTPClient.shared).send(.POST, "http://127.0.0.1:\(control)/\(mode)")
        guard answer.status == 200 else { throw TestFailure("the fault proxy refused \(mode): \(answer.status)") }
    }

    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// A PostgreSQL server of the test's own (so that stopping it stops no other suite's database): a cluster in a
/// temporary folder on a free loopback port, fsync off, stopped and started with `pg_ctl`.
final class OwnedPostgres: Sendable {
    let folder: String
    let port: Int
    let bin: String
    /// `runuser -u postgres --` when running as root (initdb and postgres refuse root).
    let prefix: [String]

    init() throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.compactMap(Int.init).max() else {
            throw TestFailure("no PostgreSQL under /usr/lib/postgresql (tools/lib/test-needs postgres installs it)")
        }
        bin = "/usr/lib/postgresql/\(version)/bin"
        folder = FileManager.default.temporaryDirectory.path + "/fault-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let free = try Command.run(
            "python3",
            ["-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"])
        port = try #require(Int(free.out.trimmingCharacters(in: .whitespacesAndNewlines)))
        if getuid() == 0 {
            prefix = ["runuser", "-u", "postgres", "--"]
            _ = try Command.run("chown", ["postgres", folder])
        } else {
            prefix = []
        }
        try run("initdb", ["-D", folder + "/db", "-A", "trust", "-U", "postgres", "--no-sync"])
        try start()
    }

    var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Runs `tool` with every descriptor above stderr closed: the server that `pg_ctl start` leaves running must not
    /// hold one of this process's, or Foundation's `Process` waits for it as for the child.
    func run(_ tool: String, _ arguments: [String]) throws {
        let closing =
            #"for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null; exec "$@""#
        let command = ["-c", closing, "bash"] + prefix + [bin + "/" + tool] + arguments
        let result = try Command.run("bash", command)
        guard result.status == 0 else { throw TestFailure("\(tool) failed: \(result.err)") }
    }

    func start() throws {
        try run(
            "pg_ctl",
            [
                "-D", folder + "/db", "-w", "-l", folder + "/log", "-o",
                "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100", "start",
            ])
    }

    /// A fast shutdown: sessions are ended (57P01), then the server stops.
    func stop() throws { try run("pg_ctl", ["-D", folder + "/db", "-w", "-m", "fast", "stop"]) }

    func destroy() {
        try? run("pg_ctl", ["-D", folder + "/db", "-w", "-m", "immediate", "stop"])
        try? FileManager.default.removeItem(atPath: folder)
    }
}
