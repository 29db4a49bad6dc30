import FaultlineCore
import Foundation
import TestSupport
import Testing

/// Issue #35: an issue's events and users per hour over its last 48 hours (`IssueDetail.hours`), counted from its
/// reports by both engines alike: a spike within one hour is one hour's count, and the window's edges hold.
extension InsightsConformanceTests {
    @Test(arguments: Engine.allCases) func issueHoursCountEachHoursEventsAndUsers(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let (db, p) = try await setUp(stores)
            // Given: day0 + 3 days is "now"; hour numbers count from the epoch.
            let now = Date(timeIntervalSince1970: StoreRows.day0 + 3 * 86_400 + 30 * 60)
            let last = IssueHour.number(of: now)
            let seconds = { (hoursBack: Int64, minute: Double) in
                Double(last - hoursBack - Int64(StoreRows.day0 / 3_600)) * 3_600 + minute * 60
            }
            // Five reports in the current hour (a spike, three users), one two hours back, one 47 hours back (the
            // window's first hour), one 48 hours back (outside it).
            var rows: [(Int, String?, String?, Double, String?)] = []
            for n in 1...5 { rows.append((n, "1.0", "user-\(n % 3)", seconds(0, Double(n)), nil)) }
            rows.append((6, "1.0", "user-9", seconds(2, 10), nil))
            rows.append((7, "1.0", nil, seconds(47, 0), nil))
            rows.append((8, "1.0", "user-9", seconds(48, 59), nil))
            try await store(db, p, rows)
            var issue: IssueID?
            for n in 1...8 { issue = try await group(db, n, "parse()") }
            let id = try #require(issue)

            let detail = try #require(try await db.insights.issue(id, project: p.id, now: now))
            #expect(detail.summary.events == 8)
            #expect(
                detail.hours == [
                    IssueHour(hour: last - 47, events: 1, users: 0),
                    IssueHour(hour: last - 2, events: 1, users: 1),
                    IssueHour(hour: last, events: 5, users: 3),
                ])
        }
    }
}
