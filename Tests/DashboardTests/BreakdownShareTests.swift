import FaultlineCore
import Testing

@testable import Dashboard

/// Issue #35, the smaller gaps: breakdowns give each value's share of the issue's events, and lists show a title
/// without the repeated signal prefix of `faultline-run` crashes.
@Suite struct BreakdownShareTests {
    @Test("device and OS values show their share of the issue's events; users, counted among recent reports, do not")
    func shares() {
        let breakdowns = IssuePage.breakdowns(
            [
                "device": [
                    BreakdownEntry(value: "iPhone16,1", events: 5), BreakdownEntry(value: "Pixel 8", events: 3),
                ],
                "os": [BreakdownEntry(value: "iOS 17.1", events: 8)],
                "user": [BreakdownEntry(value: "u1", events: 2)],
            ], events: 8)
        let devices = breakdowns.first { $0.breakdownHeading == "Devices" }
        #expect(devices?.hasShare == true)
        #expect(devices?.entries.map(\.entryShare) == ["62.5 %", "37.5 %"])
        #expect(devices?.entries.first?.entryValue == "iPhone 15 Pro (iPhone16,1)")
        #expect(breakdowns.first { $0.breakdownHeading == "Operating systems" }?.entries.first?.entryShare == "100 %")
        let users = breakdowns.first { $0.breakdownHeading == "Users" }
        #expect(users?.hasShare == false && users?.entries.first?.entryShare == nil)
        // No events known (a page built without the total): no share rather than a division by zero.
        #expect(IssuePage.breakdowns(["os": [BreakdownEntry(value: "iOS", events: 1)]]).allSatisfy { !$0.hasShare })
    }

    @Test("device and OS values show their users and those users' share of the issue's users; the users table does not")
    func users() {
        let breakdowns = IssuePage.breakdowns(
            [
                "device": [
                    BreakdownEntry(value: "iPhone16,1", events: 30, users: 41),
                    BreakdownEntry(value: "Pixel 8", events: 3, users: 0),
                ],
                "user": [BreakdownEntry(value: "u1", events: 2)],
            ], events: 40, users: 100)
        let devices = try? #require(breakdowns.first { $0.breakdownHeading == "Devices" })
        #expect(devices?.hasUsers == true)
        #expect(devices?.entries.map(\.entryUsers) == [41, 0])
        #expect(devices?.entries.map(\.entryUserShare) == ["41 %", "0 %"])
        #expect(devices?.breakdownCaption == "Events and users by device")
        let users = breakdowns.first { $0.breakdownHeading == "Users" }
        #expect(users?.hasUsers == false && users?.entries.first?.entryUserShare == nil)
        // An issue without users (its reports carry no user id): no users columns, rather than zeros.
        #expect(
            IssuePage.breakdowns(["os": [BreakdownEntry(value: "iOS", events: 1, users: 0)]], events: 1, users: 0)
                .allSatisfy { !$0.hasUsers })
    }

    @Test("a list row shows `SIGSEGV: SIGSEGV (signal 11…)` once, and keeps other titles whole")
    func listTitles() {
        var issue = Fixtures.summary(7, title: "SIGSEGV: SIGSEGV (signal 11, Segmentation fault): at 0x0")
        var row = IssueRowView(issue, slug: Fixtures.demo.slug, from: "demo/issues.html", releases: [])
        #expect(row.issueTitle == "SIGSEGV (signal 11, Segmentation fault): at 0x0")
        #expect(issue.title.hasPrefix("SIGSEGV: SIGSEGV"), "the stored title is unchanged")
        issue.title = "NSURLErrorDomain: The request timed out."
        row = IssueRowView(issue, slug: Fixtures.demo.slug, from: "demo/issues.html", releases: [])
        #expect(row.issueTitle == "NSURLErrorDomain: The request timed out.")
        #expect(row.issueKind == "crash")
        issue.title = "App Hanging: App hanging for at least 2000 ms."
        issue.kind = .nonfatal
        issue.hang = true  // as filing stored it: the row reads the mark, not the title
        #expect(
            IssueRowView(issue, slug: Fixtures.demo.slug, from: "demo/issues.html", releases: []).issueKind == "hang")
    }
}
