import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #12's search, against the real `faultline` binary on 127.0.0.1: reports are posted, processed by the
/// background worker (which fills the index in its transaction), and `GET /{slug}/search` finds exactly the expected
/// report and issue by user id, custom key value, event id, function name and error message — never another
/// project's. A report found opens at `GET /{slug}/events/{id}`.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct SearchEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    /// A client-symbolicated crash with a user, a custom key, a function and a message of its own.
    static func crash(_ n: Int, user: String, plan: String, function: String, message: String) -> String {
        """
        {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"\(InsightsEndToEndTests.now)",
         "user_id":"\(user)","app":{"version":"3.1","build":"9"},
         "error":{"type":"SIGABRT","message":"\(message)"},
         "threads":[{"name":"main","crashed":true,"frames":[
           {"function":"abort"},{"function":"\(function)","file":"src/app.swift","line":12},{"function":"main","file":"src/main.swift","line":3}]}],
         "custom_keys":{"plan":"\(plan)"}}
        """
    }

    struct Page {
        var status: Int
        var html: String
        var headers: [String: String]
        /// The event ids of the reports listed (links `events/<id>`).
        var events: [String] {
            html.components(separatedBy: "href=\"events/").dropFirst().map { String($0.prefix(32)) }
        }
        /// The issue numbers listed as matching issues (links `issues/<n>.html` in the issues table).
        var issues: [Int] {
            guard let start = html.range(of: "search-issues-heading"),
                let end = html.range(of: "search-reports-heading")
            else { return [] }
            return html[start.upperBound..<end.lowerBound].components(separatedBy: "href=\"issues/").dropFirst()
                .compactMap { Int($0.prefix { $0.isNumber }) }
        }
    }

    func get(_ server: ServerProcess, _ path: String, admin: String) async throws -> Page {
        let answer = try await http.send(.GET, server.baseURL + path, headers: [("Authorization", "Bearer \(admin)")])
        return Page(
            status: answer.status, html: String(decoding: answer.body, as: UTF8.self),
            headers: ["cache-control": answer.headers["Cache-Control"].first ?? ""])
    }

    func search(_ server: ServerProcess, _ slug: String, _ text: String, admin: String) async throws -> Page {
        let q = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return try await get(server, "/\(slug)/search?q=\(q)", admin: admin)
    }

    func issueOf(_ server: ServerProcess, _ n: Int, token: String) async throws -> Int? {
        let answer = try await http.send(
            .GET, server.baseURL + "/api/v1/reports/\(Payloads.eventID(n))",
            headers: [("Authorization", "Bearer \(token)")])
        return answer.json["issue_id"] as? Int
    }

    @Test func searchFindsExactlyTheExpectedReportByEachField() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let other = try await ServerProcess.createProject("other", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        // Given two reports in shop, and in another project a report sharing the user id and key value of the first.
        let shopReports = [
            Self.crash(
                1, user: "alice-4711", plan: "platinum", function: "Checkout.applyCoupon(code:)",
                message: "coupon table exhausted"),
            Self.crash(
                2, user: "bob-0815", plan: "basic", function: "Catalog.render()", message: "image cache corrupt"),
        ]
        #expect(
            try await http.postReports(server.baseURL, key: shop.ingest, "[" + shopReports.joined(separator: ",") + "]")
                .status == 202)
        let foreign = Self.crash(
            3, user: "alice-4711", plan: "platinum", function: "Checkout.applyCoupon(code:)",
            message: "coupon table exhausted")
        #expect(try await http.postReports(server.baseURL, key: other.ingest, foreign).status == 202)

        // When the worker has processed them…
        var issueOne = 0, issueTwo = 0
        #expect(
            try await eventually {
                issueOne = try await issueOf(server, 1, token: shop.upload) ?? 0
                issueTwo = try await issueOf(server, 2, token: shop.upload) ?? 0
                return issueOne > 0 && issueTwo > 0
            })
        #expect(try await eventually { try await issueOf(server, 3, token: other.upload) != nil })
        let one = Payloads.normalized(1)
        #expect(issueOne != issueTwo)

        // …then each field finds exactly report 1 and its issue, in shop only.
        for text in [
            "alice-4711", "platinum", Payloads.eventID(1), one, "applyCoupon", "Checkout.applyCoupon(code:)",
            "coupon table exhausted", "Checkout.applyCou",
        ] {
            let page = try await search(server, "shop", text, admin: admin)
            #expect(page.status == 200, "\(text)")
            #expect(page.events == [one], "\(text): \(page.events)")
            #expect(page.issues == [issueOne], "\(text): \(page.issues)")
        }
        #expect(try await search(server, "shop", "image cache", admin: admin).events == [Payloads.normalized(2)])
        // The other project's search sees its own report, never shop's, and shop never sees it.
        #expect(try await search(server, "other", "alice-4711", admin: admin).events == [Payloads.normalized(3)])
        #expect(try await search(server, "shop", Payloads.normalized(3), admin: admin).events.isEmpty)
        let both = try await search(server, "shop", "SIGABRT", admin: admin)
        #expect(both.events == [Payloads.normalized(2), one])
        #expect(both.html.contains("2 reports and 2 issues match"))
        #expect(both.headers["cache-control"] == "no-store")

        // A found report opens in its own project only.
        let event = try await get(server, "/shop/events/\(one)", admin: admin)
        #expect(event.status == 200)
        #expect(event.html.contains("Checkout.applyCoupon(code:)") && event.html.contains("platinum"))
        #expect(event.html.contains("href=\"../issues/\(issueOne).html\""))
        #expect(try await get(server, "/other/events/\(one)", admin: admin).status == 404)
        #expect(try await get(server, "/shop/events/\(Payloads.normalized(3))", admin: admin).status == 404)
        #expect(try await get(server, "/shop/events/not-an-id", admin: admin).status == 404)

        // Hostile or empty input: text, never syntax; too long or a bad page is 400 with a page saying why.
        let empty = try await get(server, "/shop/search", admin: admin)
        #expect(empty.status == 200 && empty.html.contains("name=\"q\"") && empty.events.isEmpty)
        #expect(try await search(server, "shop", "\"alice-4711\" OR *", admin: admin).events.isEmpty)
        let long = try await search(server, "shop", String(repeating: "a", count: 300), admin: admin)
        #expect(long.status == 400 && long.html.contains("at most 256"))
        #expect(try await get(server, "/shop/search?q=alice&page=0", admin: admin).status == 400)
        #expect(try await get(server, "/shop/search?q=alice&page=x", admin: admin).status == 400)
        #expect(try await get(server, "/nope/search?q=alice", admin: admin).status == 404)
        // Without credentials the dashboard guard answers, as for every dashboard page.
        #expect(try await http.send(.GET, server.baseURL + "/shop/search?q=alice").status == 401)
        // The rendered pages carry the search box.
        #expect(
            try await eventually {
                let page = (try? String(contentsOfFile: folder + "/site/shop/issues.html", encoding: .utf8)) ?? ""
                return page.contains("action=\"search\"")
            })
    }

    /// A function name only the symbolicator knows (the report has addresses only): found once the debug file
    /// arrives and the report is processed again — and the entry is replaced, not duplicated.
    @Test func lateSymbolsMakeAReportFindableByItsFunction() async throws {
        let scratch = try TempFolder("search-swift-crash")
        let (binary, file) = try SwiftCrashFixture.crash(in: scratch)
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("trap", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let read = [("Authorization", "Bearer \(project.upload)")]
        let posted = try await http.send(
            .POST, server.baseURL + "/api/v1/crashes/swift?app_version=1.0",
            headers: [("Authorization", "Bearer \(project.ingest)")],
            body: Array(file))
        let id = try #require((posted.json["accepted"] as? [String])?.first)

        // Processed without symbols: found by its release and message, not by the function.
        #expect(try await eventually { try await search(server, "trap", "1.0", admin: admin).events == [id] })
        #expect(try await search(server, "trap", "trap.pick", admin: admin).events.isEmpty)

        let uploaded = try await http.send(
            .PUT, server.baseURL + "/api/v1/debug-files/\(buildID)", headers: read,
            body: Array(try Data(contentsOf: URL(fileURLWithPath: binary))))
        #expect(uploaded.status == 201)
        #expect(try await eventually { try await search(server, "trap", "trap.pick", admin: admin).events == [id] })
        #expect(try await search(server, "trap", "Index out of range", admin: admin).events == [id])
        #expect(try await search(server, "trap", "1.0", admin: admin).events == [id])
    }
}
