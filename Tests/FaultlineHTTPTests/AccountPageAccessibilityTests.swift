import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// The account page (`/account`) as a signed-in person sees it, with a token listed, her project's alert mail form
/// and two-step sign-in waiting for its first code, in real headless Chromium (`tools/a11y/check_pages.py`): no
/// axe-core violation at desktop or phone width, and nothing wider than the phone.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct AccountPageAccessibilityTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    @Test func theAccountPageIsAccessibleAndFitsAPhone() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let link = try await PeopleEndToEndTests.invite(folder, "mia@example.org", role: "member", project: "shop")
        _ = try await PersonalTokensEndToEndTests.create(folder, "mia@example.org", ["read", "upload:symbols"])
        let chosen = try await ServerProcess.run(
            [
                "alerts", "mail", "shop", "--person", "mia@example.org", "--kinds", "velocity", "--digest", "weekly",
                "--data", folder,
            ])
        #expect(chosen.status == 0, "\(chosen.err)")
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let cookie = try await PeopleEndToEndTests().accept(server, link, name: "Mia")
        let html = String(
            decoding: try await browser.send(
                .GET, server.baseURL + "/account", headers: [("Cookie", cookie), ("Accept", "text/html")]
            ).body, as: UTF8.self)
        let csrf = try #require(DashboardActionsEndToEndTests.csrf(html))
        // What is checked includes the alert mail form of her project and the navigation's account and sign-out.
        #expect(html.contains("<h2 id=\"alerts-heading\">Alert mail</h2>") && html.contains("Save alert mail for shop"))
        #expect(html.contains("aria-current=\"page\">Your account</a>") && html.contains(">Sign out</button>"))
        let begun = try await browser.send(
            .POST, server.baseURL + "/account/totp/begin",
            headers: PeopleEndToEndTests.form + [("Cookie", cookie)], body: Array("csrf=\(csrf)".utf8))
        #expect(begun.status == 200)

        let shots = try TempFolder("a11y-account")
        let run = try Command.run(
            "python3",
            [
                AccessibilityEndToEndTests.script, "--axe", axe, "--shots", shots.path, "--cookie", cookie,
                server.baseURL + "/account", server.baseURL + "/logout",
            ])
        #expect(run.status == 0, "\(run.err.suffix(3000))")
        let results = try JSONDecoder().decode(
            [String: AccessibilityEndToEndTests.PageResult].self, from: Data(run.out.utf8))
        let result = try #require(results[server.baseURL + "/account"])
        #expect(result.desktop.title.hasPrefix("Your account"), "\(result.desktop.title)")
        result.expectAccessibleAndFitsAPhone()
        // The page a static page's Sign out leads to (it asks once more, with the session's token).
        let signOut = try #require(results[server.baseURL + "/logout"])
        #expect(signOut.desktop.title.hasPrefix("Sign out"), "\(signOut.desktop.title)")
        signOut.expectAccessibleAndFitsAPhone()

        // In the browser, a page rendered once for everyone (the project's overview) has the Sign out button; clicked,
        // it leads to that page, which asks once more, and the session stays until that page's button is used.
        #expect(try await eventually { FileManager.default.fileExists(atPath: folder + "/site/shop/index.html") })
        let clicked = try Command.run(
            "python3",
            [
                AccessibilityEndToEndTests.script, "--axe", axe, "--shots", shots.path, "--cookie", cookie,
                "--click", ".nav-signout button", server.baseURL + "/shop/index.html",
            ])
        #expect(clicked.status == 0, "\(clicked.err.suffix(3000))")
        let asked = try #require(
            try JSONDecoder().decode(
                [String: AccessibilityEndToEndTests.PageResult].self, from: Data(clicked.out.utf8))[
                    server.baseURL + "/shop/index.html"])
        #expect(asked.desktop.title.hasPrefix("Sign out") && asked.phone.title.hasPrefix("Sign out"))
        asked.expectAccessibleAndFitsAPhone()
        let still = try await browser.send(
            .GET, server.baseURL + "/account", headers: [("Cookie", cookie), ("Accept", "text/html")])
        #expect(still.status == 200, "the session outlives a sign-out without its token")
    }
}
