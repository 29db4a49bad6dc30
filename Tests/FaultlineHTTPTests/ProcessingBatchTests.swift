import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import TestSupport
import Testing

/// The worker's batches on the real thing (router, SQLite file, Formats, module cache): 20-report payloads of two
/// projects processed in large batches end exactly where the per-report path (batches of one) ends — the same
/// issues, rollups, alerts and search entries, each project's reports under its own issues, every report once.
@Suite struct ProcessingBatchTests {
    /// Report `n` of a project: one of five crash sites (client-symbolicated frames, so the sites are stable), seven
    /// users, three releases over three days, two devices, and a raw frame in a module without debug files.
    static func report(_ n: Int, site: Int) -> String {
        """
        {"event_id":"\(String(format: "%032x", 0xbeef_0000 + n))","kind":"\(site == 4 ? "nonfatal" : "crash")",\
        "timestamp":\(1_795_000_000 + (n % 3) * 86_400 + n),"user_id":"user-\(n % 7)","environment":"production",\
        "app":{"id":"com.example","version":"1.\(n % 3)","build":"\(n % 3)"},\
        "device":{"model":"Pixel \(7 + n % 2)","os":"Android","os_version":"15"},\
        "error":{"type":"SIGSEGV","code":11,"message":"Segmentation fault"},\
        "threads":[{"name":"main","crashed":true,"frames":[\
        {"function":"Site\(site).crash()","file":"Sources/App/Site\(site).swift","line":\(10 + site)},\
        {"address":"0x\(String(0x7f00_0000_1000 + n * 16, radix: 16))","module":"libapp.so"}]}],\
        "modules":[{"name":"libapp.so","build_id":"aba11aeff7e7e9e2e1bc84464f53a7e183a8930a","base_address":"0x7f0000000000","size":1048576}],\
        "custom_keys":{"screen":"s\(n % 4)"}}
        """
    }

    /// The bodies both folders get: per project, 20-report payloads and a few reports alone.
    static func bodies(project: Int) -> [String] {
        let offset = project * 1_000
        var bodies: [String] = []
        for payload in 0..<4 {
            let reports = (0..<20).map { i in report(offset + payload * 20 + i, site: (payload * 20 + i + project) % 5)
            }
            bodies.append("{\"reports\":[" + reports.joined(separator: ",") + "]}")
        }
        for i in 80..<86 { bodies.append(report(offset + i, site: (i + project) % 5)) }
        return bodies
    }

    /// A folder with two projects holding the same bodies; returns it and the second project's key.
    func filledApp() async throws -> TestApp {
        let app = try await TestApp(clock: FrozenClock(date: Date(timeIntervalSince1970: 1_795_300_000)))
        let other = try await app.root.projects.create(slug: ProjectSlug("other")!, rateLimitPerSecond: nil)
        try await app.test { client in
            for (key, project) in [(app.credentials.ingestKey, 1), (other.ingestKey, 2)] {
                for body in Self.bodies(project: project) {
                    try await client.execute(
                        uri: "/api/v1/reports", method: .post,
                        headers: [
                            .authorization: "Bearer \(key)", .contentType: "application/json", .contentEncoding: "gzip",
                        ],
                        body: Payloads.gzip(body)
                    ) { #expect($0.status == .accepted) }
                }
            }
        }
        return app
    }

    /// Rows of `sql` over the folder's database, read with Python's sqlite3 (a reader independent of ours).
    static func rows(_ app: TestApp, _ sql: String) throws -> [String] {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
            for row in db.execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in row))
            """
        return try Command.check("python3", ["-c", script, app.folder + "/faultline.sqlite", sql])
            .split(separator: "\n").map(String.init)
    }

    /// Everything grouping and counting wrote, keyed by what does not depend on row ids (projects by slug, issues by
    /// fingerprint, reports by event id), sorted.
    static func processed(_ app: TestApp) throws -> [String: [String]] {
        let issue =
            "(SELECT p.slug || '/' || i.fingerprint FROM issues i JOIN projects p ON p.id = i.project_id WHERE i.id = x.issue_id)"
        return [
            "issues": try rows(
                app,
                """
                SELECT p.slug, i.fingerprint, i.kind, i.title, i.culprit, i.events, i.users, i.repeat_users, i.first_seen, i.last_seen,
                    i.first_release, i.last_release, i.status, i.regressed, i.early_events, i.timed_events
                FROM issues i JOIN projects p ON p.id = i.project_id ORDER BY 1, 2
                """),
            "issue_releases": try rows(
                app,
                "SELECT \(issue), release, events, users, first_seen, last_seen FROM issue_releases x ORDER BY 1, 2"),
            "issue_days": try rows(app, "SELECT \(issue), day, events, users FROM issue_days x ORDER BY 1, 2"),
            "issue_users": try unkeyed(app, "SELECT \(issue), user_key, events FROM issue_users x"),
            "issue_release_users": try unkeyed(
                app, "SELECT \(issue), release, user_key, events FROM issue_release_users x"),
            "issue_day_users": try unkeyed(app, "SELECT \(issue), day, user_key, events FROM issue_day_users x"),
            "issue_tags": try rows(app, "SELECT \(issue), key, value, events FROM issue_tags x ORDER BY 1, 2, 3"),
            "alerts": try rows(
                app,
                """
                SELECT p.slug, x.kind, x.release, x.title, x.reason, \(issue) FROM alerts x JOIN projects p ON p.id = x.project_id
                ORDER BY 1, 2, 6, 3
                """),
            "reports": try rows(
                app,
                """
                SELECT p.slug, x.event_id, x.symbolication, x.symbolication_attempts, x.grouping_version, x.early, \(issue)
                FROM reports x JOIN projects p ON p.id = x.project_id ORDER BY 1, 2
                """),
            "report_modules": try rows(
                app,
                """
                SELECT r.event_id, m.build_id, m.module, m.release, m.rank FROM report_modules m JOIN reports r ON r.id = m.report_id
                ORDER BY 1, 2
                """),
            "search": try rows(
                app,
                """
                SELECT r.event_id, s.project, s.error, s.functions, s.keys FROM search_documents s JOIN reports r ON r.id = s.report_id
                ORDER BY 1
                """),
        ]
    }

    /// `rows(sql)` with each per-user rollup key put back to the report user id it hashes (`RollupUser.key` under the
    /// project's identity key), sorted: two folders' projects have different keys, so they agree on ids, not keys.
    static func unkeyed(_ app: TestApp, _ sql: String) throws -> [String] {
        var ids: [String: String] = [:]
        for row in try rows(
            app,
            """
            SELECT DISTINCT hex(p.identity_key), r.user_key FROM reports r JOIN projects p ON p.id = r.project_id
            WHERE r.user_key IS NOT NULL
            """)
        {
            let parts = row.split(separator: "|", maxSplits: 1).map(String.init)
            let hex = Array(parts[0].utf8)
            let key = stride(from: 0, to: hex.count - 1, by: 2).compactMap {
                UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)
            }
            ids[RollupUser.key(of: parts[1], hasher: IdentityHashers.hmacSHA256.hasher(key: key))] = parts[1]
        }
        return try rows(app, sql).map { row in
            row.split(separator: "|", omittingEmptySubsequences: false).map { ids[String($0)] ?? String($0) }.joined(
                separator: "|")
        }.sorted()
    }

    /// Runs `step` until the queue is empty; returns the reports it processed.
    func drain(_ step: () async throws -> Int) async throws -> Int {
        var total = 0
        for _ in 0..<1_000 {
            let done = try await step()
            if done == 0 { return total }
            total += done
        }
        Issue.record("the queue did not empty")
        return total
    }

    @Test func largeBatchesEndWhereOneReportAtATimeEnds() async throws {
        // Given: the same 172 reports (two projects, 20-report payloads and single ones) in two folders.
        let batched = try await filledApp()
        let single = try await filledApp()
        let reports = 2 * (4 * 20 + 6)

        // When: one folder is processed in large batches, the other one report per batch.
        let big = try batched.root.symbolicationWorker(
            logger: Logger(label: "test"), batchSize: 64, backlogBatchSize: 128)
        let one = try single.root.symbolicationWorker(logger: Logger(label: "test"), batchSize: 1, backlogBatchSize: 1)
        let processedBig = try await drain { try await big.step() }
        let processedOne = try await drain { try await one.step() }

        // Then: every report was processed exactly once in each…
        #expect(processedBig == reports)
        #expect(processedOne == reports)
        let a = try Self.processed(batched)
        let b = try Self.processed(single)
        #expect(a["reports"]?.count == reports)
        #expect(a["reports"]?.allSatisfy { !$0.contains("|pending|") && !$0.hasSuffix("|") } == true)
        // …and the two folders agree on every issue, rollup, alert, module rank and search entry.
        for table in a.keys.sorted() {
            #expect(a[table] == b[table], "\(table) differs between batched and one-at-a-time processing")
            #expect(a[table]?.isEmpty == false, "\(table) is empty")
        }
        // Each project's reports are under its own issues only, and its issues count exactly its reports.
        #expect(
            try Self.rows(
                batched,
                """
                SELECT count(*) FROM reports r JOIN issues i ON i.id = r.issue_id WHERE i.project_id != r.project_id
                """) == ["0"])
        #expect(
            try Self.rows(
                batched,
                """
                SELECT p.slug, sum(i.events) FROM issues i JOIN projects p ON p.id = i.project_id GROUP BY 1 ORDER BY 1
                """) == ["app|86", "other|86"])
        // The counters equal a recount from the reports.
        #expect(
            try Self.rows(
                batched,
                """
                SELECT count(*) FROM issues i
                WHERE i.events != (SELECT count(*) FROM reports r WHERE r.issue_id = i.id)
                   OR i.users != (SELECT count(DISTINCT user_key) FROM reports r WHERE r.issue_id = i.id)
                """) == ["0"])
    }
}
