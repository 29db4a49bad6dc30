import AsyncHTTPClient
import Foundation
import Testing

/// Issue #39 findings 9 and 12, against the real `faultline` binary on 127.0.0.1: a token replaced by another
/// process (`faultline admin-token`) stops at once (no cached answer, no session made with it), and wrong tokens on
/// the API and `/buildid` count toward the same per-address limit as failed logins.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct AdminTokenEndToEndTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)
    static let form = SecurityEndToEndTests.form

    func login(_ server: ServerProcess, _ token: String) async throws -> HTTP.Answer {
        try await browser.send(.POST, server.baseURL + "/login", headers: Self.form, body: Array("token=\(token)".utf8))
    }

    @Test func aTokenReplacedByAnotherProcessStopsAtOnce() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let old = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        // Given the old token in use: a session, and API requests (an answer the server must not cache)
        let first = try await login(server, old)
        #expect(first.status == 303)
        let cookie = try #require(first.headers["Set-Cookie"].first?.split(separator: ";").first.map(String.init))
        let api = [("Authorization", "Bearer \(old)")]
        #expect(
            try await browser.send(.GET, server.baseURL + "/api/v1/reports?project=shop", headers: api).status == 200)

        // When another process replaces it
        let new = try await SecurityEndToEndTests.adminToken(folder)
        #expect(new != old)

        // Then, at once: the old token logs nobody in and opens no API route, and its session is gone
        let again = try await login(server, old)
        #expect(again.status == 401)
        #expect(again.headers["Set-Cookie"].isEmpty)
        #expect(
            try await browser.send(.GET, server.baseURL + "/api/v1/reports?project=shop", headers: api).status == 401)
        #expect(
            try await browser.send(.GET, server.baseURL + "/shop/index.html", headers: [("Cookie", cookie)]).status
                == 401)
        // And the new one works
        #expect(try await login(server, new).status == 303)
        #expect(
            try await browser.send(
                .GET, server.baseURL + "/api/v1/reports?project=shop", headers: [("Authorization", "Bearer \(new)")]
            )
            .status == 200)
    }

    @Test func wrongTokensOnTheAPIAndBuildIDCountTowardTheLoginLimit() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let buildID = String(repeating: "ab", count: 20)
        // Ten guesses spread over the API and the debuginfod face: 401 each
        for attempt in 1...10 {
            let path = attempt.isMultiple(of: 2) ? "/api/v1/reports" : "/buildid/\(buildID)/debuginfo"
            let wrong = try await browser.send(
                .GET, server.baseURL + path,
                headers: [("Authorization", "Bearer fla_\(String(repeating: "0", count: 39))\(attempt % 10)")])
            #expect(wrong.status == 401, "\(path): \(wrong.status)")
        }
        // Then that address is refused everywhere a token is taken, even with the right one, and told when to retry
        for (path, token) in [("/api/v1/reports", shop.upload), ("/buildid/\(buildID)/debuginfo", admin)] {
            let limited = try await browser.send(
                .GET, server.baseURL + path, headers: [("Authorization", "Bearer \(token)")])
            #expect(limited.status == 429, "\(path): \(limited.status)")
            #expect(limited.json["error"] as? String == "too_many_attempts")
            #expect(limited.headers["Retry-After"].first.flatMap(Int.init).map { (1...60).contains($0) } == true)
        }
        #expect(try await login(server, admin).status == 429)
        // Ingest keys are public and not counted: an app with the right key still sends reports
        let report = try await HTTP(client: HTTPClient.shared).postReports(
            server.baseURL, key: shop.ingest, Payloads.batch([1]))
        #expect(report.status == 202)
    }

    @Test func anAddressLockedOutAtLoginIsLockedOutOfTheAPI() async throws {
        let folder = ServerProcess.newFolder()
        let shop = try await ServerProcess.createProject("shop", in: folder)
        _ = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        for attempt in 1...10 { #expect(try await login(server, "guess\(attempt)").status == 401) }
        let api = try await browser.send(
            .GET, server.baseURL + "/api/v1/reports", headers: [("Authorization", "Bearer \(shop.upload)")])
        #expect(api.status == 429)
    }
}
