import FaultlineApp
import FaultlineCore
import Foundation
import Logging
import Synchronization
import Testing

/// Issue #39 finding 6: an issue page shows a sample report (user id, custom keys); when retention deletes that report,
/// the page must be rendered again without it, though the issue's counts did not change. On a real data folder, with
/// the real renderer and the real retention service.
@Suite struct RetentionPagesTests {
    static func crash(_ n: Int, user: String, key: String) -> String {
        let frames = (0..<3).map {
            #"{"address":"0x\#(String(0x7f00_0000_5000 + $0 * 0x40, radix: 16))","module":"libapp.so"}"#
        }
        return """
            {"event_id":"\(Payloads.eventID(n))","kind":"crash","timestamp":"2026-11-22T05:08:09Z","user_id":"\(user)",
             "custom_keys":{"cart":"\(key)"},
             "app":{"version":"1.0","build":"7"},"error":{"type":"SIGSEGV","message":"Segmentation fault"},
             "threads":[{"crashed":true,"frames":[\(frames.joined(separator: ","))]}],
             "modules":[{"name":"libapp.so","build_id":"aba11aeff7e7e9e2e1bc84464f53a7e183a8930a","base_address":"0x7f0000000000","size":1048576}]}
            """
    }

    @Test func aPageWhoseSampleWasPrunedIsRenderedAgainWithoutIt() async throws {
        // Given one issue whose only sample names a user and a custom key, and its rendered page
        let start = Date()
        let clock = MovableClock(start)
        let app = try await TestApp(clock: clock)
        try await app.test { client in
            try await IssueReportsRouteTests.post(
                client, key: app.credentials.ingestKey, [Self.crash(1, user: "pruned-user-4711", key: "gold-cart-4711")]
            )
        }
        try await IssueReportsRouteTests.group(app)
        let renderer = try app.root.siteRenderer(webDirectory: RenderCycleTests.webDirectory)
        _ = try await app.root.renderCycle(with: renderer, since: nil)
        let issues = app.folder + "/site/app/issues"
        let page = try #require(
            try FileManager.default.contentsOfDirectory(atPath: issues).first { $0.hasSuffix(".html") })
        let before = try String(contentsOfFile: issues + "/" + page, encoding: .utf8)
        #expect(before.contains("pruned-user-4711"))
        #expect(before.contains("Events by user, in the reports still kept"))
        #expect(before.contains("gold-cart-4711"))
        #expect(before.contains(Payloads.normalized(1)))

        // When retention deletes the report 91 days later (with samples off: by default an issue keeps its first and
        // latest report as samples, RetentionSamplesConformanceTests)
        clock.set(start.addingTimeInterval(91 * 86_400))
        let retention = app.root.retentionService(days: 90, samples: .none, logger: Logger(label: "test"))
        let pruned = try await retention.step(now: clock.now())
        #expect(pruned.reports == 1)

        // Then the next cycle (only issues changed since the last render) renders that page again, without the sample
        let cycle = try await app.root.renderCycle(with: renderer, since: start.addingTimeInterval(60))
        #expect(cycle.issuePages == 1)
        let after = try String(contentsOfFile: issues + "/" + page, encoding: .utf8)
        #expect(!after.contains("gold-cart-4711"))
        #expect(!after.contains(Payloads.normalized(1)))
        // and without its user: "Events by user" counts the retained reports, and the per-user rollups that still
        // count the user hold a keyed hash (RollupUser), never the id.
        #expect(!after.contains("pruned-user-4711"))
    }
}

/// A wall clock a test moves.
final class MovableClock: WallClock, Sendable {
    let date: Mutex<Date>
    init(_ date: Date) { self.date = Mutex(date) }
    func now() -> Date { date.withLock { $0 } }
    func set(_ value: Date) { date.withLock { $0 = value } }
}
