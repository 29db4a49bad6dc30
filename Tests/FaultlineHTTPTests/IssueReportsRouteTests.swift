import FaultlineCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import Testing

/// Report ↔ issue in the read API: `issue_id` on a report, an issue's reports keyset-paged, `/reports?issue=`,
/// and one project's token never seeing another project's issue (404, like a missing one).
@Suite struct IssueReportsRouteTests {
    /// A crash whose stack depends on `site` only, so every report of one site groups into one issue.
    static func crash(_ n: Int, site: Int) -> String {
        let frames = (0..<3).map {
            #"{"address":"0x\#(String(0x7f00_0000_1000 + site * 0x1000 + $0 * 0x40, radix: 16))","module":"libapp.so"}"#
        }
        return """
            {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"2026-11-22T05:08:09Z","user_id":"u\(n % 3)",
             "app":{"version":"1.0","build":"7"},"error":{"type":"SIGSEGV","message":"Segmentation fault"},
             "threads":[{"crashed":true,"frames":[\(frames.joined(separator: ","))]}],
             "modules":[{"name":"libapp.so","build_id":"aba11aeff7e7e9e2e1bc84464f53a7e183a8930a","base_address":"0x7f0000000000","size":1048576}]}
            """
    }

    static func post(_ client: some TestClientProtocol, key: String, _ reports: [String]) async throws {
        try await client.execute(
            uri: "/api/v1/reports", method: .post,
            headers: [.authorization: "Bearer \(key)", .contentType: "application/json"],
            body: ByteBuffer(string: "[" + reports.joined(separator: ",") + "]")
        ) { response in
            #expect(response.status == .accepted, "\(String(buffer: response.body))")
        }
    }

    /// Runs the symbolication and grouping worker until it has nothing left.
    static func group(_ app: TestApp) async throws {
        let worker = try app.root.symbolicationWorker(logger: Logger(label: "test"))
        for _ in 0..<100 {
            if try await worker.step() == 0 { return }
        }
        Issue.record("the worker did not run out of work")
    }

    /// Every page of `uri` (a path with a query), following the answer's `next` link as given.
    static func allPages(_ client: some TestClientProtocol, _ uri: String, headers: HTTPFields) async throws
        -> [[String: Any]]
    {
        var rows: [[String: Any]] = []
        var next: String? = uri
        var pages = 0
        while let uri = next, pages < 100 {
            pages += 1
            let page = try await client.execute(uri: uri, method: .get, headers: headers) { response in
                #expect(response.status == .ok, "\(uri): \(String(buffer: response.body))")
                return response.json
            }
            rows += page["reports"] as? [[String: Any]] ?? []
            next = page["next"] as? String
            #expect((next == nil) == (page["next_cursor"] == nil))
        }
        return rows
    }

    @Test func anIssuesReportsArePagedNewestFirstAndStableUnderInserts() async throws {
        let app = try await TestApp()
        try await app.test { client in
            // Given 7 reports of one crash site and 2 of another, grouped.
            try await Self.post(
                client, key: app.credentials.ingestKey,
                (0..<7).map { Self.crash($0, site: 1) } + [Self.crash(50, site: 2), Self.crash(51, site: 2)])
            try await Self.group(app)

            // The report says which issue it is in.
            let first = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(0))", method: .get, headers: app.readHeaders
            ) { $0.json }
            let issue = try #require(first["issue_id"] as? Int)
            let otherIssue = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(50))", method: .get, headers: app.readHeaders
            ) {
                $0.json["issue_id"] as? Int
            }
            #expect(otherIssue != nil && otherIssue != issue)

            // Page 1 of 3 (limit 3): the newest three, with a cursor and a link that keeps the limit.
            let page1 = try await client.execute(
                uri: "/api/v1/issues/\(issue)/reports?limit=3", method: .get, headers: app.readHeaders
            ) { $0.json }
            let ids1 = (page1["reports"] as? [[String: Any]] ?? []).compactMap { $0["event_id"] as? String }
            #expect(ids1 == [6, 5, 4].map(Payloads.normalized))
            #expect((page1["reports"] as? [[String: Any]] ?? []).allSatisfy { $0["issue_id"] as? Int == issue })
            let cursor = try #require(page1["next_cursor"] as? String)
            #expect(page1["next"] as? String == "/api/v1/issues/\(issue)/reports?limit=3&cursor=\(cursor)")

            // When more reports of the issue arrive between pages…
            try await Self.post(client, key: app.credentials.ingestKey, (7..<10).map { Self.crash($0, site: 1) })
            try await Self.group(app)
            // …the next pages hold exactly the older ones: nothing repeated, nothing skipped.
            let rest = try await Self.allPages(client, try #require(page1["next"] as? String), headers: app.readHeaders)
            #expect(rest.compactMap { $0["event_id"] as? String } == [3, 2, 1, 0].map(Payloads.normalized))

            // A fresh walk sees all ten, newest first, and the same as the report list filtered by issue.
            let all = try await Self.allPages(
                client, "/api/v1/issues/\(issue)/reports?limit=4", headers: app.readHeaders)
            #expect(all.compactMap { $0["event_id"] as? String } == (0..<10).reversed().map(Payloads.normalized))
            let filtered = try await Self.allPages(
                client, "/api/v1/reports?issue=\(issue)&limit=4", headers: app.readHeaders)
            #expect(filtered.compactMap { $0["event_id"] as? String } == (0..<10).reversed().map(Payloads.normalized))
            // The default page is 50; the other issue's reports are not mixed in.
            let whole = try await client.execute(
                uri: "/api/v1/issues/\(issue)/reports", method: .get, headers: app.readHeaders
            ) { $0.json }
            #expect((whole["reports"] as? [Any])?.count == 10)
            #expect(whole["next"] == nil)
            let other = try await client.execute(
                uri: "/api/v1/reports?issue=\(otherIssue ?? 0)&kind=crash", method: .get, headers: app.readHeaders
            ) { $0.json }
            #expect(
                (other["reports"] as? [[String: Any]])?.compactMap { $0["event_id"] as? String }
                    == [51, 50].map(Payloads.normalized))

            for bad in ["limit=0", "limit=501", "cursor=abc", "cursor=-1"] {
                try await client.execute(
                    uri: "/api/v1/issues/\(issue)/reports?\(bad)", method: .get, headers: app.readHeaders
                ) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
            for bad in ["/api/v1/issues/abc/reports", "/api/v1/reports?issue=abc", "/api/v1/reports?issue=0"] {
                try await client.execute(uri: bad, method: .get, headers: app.readHeaders) { response in
                    #expect(response.status == .badRequest, "\(bad)")
                }
            }
        }
    }

    @Test func aReportNotGroupedYetSaysNull() async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await Self.post(client, key: app.credentials.ingestKey, [Self.crash(1, site: 1)])
            let raw = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(1))", method: .get, headers: app.readHeaders
            ) {
                try JSONSerialization.jsonObject(with: Data(buffer: $0.body)) as? [String: Any] ?? [:]
            }
            // Present and null, not absent: "not grouped yet" is an answer.
            #expect(raw.keys.contains("issue_id"))
            #expect(raw["issue_id"] is NSNull)
            let listed = try await client.execute(uri: "/api/v1/reports", method: .get, headers: app.readHeaders) {
                $0.json
            }
            #expect((listed["reports"] as? [[String: Any]])?.first?["issue_id"] is NSNull)
        }
    }

    @Test func anotherProjectsIssueIsNotFound() async throws {
        let app = try await TestApp()
        let other = try await app.root.projects.create(slug: ProjectSlug("other")!)
        try await app.test { client in
            try await Self.post(client, key: app.credentials.ingestKey, (0..<3).map { Self.crash($0, site: 1) })
            try await Self.post(client, key: other.ingestKey, (10..<12).map { Self.crash($0, site: 1) })
            try await Self.group(app)
            let mine = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(0))", method: .get, headers: app.readHeaders
            ) {
                try #require($0.json["issue_id"] as? Int)
            }
            let otherHeaders: HTTPFields = [.authorization: "Bearer \(other.uploadToken)"]
            let theirs = try await client.execute(
                uri: "/api/v1/reports/\(Payloads.eventID(10))", method: .get, headers: otherHeaders
            ) {
                try #require($0.json["issue_id"] as? Int)
            }
            #expect(mine != theirs)  // the same stack in two projects is two issues

            // The other project's token: my issue is 404 on both routes, with the same answer as an issue that does
            // not exist (nothing tells it apart), and its own issue lists only its own reports.
            let missing = 999_999
            for (uri, absent) in [
                ("/api/v1/issues/\(mine)/reports", "/api/v1/issues/\(missing)/reports"),
                ("/api/v1/reports?issue=\(mine)", "/api/v1/reports?issue=\(missing)"),
            ] {
                let foreign = try await client.execute(uri: uri, method: .get, headers: otherHeaders) { response in
                    #expect(response.status == .notFound, "\(uri)")
                    return String(buffer: response.body)
                }
                let none = try await client.execute(uri: absent, method: .get, headers: otherHeaders) { response in
                    #expect(response.status == .notFound)
                    return String(buffer: response.body)
                }
                #expect(
                    foreign.replacingOccurrences(of: String(mine), with: "N")
                        == none.replacingOccurrences(of: String(missing), with: "N"))
            }
            let own = try await Self.allPages(client, "/api/v1/issues/\(theirs)/reports", headers: otherHeaders)
            #expect(own.compactMap { $0["event_id"] as? String } == [11, 10].map(Payloads.normalized))
            #expect(own.allSatisfy { $0["project_id"] as? Int == Int(other.project.id.rawValue) })

            // The admin token reads any project's issue; naming another project than the issue's is 404.
            let admin = try await Self.allPages(client, "/api/v1/issues/\(mine)/reports", headers: app.adminHeaders)
            #expect(admin.compactMap { $0["event_id"] as? String } == [2, 1, 0].map(Payloads.normalized))
            try await client.execute(
                uri: "/api/v1/reports?project=other&issue=\(mine)", method: .get, headers: app.adminHeaders
            ) { response in
                #expect(response.status == .notFound)
            }
            let named = try await Self.allPages(
                client, "/api/v1/reports?project=app&issue=\(mine)", headers: app.adminHeaders)
            #expect(named.count == 3)
        }
    }

    @Test func theIssueListingUsesItsIndex() async throws {
        let app = try await TestApp()
        // Without the `+`, SQLite may walk the project's index and filter; with it, the issue index serves the
        // page in order (no temporary sort), whatever the other filters.
        for query in [
            ReportQuery(project: ProjectID(1), issue: IssueID(5), before: 100, limit: 51),
            ReportQuery(project: ProjectID(1), kind: .crash, release: "1.0", issue: IssueID(5), limit: 51),
            ReportQuery(project: nil, issue: IssueID(5), limit: 51),
        ] {
            let plan = try await app.sqliteReader.queryPlan(query).joined(separator: "\n")
            #expect(plan.contains("reports_by_issue_id"), "\(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
        }
    }
}
