import FaultlineApp
import Foundation
import Testing

/// A render cycle on a real data folder: a full render that is cut short (the disk is full) writes the summary pages,
/// says it is not complete, and removes no page, since it cannot tell the pages of issues that are gone from the
/// pages it did not reach; a full render that completes removes the pages of issues that are gone.
@Suite struct RenderCycleTests {
    static var webDirectory: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.appendingPathComponent("web").path
    }

    @Test func aFullRenderCutShortRemovesNoPageAndSaysItIsIncomplete() async throws {
        let app = try await TestApp()
        try await app.test { client in
            try await IssueReportsRouteTests.post(
                client, key: app.credentials.ingestKey, [IssueReportsRouteTests.crash(0, site: 1), IssueReportsRouteTests.crash(1, site: 2)])
        }
        try await IssueReportsRouteTests.group(app)
        let renderer = try app.root.siteRenderer(webDirectory: Self.webDirectory)
        let issues = app.folder + "/site/app/issues"
        try FileManager.default.createDirectory(atPath: issues, withIntermediateDirectories: true)
        let gone = issues + "/999999.html"
        try Data("an issue that is gone".utf8).write(to: URL(fileURLWithPath: gone))

        let cut = try await app.root.renderCycle(with: renderer, since: nil, stop: { true })
        #expect(!cut.complete)
        #expect(cut.issuePages == 0)
        #expect(cut.summaryPages > 1)
        #expect(FileManager.default.fileExists(atPath: app.folder + "/site/app/index.html"))
        #expect(FileManager.default.fileExists(atPath: gone))

        let whole = try await app.root.renderCycle(with: renderer, since: nil)
        #expect(whole.complete)
        #expect(whole.issuePages == 2)
        #expect(!FileManager.default.fileExists(atPath: gone))
        let pages = try FileManager.default.contentsOfDirectory(atPath: issues).filter { $0.hasSuffix(".html") }
        #expect(pages.count == 2)
    }
}
