import AsyncHTTPClient
import FaultlineSDK
import Foundation
import Synchronization
import TestSupport
import Testing

/// The SDK's delivery (DeliveryQueue + Uploader over the real URLSession transport) against the real `faultline`
/// server: what is queued arrives once, whatever the server does in between.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SDKDeliveryEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    struct Setup {
        let server: ServerProcess
        let project: (ingest: String, upload: String, id: Int)
        var dsn: DSN { try! DSN("http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)") }
    }

    func start(extra: [String] = []) async throws -> Setup {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder, extra: extra)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        return Setup(server: server, project: project)
    }

    /// Answers and errors as the uploader saw them, passing through to the real transport; `loseAnswers` makes the
    /// first n answers vanish after the server sent them (a connection cut before the client read them).
    final class Recorder: HTTPTransport {
        let real = URLSessionTransport()
        let state = Mutex<(statuses: [Int], errors: Int, bodies: [String], lose: Int)>(([], 0, [], 0))
        init(loseAnswers: Int = 0) { state.withLock { $0.lose = loseAnswers } }

        var statuses: [Int] { state.withLock { $0.statuses } }
        var errors: Int { state.withLock { $0.errors } }
        var bodies: [String] { state.withLock { $0.bodies } }

        func post(url: String, headers: [(String, String)], body: [UInt8], timeout: Double) async throws -> HTTPAnswer {
            do {
                let answer = try await real.post(url: url, headers: headers, body: body, timeout: timeout)
                let lost = state.withLock { s -> Bool in
                    s.statuses.append(answer.status)
                    s.bodies.append(String(decoding: answer.body, as: UTF8.self))
                    if s.lose > 0 { s.lose -= 1; return true }
                    return false
                }
                if lost { throw SDKError(.transport, "the answer was lost") }
                return answer
            } catch let error as SDKError where error.code == .transport {
                state.withLock { $0.errors += 1 }
                throw error
            }
        }
    }

    /// Fast backoff so that retries happen within the test; the logic is the production one.
    static let quick = RetryPolicy(baseDelay: 0.1, maxDelay: 0.5)

    func eventID(_ n: Int) -> String {
        String(format: "%08x", n)
            + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24))
    }

    let device = FaultlineSDK.DeviceInfo(os: "Linux", osVersion: "6.1", arch: "x86_64", model: nil, memory: nil)

    func context(session: String, user: String) -> RunContext {
        RunContext(
            sessionID: session, installID: "install-" + user, userID: user, appVersion: "2.4.1", appBuild: "7",
            environment: "e2e", startedAt: Date().timeIntervalSince1970 - 30, pid: 1,
            breadcrumbs: [
                FaultlineSDK.Breadcrumb(timestamp: Date().timeIntervalSince1970 - 5, message: "checkout started")
            ],
            customKeys: [CustomKey(key: "cart_items", value: .int(3))])
    }

    func nonFatal(_ id: String, _ ctx: RunContext, message: String = "card declined") -> [UInt8] {
        ReportBuilder.nonFatal(
            eventID: id, timestamp: Date().timeIntervalSince1970,
            error: FaultlineSDK.ErrorInfo(type: "Shop.CheckoutError", code: "2", message: message), userInfo: [:],
            stack: CapturedStack(
                threadName: "main", frames: [.init(address: 0x1234, isProgramCounter: true)], modules: []),
            context: ctx, device: device)
    }

    func report(_ s: Setup, _ id: String) async throws -> [String: Any]? {
        let answer = try await http.send(
            .GET, s.server.baseURL + "/api/v1/reports/\(id)", headers: [("Authorization", "Bearer \(s.project.upload)")]
        )
        return answer.status == 200 ? answer.json : nil
    }

    func reportCount(_ s: Setup) async throws -> Int {
        let answer = try await http.send(
            .GET, s.server.baseURL + "/api/v1/reports?limit=500",
            headers: [("Authorization", "Bearer \(s.project.upload)")])
        return (answer.json["reports"] as? [[String: Any]])?.count ?? -1
    }

    func health(_ s: Setup) async throws -> [String: Any]? {
        let answer = try await http.send(
            .GET, s.server.baseURL + "/api/v1/releases", headers: [("Authorization", "Bearer \(s.project.upload)")])
        let releases = answer.json["releases"] as? [[String: Any]] ?? []
        return releases.first { $0["release"] as? String == "2.4.1" }?["health"] as? [String: Any]
    }

    @Test func queuedReportsAndSessionsArrive() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.file("queue"))
        let crashed = context(
            session: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(), user: "user-1")
        let clean = context(
            session: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(), user: "user-2")
        let ids = [eventID(1), eventID(2)]
        try queue.enqueue(
            kind: .session, id: crashed.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: crashed, status: .ok, duration: nil, seq: 1)))
        try queue.enqueue(
            kind: .session, id: clean.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: clean, status: .ok, duration: nil, seq: 1)))
        try queue.enqueue(kind: .nonfatal, id: ids[0], json: nonFatal(ids[0], crashed))
        try queue.enqueue(
            kind: .crash, id: ids[1],
            json: ReportBuilder.signalCrash(
                eventID: ids[1], timestamp: Date().timeIntervalSince1970, signal: 11, stderrTail: ["parsing header"],
                crashMessage: nil,
                context: crashed, device: device))
        try queue.enqueue(
            kind: .session, id: crashed.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: crashed, status: .crashed, duration: 30, seq: 2)))
        try queue.enqueue(
            kind: .session, id: clean.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: clean, status: .exited, duration: 30, seq: 2)))

        let recorder = Recorder()
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: recorder, policy: Self.quick)
        #expect(await uploader.drain(deadline: .now + .seconds(60)))
        #expect(queue.pending().isEmpty)
        #expect(recorder.statuses == [202, 202, 202, 202, 202, 202])

        let nonFatal = try #require(try await report(s, ids[0]))
        #expect(nonFatal["kind"] as? String == "nonfatal")
        #expect(nonFatal["user_id"] as? String == "user-1")
        #expect(nonFatal["release"] as? String == "2.4.1")
        #expect((nonFatal["error"] as? [String: Any])?["type"] as? String == "Shop.CheckoutError")
        #expect((nonFatal["custom_keys"] as? [String: Any])?["cart_items"] as? Int == 3)
        let crash = try #require(try await report(s, ids[1]))
        #expect((crash["error"] as? [String: Any])?["type"] as? String == "SIGSEGV")
        let crumbs = (crash["breadcrumbs"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
        #expect(crumbs == ["checkout started", "parsing header"])

        // Two sessions of two users, one crashed.
        #expect(try await eventually { (try await health(s))?["sessions"] as? Int == 2 })
        let h = try #require(try await health(s))
        #expect(h["crashed_sessions"] as? Int == 1)
        #expect(h["users"] as? Int == 2)
    }

    @Test func aResendAfterALostAnswerIsADuplicateNotASecondEvent() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.path)
        let id = eventID(3)
        try queue.enqueue(kind: .nonfatal, id: id, json: nonFatal(id, context(session: "a1", user: "u")))
        let recorder = Recorder(loseAnswers: 1)
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: recorder, policy: Self.quick)
        #expect(await uploader.drain(deadline: .now + .seconds(60)))
        // Stored by the first request; the resend was answered as a duplicate.
        #expect(recorder.statuses == [202, 202])
        #expect(recorder.bodies.last?.contains("\"duplicates\":[\"\(id)\"]") == true)
        #expect(try await reportCount(s) == 1)
        #expect(try await report(s, id) != nil)
    }

    @Test func theServerDownThenStartedGetsEverythingOnce() async throws {
        // Learn a port the server will listen on, then stop it: nothing listens there while the app queues.
        let first = try await start()
        defer { first.server.cleanUp() }
        let port = first.server.port
        let dsn = first.dsn
        _ = try await first.server.terminate()

        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.path)
        let ctx = context(
            session: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(), user: "user-9")
        let ids = (10..<15).map(eventID)
        for id in ids { try queue.enqueue(kind: .crash, id: id, json: nonFatal(id, ctx)) }
        try queue.enqueue(
            kind: .session, id: ctx.sessionID,
            json: ReportBuilder.session(SessionUpdate(context: ctx, status: .crashed, duration: 3, seq: 2)))

        let recorder = Recorder()
        let uploader = Uploader(dsn: dsn, queue: queue, transport: recorder, policy: Self.quick)
        // Each drain gives up at its deadline with everything kept; over a few of them the uploader retried.
        // (Counted in attempts, not seconds: a loaded machine makes each attempt slower.)
        for _ in 0..<60 where recorder.errors < 2 {
            #expect(await uploader.drain(deadline: .now + .seconds(1)) == false)
        }
        #expect(recorder.errors >= 2)
        #expect(recorder.statuses.isEmpty)
        #expect(queue.pending().count == 6)

        // The server comes back on the same port with the same data.
        let again = try await ServerProcess(folder: first.server.folder, arguments: ["--port", String(port)])
        defer { again.cleanUp() }
        #expect(again.port == port)
        #expect(await uploader.drain(deadline: .now + .seconds(60)))
        #expect(queue.pending().isEmpty)
        let s = Setup(server: again, project: first.project)
        for id in ids { #expect(try await report(s, id) != nil) }
        #expect(try await reportCount(s) == 5)
        #expect(try await eventually { (try await health(s))?["crashed_sessions"] as? Int == 1 })
    }

    @Test func a429IsHonoredAndEverythingArrives() async throws {
        // One report every ten seconds and a bucket of one: the first upload takes the only token, so the second is
        // refused however slowly this machine sends it (unless one upload took ten seconds), and the uploader has to
        // wait out each Retry-After to get the rest in.
        let s = try await start(extra: ["--rate-limit", "0.1"])
        defer { s.server.cleanUp() }
        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.path)
        let ctx = context(session: "rl", user: "u")
        let ids = (20..<23).map(eventID)
        for id in ids { try queue.enqueue(kind: .crash, id: id, json: nonFatal(id, ctx)) }
        let recorder = Recorder()
        // The production backoff: only Retry-After lets the uploader come back within ten seconds.
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: recorder)
        #expect(await uploader.drain(deadline: .now + .seconds(90)))
        #expect(try await reportCount(s) == 3)
        let limited = recorder.statuses.filter { $0 == 429 }.count
        // The second and third each wait for a token, and each is refused at most once: a retry comes only after the
        // Retry-After the server gave, when the token is there.
        #expect(limited >= 1)
        #expect(limited <= 2)
        #expect(recorder.statuses.filter { $0 == 202 }.count == 3)
        // The server saw exactly those: no request was sent while a Retry-After held.
        let metrics = String(decoding: try await http.send(.GET, s.server.baseURL + "/metrics").body, as: UTF8.self)
        let seen = metrics.split(separator: "\n")
            .filter { $0.hasPrefix("faultline_reports_rejected_total{") && $0.contains(#"reason="rate_limited""#) }
            .compactMap { Double($0.split(separator: " ").last ?? "") }.reduce(0, +)
        #expect(Int(seen) == limited)
    }

    /// Spike protection (issue #38) against the Swift SDK: past the project's quota the server answers 429 with the
    /// seconds to the window's end; the uploader holds reports back that long, sends no report meanwhile, and keeps
    /// sending sessions, so crash-free numbers stay exact while reports are refused.
    @Test func aQuotaHoldsReportsBackWhileSessionsGoOn() async throws {
        // An hourly quota of 3 reports; a run too close to the hour's end (a fresh window) waits for the next hour.
        let intoHour = Int(Date().timeIntervalSince1970) % 3600
        if intoHour > 3600 - 45 { try await Task.sleep(for: .seconds(3600 - intoHour + 1)) }
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let configured = try await ServerProcess.run(
            ["projects", "configure", "shop", "--data", folder, "--quota-per-hour", "3"])
        #expect(configured.status == 0, "\(configured)")
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let s = Setup(server: server, project: project)

        // Six users' sessions start, each sends a crash, three of the sessions crashed and three exited.
        let queueFolder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: queueFolder.path)
        let runs = (0..<6).map { n in
            context(session: UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased(), user: "q\(n)")
        }
        for run in runs {
            try queue.enqueue(
                kind: .session, id: run.sessionID,
                json: ReportBuilder.session(SessionUpdate(context: run, status: .ok, duration: nil, seq: 1)))
        }
        let ids = (60..<66).map(eventID)
        for (id, run) in zip(ids, runs) { try queue.enqueue(kind: .crash, id: id, json: nonFatal(id, run)) }
        for (n, run) in runs.enumerated() {
            let status: SessionUpdate.Status = n < 3 ? .crashed : .exited
            try queue.enqueue(
                kind: .session, id: run.sessionID,
                json: ReportBuilder.session(SessionUpdate(context: run, status: status, duration: 30, seq: 2)))
        }
        let recorder = Recorder()
        // The production policy: a 429's Retry-After (here the rest of the hour) holds reports back.
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: recorder)
        // Drained in rounds of 10 s until only the held reports are left: one round is enough on a quiet machine, and
        // a loaded one (the end-to-end stage at a load of 25) gets up to two minutes. The queue never empties.
        for _ in 0..<12 {
            #expect(
                await uploader.drain(deadline: .now + .seconds(10)) == false, "three reports wait for the next hour")
            if recorder.statuses.contains(429) && queue.pending().count == 3 { break }
        }

        // Then three reports were stored, one request met the quota and no report was sent after it, the other three
        // wait in the queue (kept, not dropped), and every session arrived
        #expect(try await reportCount(s) == 3)
        #expect(recorder.statuses.filter { $0 == 429 }.count == 1, "\(recorder.statuses)")
        #expect(queue.pending().count == 3)
        #expect(queue.rejected() == 0)
        #expect(try await eventually { (try await health(s))?["sessions"] as? Int == 6 })
        let h = try #require(try await health(s))
        #expect(h["crashed_sessions"] as? Int == 3)
        #expect(h["users"] as? Int == 6)
        #expect(h["crashed_users"] as? Int == 3)
    }

    @Test func aRefusedItemIsDroppedAndDoesNotBlockTheOthers() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.path)
        let ctx = context(session: "bad", user: "u")
        let good = [eventID(40), eventID(42)]
        let bad = eventID(41)
        try queue.enqueue(kind: .nonfatal, id: good[0], json: nonFatal(good[0], ctx))
        try queue.enqueue(
            kind: .crash, id: bad, json: Array(#"{"event_id":"\#(bad)","kind":"explosion","timestamp":1}"#.utf8))
        try queue.enqueue(kind: .nonfatal, id: good[1], json: nonFatal(good[1], ctx))
        let recorder = Recorder()
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: recorder, policy: Self.quick)
        #expect(await uploader.drain(deadline: .now + .seconds(60)))
        #expect(recorder.statuses == [202, 400, 202])
        #expect(queue.pending().isEmpty)
        #expect(queue.rejected() == 1)
        for id in good { #expect(try await report(s, id) != nil) }
        #expect(try await report(s, bad) == nil)
    }

    @Test func theQueueBoundDropsTheOldestAndCountsThem() async throws {
        let s = try await start()
        defer { s.server.cleanUp() }
        let folder = try TempFolder("sdk-e2e")
        let queue = try DeliveryQueue(directory: folder.path, maxItems: 3)
        let ctx = context(session: "bound", user: "u")
        let ids = (50..<55).map(eventID)
        for id in ids { try queue.enqueue(kind: .crash, id: id, json: nonFatal(id, ctx)) }
        #expect(queue.dropped() == 2)
        let uploader = Uploader(dsn: s.dsn, queue: queue, transport: Recorder(), policy: Self.quick)
        #expect(await uploader.drain(deadline: .now + .seconds(60)))
        #expect(try await reportCount(s) == 3)
        for id in ids.prefix(2) { #expect(try await report(s, id) == nil) }
        for id in ids.suffix(3) { #expect(try await report(s, id) != nil) }
    }
}
