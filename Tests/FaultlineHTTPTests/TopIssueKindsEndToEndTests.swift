import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #35: crashes, hangs and non-fatal errors are ranked apart on a real server's rendered site: a non-fatal that
/// affected more users does not outrank a crash in the overview's crash section nor on the release page, nor does an
/// ANR a real sentry-sdk sent as an unhandled exception; the ANR has a section of its own, and a list and an API
/// listing of its own (`kind=hang`).
@Suite(.serialized, .tags(.endToEnd, .sentryClients), .provisioned) struct TopIssueKindsEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    /// A non-fatal timeout of user `user` in release 2.4.0.
    static func timeout(_ n: Int, user: String) -> String {
        InsightsEndToEndTests.crash(
            n, site: "loadFeed", version: "2.4.0", user: user, message: "The request timed out."
        )
        .replacingOccurrences(of: "\"kind\":\"crash\"", with: "\"kind\":\"nonfatal\"")
        .replacingOccurrences(of: "\"crashed\":true", with: "\"crashed\":false")
        .replacingOccurrences(of: "\"type\":\"SIGSEGV\"", with: "\"type\":\"NSURLErrorDomain\"")
    }

    /// The part of `html` from the section `id` opens to the end of that section.
    static func section(_ id: String, in html: String) throws -> String {
        let start = try #require(html.range(of: "<section id=\"\(id)\""), "no section \(id)").lowerBound
        let end = try #require(html[start...].range(of: "</section>")).upperBound
        return String(html[start..<end])
    }

    @Test func neitherANonFatalNorAHangWithMoreUsersOutranksACrash() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }

        // Given a non-fatal timeout of 3 users and a SIGSEGV of 2, both of release 2.4.0…
        for n in 1...3 {
            let answer = try await http.postReports(server.baseURL, key: project.ingest, Self.timeout(n, user: "t\(n)"))
            #expect(answer.status == 202)
        }
        for n in 4...5 {
            let crash = InsightsEndToEndTests.crash(n, site: "parseCart", version: "2.4.0", user: "c\(n)")
            #expect(try await http.postReports(server.baseURL, key: project.ingest, crash).status == 202)
        }
        // …and, from the real sentry-sdk, an ANR of 4 users in 2.4.0, sent as Sentry Android sends one: an unhandled
        // `ApplicationNotResponding` (mechanism `ANR`), so stored as a crash, marked a hang when filed.
        let dsn = "http://\(project.ingest)@127.0.0.1:\(server.port)/\(project.id)"
        let sdk = try Command.run("python3", [SentrySDKEndToEndTests.script, dsn, "anr", "2.4.0", "4"])
        #expect(sdk.status == 0, "\(sdk.err)")
        let insights = InsightsEndToEndTests()
        #expect(try await eventually { try await insights.issues(server, token: project.upload).count == 3 })

        // The read API ranks one kind when asked (`?kind=`), says which, and refuses a kind it does not know.
        for (kind, expected, others) in [
            ("crash", "SIGSEGV", ["NSURLErrorDomain", "ApplicationNotResponding"]),
            ("hang", "ApplicationNotResponding", ["SIGSEGV", "NSURLErrorDomain"]),
            ("nonfatal", "NSURLErrorDomain", ["SIGSEGV", "ApplicationNotResponding"]),
        ] {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/top-issues?window=24h&kind=\(kind)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            #expect(answer.status == 200)
            #expect(answer.json["kind"] as? String == kind)
            let rows = answer.json["issues"] as? [[String: Any]] ?? []
            let titles = rows.compactMap { ($0["issue"] as? [String: Any])?["title"] as? String }
            let categories = rows.compactMap { ($0["issue"] as? [String: Any])?["category"] as? String }
            #expect(titles.count == 1 && titles.allSatisfy { $0.hasPrefix(expected) }, "\(kind): \(titles)")
            #expect(!titles.contains { title in others.contains { title.hasPrefix($0) } } && categories == [kind])
        }
        let every = try await http.send(
            .GET, server.baseURL + "/api/v1/top-issues?window=24h",
            headers: [("Authorization", "Bearer \(project.upload)")])
        let everyRows = every.json["issues"] as? [[String: Any]] ?? []
        #expect(everyRows.count == 3 && every.json["kind"] == nil)
        // Ranked together, the ANR (4 users) would have topped the SIGSEGV (2): it was sent as a crash.
        let anr = try #require(everyRows.first?["issue"] as? [String: Any])
        #expect((anr["title"] as? String)?.hasPrefix("ApplicationNotResponding") == true, "\(anr)")
        #expect(anr["kind"] as? String == "crash" && anr["category"] as? String == "hang")
        let anrID = try #require(anr["id"] as? Int)
        for path in ["/api/v1/top-issues?kind=oom", "/api/v1/issues?kind=non-fatal"] {
            let bad = try await http.send(
                .GET, server.baseURL + path, headers: [("Authorization", "Bearer \(project.upload)")])
            #expect(bad.status == 400 && bad.json["field"] as? String == "kind", "\(path)")
        }
        // The API's issue listing lists the hang alone with `kind=hang`, and no hang among the crashes.
        func listed(_ kind: String) async throws -> [Int] {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/issues?kind=\(kind)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            return (answer.json["issues"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? Int }
        }
        #expect(try await listed("hang") == [anrID])
        let crashesListed = try await listed("crash")
        #expect(crashesListed.count == 1 && !crashesListed.contains(anrID))

        // The live list `/shop/list?kind=hang` lists only the hang; a kind it does not know is a 400 naming `kind`.
        let login = try await browser.send(
            .POST, server.baseURL + "/login", headers: DashboardActionsEndToEndTests.form,
            body: Array("token=\(admin)&next=%2F".utf8))
        let cookie = [
            ("Cookie", try #require(login.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init)))
        ]
        let hangList = try await browser.send(.GET, server.baseURL + "/shop/list?kind=hang", headers: cookie)
        let hangHTML = String(decoding: hangList.body, as: UTF8.self)
        #expect(hangList.status == 200)
        #expect(IssueListsEndToEndTests.issueIDs(hangHTML) == [anrID], "\(hangHTML)")
        #expect(hangHTML.contains("<caption>Hangs and ANRs, most recently seen first</caption>"))
        let crashList = try await browser.send(.GET, server.baseURL + "/shop/list?kind=crash", headers: cookie)
        #expect(!IssueListsEndToEndTests.issueIDs(String(decoding: crashList.body, as: UTF8.self)).contains(anrID))
        let badList = try await browser.send(.GET, server.baseURL + "/shop/list?kind=anr", headers: cookie)
        #expect(badList.status == 400 && badList.json["field"] as? String == "kind")

        // When the site is rendered…
        let site = try TempFolder("faultline-site")
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site.path])
        #expect(rendered.status == 0, "\(rendered.err)")

        // Then the overview's crash rankings hold the SIGSEGV first, no timeout and no ANR; the ANR is ranked with
        // the hangs, the timeout with the non-fatal errors, in that order after the crashes.
        let overview = try String(contentsOfFile: site.file("shop/index.html"), encoding: .utf8)
        for window in ["24h", "7d", "release"] {
            let crashes = try Self.section("crashes-\(window)", in: overview)
            let first = try #require(crashes.range(of: "<td class=\"rank\">1</td>")).upperBound
            #expect(crashes[first...].prefix(1500).contains("SIGSEGV"), "\(window): \(crashes)")
            #expect(!crashes.contains("NSURLErrorDomain") && !crashes.contains("ApplicationNotResponding"), "\(window)")
            let hangs = try Self.section("hangs-\(window)", in: overview)
            #expect(hangs.contains("ApplicationNotResponding") && !hangs.contains("SIGSEGV"), "\(window): \(hangs)")
            #expect(try Self.section("non-fatal-\(window)", in: overview).contains("NSURLErrorDomain"))
        }
        let headings = [">Crashes</h3>", ">Hangs and ANRs</h3>", ">Non-fatal errors</h3>"].map {
            overview.range(of: $0)?.lowerBound
        }
        #expect(headings.allSatisfy { $0 != nil } && headings.compactMap { $0 } == headings.compactMap { $0 }.sorted())

        // …and the release page ranks the SIGSEGV #1 among its crashes, the timeout among its non-fatal errors.
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.file("shop/releases"))
        #expect(pages.count == 1, "\(pages)")
        let release = try String(
            contentsOfFile: site.file("shop/releases/" + (pages.first ?? "")), encoding: .utf8)
        let crashes = try Self.section("crashes", in: release)
        let first = try #require(crashes.range(of: "<td class=\"rank\">1</td>")).upperBound
        #expect(crashes[first...].prefix(1500).contains("SIGSEGV"), "\(crashes)")
        #expect(!crashes.contains("NSURLErrorDomain") && !crashes.contains("ApplicationNotResponding"))
        #expect(try Self.section("hangs", in: release).contains("ApplicationNotResponding"))
        // The ANR's own page says what it is.
        let anrPage = try String(contentsOfFile: site.file("shop/issues/\(anrID).html"), encoding: .utf8)
        #expect(anrPage.contains("Issue \(anrID) · hang or ANR · "))
        #expect(try Self.section("non-fatal", in: release).contains("NSURLErrorDomain"))
    }
}
