import FaultlineCore

/// A chart and its text alternative, as `chart.mustache` shows them: the SVG, then a table with every day's
/// numbers inside a `<details>`.
struct ChartBlock {
    /// One day of the table.
    struct Row {
        var day: String
        var cells: [String]
    }

    /// Which crash-free rate a health chart draws.
    enum Metric {
        case users
        case sessions

        var name: String { self == .users ? "Crash-free users" : "Crash-free sessions" }
    }

    /// Server-made SVG (every label in it escaped by `SVGChart`), inserted raw by the template.
    var svgMarkup: String
    var chartHeading: String
    var tableCaption: String
    var columnHeaders: [String]
    /// The table's rows, one `<tr>` a line, every text escaped (`rowsMarkup`), inserted raw by the template. A chart
    /// table is the most repeated part of an issue page (up to 90 rows on each of its charts): written here, not
    /// through a Mustache section per row and per cell, which swift-mustache walks with dynamic casts.
    var tableRowsMarkup: String

    init(svgMarkup: String, chartHeading: String, tableCaption: String, columnHeaders: [String], tableRows: [Row]) {
        self.svgMarkup = svgMarkup
        self.chartHeading = chartHeading
        self.tableCaption = tableCaption
        self.columnHeaders = columnHeaders
        self.tableRowsMarkup = Self.rowsMarkup(tableRows)
    }

    /// `<tr><th scope="row"><time datetime="DAY">DAY</time></th><td>CELL</td>…</tr>` and a line break, for each row.
    static func rowsMarkup(_ rows: [Row]) -> String {
        var out = ""
        out.reserveCapacity(rows.count * 80)
        for row in rows {
            let day = Markup.escape(row.day)
            out += "<tr><th scope=\"row\"><time datetime=\""
            out += day
            out += "\">"
            out += day
            out += "</time></th>"
            for cell in row.cells {
                out += "<td>"
                out += Markup.escape(cell)
                out += "</td>"
            }
            out += "</tr>\n"
        }
        return out
    }

    /// A line chart of a daily crash-free rate over a trend's days, with the counts of each day in the table and,
    /// when there is a target, the target as a line and each day's standing against it (in words, in the table).
    ///
    /// - Parameters:
    ///   - id: unique within the page.
    ///   - scope: what the numbers cover, e.g. "all releases" or "release 1.2".
    ///   - target: the project's target for this rate, in percent; nil draws no target.
    static func health(id: String, metric: Metric, scope: String, trend: HealthTrend, target: Double?) -> ChartBlock {
        let texts = trend.days.map {
            metric == .users ? Format.crashFreeUsers($0.health) : Format.crashFreeSessions($0.health)
        }
        let rates = trend.days.map { metric == .users ? $0.health.crashFreeUsers : $0.health.crashFreeSessions }
        let points = zip(trend.days, zip(rates, texts)).map { day, value in
            SVGChart.RatePoint(label: day.day.description, rate: value.0, note: value.1)
        }
        let title = "\(metric.name) per day, \(scope), last \(trend.days.count) days"
        var description = "Line chart of daily \(metric.name.lowercased())"
        if let first = trend.days.first, let last = trend.days.last {
            description += " from \(first.day) to \(last.day) (UTC)."
        }
        let known = trend.days.indices.compactMap { index in rates[index].map { (index, $0) } }
        if let lowest = known.min(by: { $0.1 < $1.1 }) {
            description += " Lowest: \(texts[lowest.0]) on \(trend.days[lowest.0].day)."
        }
        var columns = ["Day (UTC)", metric.name]
        var standings: [String] = []
        if let target {
            let percent = TargetMarkView.percent(target)
            let judged = rates.map { TargetStanding.judge($0, target: target) }
            let below = judged.filter { $0 == .below }.count
            description +=
                " Target: \(percent) (the dashed line); \(Format.count(below, "day")) below it, "
                + "drawn as downward triangles."
            columns.append("Against the \(percent) target")
            standings = judged.map {
                switch $0 {
                case .below: "below target"
                case .met: "meets target"
                case .noData: "no data"
                }
            }
        }
        description +=
            " Days without data: \(trend.days.count - known.count). Every day's numbers are in the table below."
        let rows = trend.days.indices.map { index in
            Row(
                day: trend.days[index].day.description,
                cells: [texts[index]] + (target == nil ? [] : [standings[index]]))
        }
        return ChartBlock(
            svgMarkup: SVGChart.rateLine(
                id: id, title: title, description: description, points: points, target: target),
            chartHeading: title, tableCaption: "\(title): every day's numbers",
            columnHeaders: columns, tableRows: rows)
    }

    /// A bar chart of an issue's events per day over `length` days ending with `last` (days without events are 0).
    static func events(id: String, days: [IssueDay], last: DayNumber, length: Int) -> ChartBlock {
        let byDay = Dictionary(
            days.map { ($0.day, $0) },
            uniquingKeysWith: { a, b in
                IssueDay(day: a.day, events: a.events + b.events, users: max(a.users, b.users))
            })
        let window = (0..<length).map { last.adding($0 - (length - 1)) }
        let filled = window.map { byDay[$0] ?? IssueDay(day: $0, events: 0, users: 0) }
        return eventBars(
            id: id, unit: "day",
            periods: filled.map { CountedPeriod(label: $0.day.description, events: $0.events, users: $0.users) },
            peak: { "on \($0)" })
    }
}
