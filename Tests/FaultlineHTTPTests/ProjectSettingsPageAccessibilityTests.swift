import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// A project's settings page (`/{slug}/settings`) as its admin sees it, with every form, a member list and a trail,
/// and as a viewer sees it (no forms), in real headless Chromium (`tools/a11y/check_pages.py`): no axe-core violation
/// at desktop or phone width, and nothing wider than the phone.
@Suite(.serialized, .tags(.endToEnd, .chromium), .provisioned) struct ProjectSettingsPageAccessibilityTests {
    let browser = HTTP(client: SecurityEndToEndTests.noRedirects)

    @Test func theSettingsPageIsAccessibleAndFitsAPhone() async throws {
        let axe = try #require(AccessibilityEndToEndTests.axe, "axe-core is missing (tools/test fetches it)")
        let folder = ServerProcess.newFolder()
        _ = try await ServerProcess.createProject("shop", in: folder)
        let adminLink = try await PeopleEndToEndTests.invite(folder, "ann@example.org", role: "admin", project: "shop")
        let viewerLink = try await PeopleEndToEndTests.invite(
            folder, "vic@example.org", role: "viewer", project: "shop")
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let admin = try await PeopleEndToEndTests().accept(server, adminLink, name: "Ann")
        let viewer = try await PeopleEndToEndTests().accept(server, viewerLink, name: "Vic")
        // A change, so that the trail has a row made on the page.
        let page = try await PeopleEndToEndTests().csrf(server, page: "/shop/settings", cookie: admin)
        let saved = try await browser.send(
            .POST, server.baseURL + "/shop/settings/targets", headers: PeopleEndToEndTests.form + [("Cookie", admin)],
            body: Array("csrf=\(try #require(page.token))&users=99&sessions=99.5".utf8))
        #expect(saved.status == 303)

        for (who, cookie) in [("admin", admin), ("viewer", viewer)] {
            let shots = try TempFolder("a11y-settings-\(who)")
            let url = server.baseURL + "/shop/settings"
            let run = try Command.run(
                "python3",
                [AccessibilityEndToEndTests.script, "--axe", axe, "--shots", shots.path, "--cookie", cookie, url])
            #expect(run.status == 0, "\(run.err.suffix(3000))")
            let results = try JSONDecoder().decode(
                [String: AccessibilityEndToEndTests.PageResult].self, from: Data(run.out.utf8))
            let result = try #require(results[url])
            #expect(result.desktop.title.hasPrefix("Settings · shop"), "\(result.desktop.title)")
            for (width, view) in [("desktop", result.desktop), ("phone", result.phone)] {
                #expect(
                    view.violations.isEmpty,
                    "\(who), \(width): \(view.violations.map { "\($0.id): \($0.help ?? "") \($0.nodes ?? [])" })")
            }
            #expect(
                (result.phone.scrollWidth ?? .max) <= (result.phone.innerWidth ?? 0),
                "\(who): scrolls sideways at phone width; too wide: \(result.phone.tooWide ?? [])")
            #expect((result.phone.smallestFontPx ?? 0) >= 12)
        }
    }
}
