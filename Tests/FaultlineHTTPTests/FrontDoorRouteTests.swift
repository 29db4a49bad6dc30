import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// `/` through the real router and a real data folder: the landing page until the site has an `index.html`, the
/// rendered projects page from then on.
@Suite struct FrontDoorRouteTests {
    @Test func theLandingPageOnlyBeforeTheFirstRender() async throws {
        let app = try await TestApp()
        let site = try #require(app.configuration.siteDirectory)
        try await app.test { client in
            let before = try await client.execute(uri: "/", method: .get, headers: app.adminHeaders)
            #expect(before.status == .ok)
            #expect(String(buffer: before.body).contains("has not been rendered yet"))

            try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
            let page = "<!doctype html><title>Projects</title><h1>Projects rendered</h1>"
            try page.write(toFile: site + "/index.html", atomically: true, encoding: .utf8)
            let after = try await client.execute(uri: "/", method: .get, headers: app.adminHeaders)
            #expect(after.status == .ok)
            #expect(String(buffer: after.body) == page)
            #expect(after.headers[.contentType] == "text/html; charset=utf-8")
            // The guard still stands in front of it.
            #expect(try await client.execute(uri: "/", method: .get).status == .unauthorized)
        }
    }
}
