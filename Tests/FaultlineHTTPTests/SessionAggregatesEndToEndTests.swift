import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #39 finding 2: Sentry's request-mode session aggregates are stored as counts (a row per aggregate and
/// status, not a row per counted session), and every session is charged to the project's session budget
/// (`IngestService.sessionsPerReport` × its rate limit), against the real `faultline` binary and the real sentry-sdk.
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct SessionAggregatesEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// Rows of the `sessions` table of `project`, read from the server's SQLite file (read-only, beside the server).
    static func sessionRows(_ folder: String, project: Int) throws -> Int {
        let result = try Command.run(
            "python3",
            [
                "-c",
                "import sqlite3,sys; c=sqlite3.connect('file:'+sys.argv[1]+'?mode=ro', uri=True); "
                    + "print(c.execute('SELECT count(*) FROM sessions WHERE project_id=?', (int(sys.argv[2]),)).fetchone()[0])",
                folder + "/faultline.sqlite", String(project),
            ])
        guard result.status == 0, let rows = Int(result.out.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("sqlite read failed: \(result.err)")
        }
        return rows
    }

    /// A 189-byte-class envelope: one aggregate counting `count` sessions of `status`.
    static func aggregate(_ status: String, _ count: Int, did: String? = nil) -> [UInt8] {
        let started = ISO8601DateFormatter().string(from: Date())
        let user = did.map { #","did":"\#($0)""# } ?? ""
        let item =
            #"{"attrs":{"release":"web@1.0","environment":"production"},"aggregates":[{"started":"\#(started)","\#(status)":\#(count)\#(user)}]}"#
        return Array("{}\n{\"type\":\"sessions\",\"length\":\(item.utf8.count)}\n\(item)\n".utf8)
    }

    func post(_ server: ServerProcess, _ project: (ingest: String, upload: String, id: Int), _ body: [UInt8])
        async throws -> HTTP.Answer
    {
        try await http.send(
            .POST, server.baseURL + "/api/\(project.id)/envelope/?sentry_key=\(project.ingest)",
            headers: [("Content-Type", "application/x-sentry-envelope")], body: body)
    }

    func health(_ server: ServerProcess, _ project: (ingest: String, upload: String, id: Int)) async throws -> [String:
        Any]
    {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/health?days=2", headers: [("Authorization", "Bearer \(project.upload)")])
        let days = answer.json["days"] as? [[String: Any]] ?? []
        return days.compactMap { $0["health"] as? [String: Any] }.last { ($0["sessions"] as? Int ?? 0) > 0 } ?? [:]
    }

    @Test func anAggregateIsOneRowAndChargedToTheSessionBudget() async throws {
        // Given two projects limited to 1 report/s (so 100 sessions/s, bursts of 1,000)
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder, extra: ["--rate-limit", "1"])
        let other = try await ServerProcess.createProject("other", in: folder, extra: ["--rate-limit", "1"])
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        // When one small envelope counts 10,000 exited sessions
        let body = Self.aggregate("exited", 10_000)
        #expect(body.count < 260)
        let first = try await post(server, shop, body)
        #expect(first.status == 200)
        // Then they are counted exactly, in one row
        #expect(try Self.sessionRows(folder, project: shop.id) == 1)
        #expect(try await health(server, shop)["sessions"] as? Int == 10_000)

        // And the next aggregate (10,000 crashed) is over the session budget: dropped, said in Relay's header, so
        // crash-free stays where it was
        let second = try await post(server, shop, Self.aggregate("crashed", 10_000))
        #expect(second.status == 200)
        let limits = second.headers["X-Sentry-Rate-Limits"].first ?? ""
        #expect(limits.contains(":session:project:rate_limited"), "\(limits)")
        let after = try await health(server, shop)
        #expect(after["sessions"] as? Int == 10_000)
        #expect(after["crashed_sessions"] as? Int == 0)
        #expect(try Self.sessionRows(folder, project: shop.id) == 1)

        // The native sessions route is charged to the same budget: 429 with Retry-After
        let native = try await http.send(
            .POST, server.baseURL + "/api/v1/sessions",
            headers: [("Authorization", "Bearer \(shop.ingest)"), ("Content-Type", "application/json")],
            body: Array(Payloads.session("s-1", status: "exited").utf8))
        #expect(native.status == 429)
        #expect(native.headers["Retry-After"].first.flatMap(Int.init).map { $0 >= 1 } == true)

        // Another project's budget is its own; an aggregate with a distinct id is one user with that many sessions
        let elsewhere = try await post(server, other, Self.aggregate("crashed", 500, did: "install-1"))
        #expect(elsewhere.status == 200)
        #expect(elsewhere.headers["X-Sentry-Rate-Limits"].isEmpty)
        let otherDay = try await health(server, other)
        #expect(otherDay["sessions"] as? Int == 500)
        #expect(otherDay["crashed_sessions"] as? Int == 500)
        #expect(otherDay["users"] as? Int == 1)
        #expect(otherDay["crashed_users"] as? Int == 1)

        // A count past what one envelope may add is refused whole, not cut
        let huge = try await post(server, other, Self.aggregate("exited", 10_001))
        #expect(huge.status == 200)
        #expect(try await health(server, other)["sessions"] as? Int == 500)
        let metrics = try await http.send(.GET, server.baseURL + "/metrics")
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("faultline_sessions_rate_limited_total"))
    }

    @Test func theRealSDKsRequestModeSessionsAreCountedExactly() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let dsn = "http://\(shop.ingest)@127.0.0.1:\(server.port)/\(shop.id)"
        // 60 requests: 20 exited, 20 errored (a handled error), 20 crashed (an unhandled one); the Python SDK sends
        // request-mode aggregates without a distinct id, so they count sessions, not users (its send queue holds 100
        // envelopes: the 40 events and the aggregate fit)
        let run = try Command.run(
            "python3",
            [SentrySDKEndToEndTests.script, dsn, "requests", "web@2.0", "60", "exited", "errored", "crashed"])
        #expect(run.status == 0, "\(run.err)")
        let day = try await health(server, shop)
        #expect(day["sessions"] as? Int == 60)
        #expect(day["crashed_sessions"] as? Int == 20)
        #expect(day["errored_sessions"] as? Int == 20)
        #expect(day["users"] as? Int == 0)
        // Stored as counts: a row per aggregate (started minute) and status, far fewer than 60
        let rows = try Self.sessionRows(folder, project: shop.id)
        #expect(rows >= 3 && rows <= 9, "\(rows) rows")
    }
}
