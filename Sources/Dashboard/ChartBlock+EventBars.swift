import FaultlineCore

extension ChartBlock {
    /// One bar of an issue's events chart: its day or hour, and its counts.
    struct CountedPeriod {
        var label: String
        var events: Int
        var users: Int
    }

    /// A bar chart of an issue's events per `unit` (`day`, `hour`) over `periods`, every period of the window in
    /// order (those without events are 0); `peak` says when the busiest period was ("on 2026-11-18").
    static func eventBars(id: String, unit: String, periods: [CountedPeriod], peak: (String) -> String)
        -> ChartBlock
    {
        let points = periods.map {
            SVGChart.CountPoint(
                label: $0.label, count: $0.events,
                note: "\(Format.count($0.events, "event")), \(Format.count($0.users, "user"))")
        }
        let title = "Events per \(unit), last \(periods.count) \(unit)s"
        let total = periods.reduce(0) { $0 + $1.events }
        var description =
            "Bar chart of the issue's events per \(unit) from \(periods.first?.label ?? "") to "
            + "\(periods.last?.label ?? "") (UTC): \(Format.count(total, "event")) in total."
        if let busiest = periods.max(by: { $0.events < $1.events }), busiest.events > 0 {
            description += " Most: \(busiest.events) \(peak(busiest.label))."
        }
        description += " The \(unit)s with events are in the table below; every other \(unit) had none."
        // Only the periods with events: the same information as a row for every one (the rest are zero), at a
        // fraction of the page (an issue page is rendered again whenever its issue gets an event).
        return ChartBlock(
            svgMarkup: SVGChart.countBars(id: id, title: title, description: description, points: points),
            chartHeading: title, tableCaption: "\(title): \(unit)s with events (every other \(unit) had none)",
            columnHeaders: ["\(unit.prefix(1).uppercased() + unit.dropFirst()) (UTC)", "Events", "Users"],
            tableRows: periods.filter { $0.events > 0 }.map {
                Row(day: $0.label, cells: [String($0.events), String($0.users)])
            })
    }

    /// `YYYY-MM-DD HH:00` (UTC) of hour number `hour` (``IssueHour``).
    static func hourLabel(_ hour: Int64) -> String {
        let (day, rest) = hour.quotientAndRemainder(dividingBy: 24)
        // An hour before 1970 (not one a chart of recent hours shows) would leave a negative remainder.
        let inDay = rest < 0 ? rest + 24 : rest
        let date = DayNumber(rawValue: Int(rest < 0 ? day - 1 : day)).description
        return date + " " + (inDay < 10 ? "0" : "") + String(inDay) + ":00"
    }

    /// A bar chart of an issue's events per hour over the `length` hours ending with `last` (hours without events
    /// are 0): the recent window where a one-hour spike is a bar of its own.
    static func hourlyEvents(id: String, hours: [IssueHour], last: Int64, length: Int) -> ChartBlock {
        let byHour = Dictionary(hours.map { ($0.hour, $0) }, uniquingKeysWith: { a, _ in a })
        let count = Int64(max(length, 1))
        let periods = (0..<count).map { offset -> CountedPeriod in
            let hour = last - (count - 1) + offset
            let counted = byHour[hour]
            return CountedPeriod(label: hourLabel(hour), events: counted?.events ?? 0, users: counted?.users ?? 0)
        }
        return eventBars(id: id, unit: "hour", periods: periods, peak: { "in the hour from \($0)" })
    }
}
