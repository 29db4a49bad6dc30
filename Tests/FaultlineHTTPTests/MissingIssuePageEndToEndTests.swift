import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Testing

/// Issue #35 (6), against the real `faultline` binary on 127.0.0.1: an issue link opened before its reports were
/// grouped (or a number no issue has) answers 404 with an HTML dashboard page that says the issue does not exist
/// (yet), not the API's JSON; the page is made for the request and writes no file.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct MissingIssuePageEndToEndTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    @Test func anUnknownIssueAnswersAnHTMLPageThatSaysItDoesNotExistYet() async throws {
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site/shop/issues.html") })
        let basic = [
            ("Authorization", "Basic " + Data("me:\(admin)".utf8).base64EncodedString()), ("Accept", "text/html"),
        ]

        let answer = try await browser.send(.GET, server.baseURL + "/shop/issues/4242.html", headers: basic)
        let html = String(decoding: answer.body, as: UTF8.self)
        #expect(answer.status == 404)
        #expect(answer.headers["Content-Type"].first?.hasPrefix("text/html") == true)
        #expect(html.contains("<h1>Issue 4242</h1>"), "\(html.prefix(1500))")
        #expect(html.contains("This issue does not exist (yet)."))
        #expect(html.contains("href=\"../issues.html\""), "links to the project's issues")
        #expect(!html.contains("\"detail\""))
        #expect(!FileManager.default.fileExists(atPath: folder + "/site/shop/issues/4242.html"), "no file written")

        // Without signing in, the dashboard guard answers first: nothing about the project's issues leaks.
        let anonymous = try await browser.send(.GET, server.baseURL + "/shop/issues/4242.html", headers: [])
        #expect(anonymous.status == 401 || anonymous.status == 303)
        #expect(!String(decoding: anonymous.body, as: UTF8.self).contains("does not exist"))
        // An unknown project still answers the plain 404.
        let unknown = try await browser.send(.GET, server.baseURL + "/nope/issues/1.html", headers: basic)
        #expect(unknown.status == 404)
        #expect(!String(decoding: unknown.body, as: UTF8.self).contains("does not exist (yet)"))
    }
}
