import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #35: crashes and non-fatal errors are ranked apart on a real server's rendered site: a non-fatal that
/// affected more users does not outrank a crash in the overview's crash section nor on the release page.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct TopIssueKindsEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

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

    @Test func aNonFatalWithMoreUsersDoesNotOutrankACrash() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
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
        let insights = InsightsEndToEndTests()
        #expect(try await eventually { try await insights.issues(server, token: project.upload).count == 2 })

        // The read API ranks one kind when asked (`?kind=`), says which, and refuses a kind it does not know.
        for (kind, expected, other) in [
            ("crash", "SIGSEGV", "NSURLErrorDomain"), ("nonfatal", "NSURLErrorDomain", "SIGSEGV"),
        ] {
            let answer = try await http.send(
                .GET, server.baseURL + "/api/v1/top-issues?window=24h&kind=\(kind)",
                headers: [("Authorization", "Bearer \(project.upload)")])
            #expect(answer.status == 200)
            #expect(answer.json["kind"] as? String == kind)
            let rows = answer.json["issues"] as? [[String: Any]] ?? []
            let titles = rows.compactMap { ($0["issue"] as? [String: Any])?["title"] as? String }
            let kinds = rows.compactMap { ($0["issue"] as? [String: Any])?["kind"] as? String }
            #expect(titles.count == 1 && titles.allSatisfy { $0.hasPrefix(expected) }, "\(kind): \(titles)")
            #expect(!titles.contains { $0.hasPrefix(other) } && kinds == [kind])
        }
        let every = try await http.send(
            .GET, server.baseURL + "/api/v1/top-issues?window=24h",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect((every.json["issues"] as? [[String: Any]])?.count == 2 && every.json["kind"] == nil)
        let bad = try await http.send(
            .GET, server.baseURL + "/api/v1/top-issues?kind=hang",
            headers: [("Authorization", "Bearer \(project.upload)")])
        #expect(bad.status == 400 && String(decoding: bad.body, as: UTF8.self).contains("kind"))

        // When the site is rendered…
        let site = try TempFolder("faultline-site")
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site.path])
        #expect(rendered.status == 0, "\(rendered.err)")

        // Then the overview's crash rankings hold the SIGSEGV first and no timeout, and the timeout is ranked with
        // the non-fatal errors, after the crashes.
        let overview = try String(contentsOfFile: site.file("shop/index.html"), encoding: .utf8)
        for window in ["24h", "7d", "release"] {
            let crashes = try Self.section("crashes-\(window)", in: overview)
            #expect(crashes.contains("SIGSEGV"), "\(window): \(crashes)")
            #expect(!crashes.contains("NSURLErrorDomain"), "\(window)")
            #expect(try Self.section("non-fatal-\(window)", in: overview).contains("NSURLErrorDomain"))
        }
        let crashHeading = try #require(overview.range(of: ">Crashes</h3>"))
        let nonFatalHeading = try #require(overview.range(of: ">Non-fatal errors</h3>"))
        #expect(crashHeading.lowerBound < nonFatalHeading.lowerBound)

        // …and the release page ranks the SIGSEGV #1 among its crashes, the timeout among its non-fatal errors.
        let pages = try FileManager.default.contentsOfDirectory(atPath: site.file("shop/releases"))
        #expect(pages.count == 1, "\(pages)")
        let release = try String(
            contentsOfFile: site.file("shop/releases/" + (pages.first ?? "")), encoding: .utf8)
        let crashes = try Self.section("crashes", in: release)
        let first = try #require(crashes.range(of: "<td class=\"rank\">1</td>")).upperBound
        #expect(crashes[first...].prefix(1500).contains("SIGSEGV"), "\(crashes)")
        #expect(!crashes.contains("NSURLErrorDomain"))
        #expect(try Self.section("non-fatal", in: release).contains("NSURLErrorDomain"))
    }
}
