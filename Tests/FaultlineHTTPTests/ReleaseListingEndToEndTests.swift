import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Issue #35: a release with events but no sessions is listed (Releases page, release filter) with no session data
/// instead of a rate, and `unknown` (sessions of an app that gave no version) never becomes the latest release.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct ReleaseListingEndToEndTests {
    let http = HTTP(client: HTTPClient.shared)

    @Test func anEventsOnlyReleaseIsListedAndUnknownIsNeverTheLatest() async throws {
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("shop", in: folder)
        let server = try await ServerProcess(folder: folder, environment: InsightsEndToEndTests.fastServices)
        defer { server.cleanUp() }
        let insights = InsightsEndToEndTests()

        // Given sessions of 1.0 two hours ago, then a crash of 2.0 (an app that sends no sessions), then — newest of
        // all — a session of an app that gave no version (`unknown`)…
        let earlier = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-7200))
        try await insights.postSessions(
            server, key: project.ingest,
            (0..<3).map {
                InsightsEndToEndTests.session(
                    "s\($0)", user: "u\($0)", release: "1.0", status: "exited", started: earlier)
            })
        let crash = InsightsEndToEndTests.crash(1, site: "parseCart", version: "2.0", user: "u9")
        #expect(try await http.postReports(server.baseURL, key: project.ingest, crash).status == 202)
        try await Task.sleep(for: .milliseconds(1100))  // the next second: `unknown` is strictly the newest
        try await insights.postSessions(
            server, key: project.ingest,
            [InsightsEndToEndTests.session("s9", user: "u8", release: "unknown", status: "exited")])
        let read = [("Authorization", "Bearer \(project.upload)")]
        #expect(
            try await eventually {
                let answer = try await http.send(.GET, server.baseURL + "/api/v1/releases", headers: read)
                return (answer.json["releases"] as? [[String: Any]])?.count == 3
            })
        let releases =
            try await http.send(.GET, server.baseURL + "/api/v1/releases", headers: read).json["releases"]
            as? [[String: Any]] ?? []
        #expect(releases.compactMap { $0["release"] as? String } == ["unknown", "2.0", "1.0"])

        // When the site is rendered…
        let site = try TempFolder("faultline-site")
        let rendered = try await ServerProcess.run(["render", "--data", folder, "--out", site.path])
        #expect(rendered.status == 0, "\(rendered.err)")

        // Then the overview's latest release is 2.0, the newest with a name…
        let overview = try String(contentsOfFile: site.file("shop/index.html"), encoding: .utf8)
        #expect(overview.contains("Latest release: 2.0"), "\(overview)")
        #expect(!overview.contains("Latest release: unknown"))
        // …the releases page lists 2.0 with no session data, and the issue list offers it as a filter.
        let page = try String(contentsOfFile: site.file("shop/releases.html"), encoding: .utf8)
        #expect(page.contains(".html\">2.0</a>"), "\(page)")
        #expect(page.contains("data-label=\"Crash-free users\">no session data <span"), "\(page)")
        let list = try String(contentsOfFile: site.file("shop/issues.html"), encoding: .utf8)
        #expect(list.contains("<option value=\"2.0\""), "\(list)")
    }
}
