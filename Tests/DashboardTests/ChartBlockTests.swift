import FaultlineCore
import Testing

@testable import Dashboard

/// A chart's table rows, written by `ChartBlock` instead of a Mustache section per row and cell.
@Suite struct ChartBlockTests {
    @Test func rowsAreOneEscapedTableRowALine() {
        let rows = [
            ChartBlock.Row(day: "2026-11-24", cells: ["5", "3"]),
            ChartBlock.Row(day: "2026-11-25", cells: [Fixtures.hostile]),
        ]
        let markup = ChartBlock.rowsMarkup(rows)
        #expect(
            markup == """
                <tr><th scope="row"><time datetime="2026-11-24">2026-11-24</time></th><td>5</td><td>3</td></tr>
                <tr><th scope="row"><time datetime="2026-11-25">2026-11-25</time></th><td>\(Markup.escape(Fixtures.hostile))</td></tr>

                """)
        #expect(!markup.contains("<script") && !markup.contains("<img"))
        #expect(markup.contains("&lt;script&gt;") && markup.contains("&quot;&gt;&lt;img"))
        #expect(ChartBlock.rowsMarkup([]) == "")
    }

    @Test func anIssuesEventTableListsTheDaysWithEventsInOrder() {
        let last = Fixtures.today
        let days = [
            IssueDay(day: last.adding(-3), events: 2, users: 1), IssueDay(day: last, events: 7, users: 4),
        ]
        let chart = ChartBlock.events(id: "c", days: days, last: last, length: 30)
        #expect(chart.columnHeaders == ["Day (UTC)", "Events", "Users"])
        #expect(
            chart.tableRowsMarkup.split(separator: "\n").map(String.init) == [
                #"<tr><th scope="row"><time datetime="\#(last.adding(-3))">\#(last.adding(-3))</time></th><td>2</td><td>1</td></tr>"#,
                #"<tr><th scope="row"><time datetime="\#(last)">\#(last)</time></th><td>7</td><td>4</td></tr>"#,
            ])
    }
}
