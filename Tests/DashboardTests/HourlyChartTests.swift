import FaultlineCore
import Foundation
import Testing

@testable import Dashboard

/// Issue #35: the issue page's chart of its last 48 hours, where a one-hour spike is a bar of its own.
@Suite struct HourlyChartTests {
    @Test func hoursAreLabelledInUTC() {
        let hour = IssueHour.number(of: Date(timeIntervalSince1970: 1_795_000_000))  // 2026-11-18 11:06:40Z
        #expect(ChartBlock.hourLabel(hour) == "2026-11-18 11:00")
        #expect(ChartBlock.hourLabel(hour + 13) == "2026-11-19 00:00")
        #expect(ChartBlock.hourLabel(0) == "1970-01-01 00:00")
    }

    @Test func aSpikeIsOneHoursBarAndTheTableListsTheHoursWithEvents() {
        let last = IssueHour.number(of: Date(timeIntervalSince1970: 1_795_000_000))
        let chart = ChartBlock.hourlyEvents(
            id: "h",
            hours: [
                IssueHour(hour: last - 47, events: 1, users: 1), IssueHour(hour: last - 3, events: 120, users: 80),
                IssueHour(hour: last - 60, events: 9, users: 9),  // outside the window: not drawn
            ],
            last: last, length: 48)
        #expect(chart.chartHeading == "Events per hour, last 48 hours")
        // One bar per hour with events, the spike's tooltip naming its hour and counts.
        #expect(chart.svgMarkup.components(separatedBy: "fill=\"#2f5d9e\"").count - 1 == 2)
        #expect(chart.svgMarkup.contains("<title>2026-11-18 08:00: 120 events, 80 users</title>"))
        #expect(chart.svgMarkup.contains("Most: 120 in the hour from 2026-11-18 08:00."))
        #expect(
            chart.tableRowsMarkup
                == "<tr><th scope=\"row\"><time datetime=\"2026-11-16 12:00\">2026-11-16 12:00</time></th>"
                + "<td>1</td><td>1</td></tr>\n"
                + "<tr><th scope=\"row\"><time datetime=\"2026-11-18 08:00\">2026-11-18 08:00</time></th>"
                + "<td>120</td><td>80</td></tr>\n")
    }
}
