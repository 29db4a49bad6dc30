import FaultlineCore

/// Inline SVG charts made on the server from numbers: a line chart of daily rates and a bar chart of daily
/// counts. Pure: the same points give the same bytes.
///
/// Every string that goes into the markup passes through `Markup.escape`, so a hostile release name in a title
/// stays text. The charts are `role="img"`, labelled by their `<title>` and `<desc>`; pages put a table with every
/// point next to them, since a picture is no help to a screen reader or a copy-paste.
public enum SVGChart {
    /// One day of a rate chart.
    public struct RatePoint: Sendable, Equatable {
        /// The x-axis label (a day, `YYYY-MM-DD`).
        public var label: String
        /// 0…1, or nil for a day without data (drawn as a gap, never as 100 %).
        public var rate: Double?
        /// What a pointer hovering the point shows, e.g. the rate with its counts.
        public var note: String
        /// A point of a rate chart; see the properties.
        public init(label: String, rate: Double?, note: String) {
            self.label = label
            self.rate = rate
            self.note = note
        }
    }

    /// One day of a count chart.
    public struct CountPoint: Sendable, Equatable {
        /// The x-axis label (a day, `YYYY-MM-DD`).
        public var label: String
        /// The bar's height; 0 draws no bar.
        public var count: Int
        /// What a pointer hovering the bar shows.
        public var note: String
        /// A point of a count chart; see the properties.
        public init(label: String, count: Int, note: String) {
            self.label = label
            self.count = count
            self.note = note
        }
    }

    /// Drawing area, in viewBox units (the SVG scales to its container's width). The left margin holds the y labels
    /// at the larger text size the stylesheet sets on a phone (23 units, so that a chart 366 px wide draws them at
    /// 11 px or more): "99.75 %" is about 85 units wide there.
    static let width = 720.0
    static let height = 240.0
    static let left = 96.0
    static let right = 14.0
    static let top = 14.0
    static let bottom = 34.0
    static var plotWidth: Double { width - left - right }
    static var plotHeight: Double { height - top - bottom }

    /// A line chart of rates, y from a little below the lowest rate (or the target, when lower) to 100 %, with gaps
    /// on days without data, and the target as a dashed line.
    ///
    /// A day below the target is drawn as a downward triangle instead of a dot, and its hover text says so: the
    /// shape, not only a colour, tells it apart.
    ///
    /// - Parameters:
    ///   - id: a prefix unique within the page, for the `<title>`/`<desc>` ids.
    ///   - title: the chart's accessible name.
    ///   - description: a sentence saying what the chart shows.
    ///   - points: one per day, oldest first.
    ///   - target: the target in percent (0…100), drawn as a labelled line; nil draws none.
    public static func rateLine(
        id: String, title: String, description: String, points: [RatePoint], target: Double? = nil
    ) -> String {
        let percents = points.map { $0.rate.map { min(max($0, 0), 1) * 100 } }
        let goal = target.flatMap { $0.isFinite ? min(max($0, 0), 100) : nil }
        let lower = lowerBound(percents.compactMap { $0 } + (goal.map { [$0] } ?? []))
        var out = open(id: id, title: title, description: description)
        for tick in [lower, (lower + 100) / 2, 100] {
            let y = yFor(tick, lower: lower, upper: 100)
            out += gridLine(y: y, label: Format.trimmed(tick, places: 2) + " %")
        }
        out += xLabels(points.map(\.label)) { xFor($0, count: points.count) }
        if let goal { out += targetLine(y: yFor(goal, lower: lower, upper: 100), percent: goal) }
        // Segments between gaps: consecutive days with data.
        var path = ""
        var previousHadData = false
        for (index, percent) in percents.enumerated() {
            guard let percent else {
                previousHadData = false
                continue
            }
            let command = previousHadData ? "L" : "M"
            path +=
                "\(command)\(coordinate(xFor(index, count: points.count))) "
                + coordinate(yFor(percent, lower: lower, upper: 100)) + " "
            previousHadData = true
        }
        if !path.isEmpty {
            out +=
                "<path class=\"chart-line\" d=\"\(path.dropLast())\" fill=\"none\" stroke=\"#1f4e8c\" "
                + "stroke-width=\"2\" stroke-linejoin=\"round\"/>\n"
        }
        for (index, percent) in percents.enumerated() {
            guard let percent else { continue }
            let x = xFor(index, count: points.count)
            let y = yFor(percent, lower: lower, upper: 100)
            let label = "\(Markup.escape(points[index].label)): \(Markup.escape(points[index].note))"
            if let target, TargetStanding.judge(points[index].rate, target: target) == .below {
                out +=
                    "<path class=\"chart-below\" d=\"M\(coordinate(x - 5)) \(coordinate(y - 4)) "
                    + "L\(coordinate(x + 5)) \(coordinate(y - 4)) L\(coordinate(x)) \(coordinate(y + 5)) Z\" "
                    + "fill=\"#8a1c12\"><title>\(label), below the \(Format.trimmed(target, places: 2)) % target"
                    + "</title></path>\n"
            } else {
                out +=
                    "<circle cx=\"\(coordinate(x))\" cy=\"\(coordinate(y))\" r=\"3\" fill=\"#1f4e8c\">"
                    + "<title>\(label)</title></circle>\n"
            }
        }
        if percents.allSatisfy({ $0 == nil }) { out += noData() }
        return out + "</svg>"
    }

    /// A bar chart of counts, y from 0 to a round number at or above the largest count.
    ///
    /// - Parameters:
    ///   - id: a prefix unique within the page, for the `<title>`/`<desc>` ids.
    ///   - title: the chart's accessible name.
    ///   - description: a sentence saying what the chart shows.
    ///   - points: one per day, oldest first.
    public static func countBars(id: String, title: String, description: String, points: [CountPoint]) -> String {
        let upper = Double(niceCeiling(points.map(\.count).max() ?? 0))
        var out = open(id: id, title: title, description: description)
        let ticks = Int(upper) % 2 == 0 ? [0, upper / 2, upper] : [0, upper]
        for tick in ticks {
            out += gridLine(y: yFor(tick, lower: 0, upper: upper), label: Format.trimmed(tick, places: 0))
        }
        let slot = plotWidth / Double(max(points.count, 1))
        out += xLabels(points.map(\.label)) { left + slot * (Double($0) + 0.5) }
        let barWidth = max(slot * 0.7, 1)
        for (index, point) in points.enumerated() where point.count > 0 {
            let y = yFor(Double(point.count), lower: 0, upper: upper)
            let x = left + slot * Double(index) + (slot - barWidth) / 2
            out +=
                "<rect x=\"\(coordinate(x))\" y=\"\(coordinate(y))\" width=\"\(coordinate(barWidth))\" "
                + "height=\"\(coordinate(top + plotHeight - y))\" fill=\"#2f5d9e\">"
                + "<title>\(Markup.escape(point.label)): \(Markup.escape(point.note))</title></rect>\n"
        }
        if points.allSatisfy({ $0.count == 0 }) { out += noData(text: "No events") }
        return out + "</svg>"
    }

    // MARK: - Scales

    /// The bottom of a rate chart in percent: a margin below the lowest value, rounded down to a step that
    /// suits the range (0.5 near 100 %, 1 above 90 %, 10 below), never below 0. Without data: 0.
    static func lowerBound(_ percents: [Double]) -> Double {
        guard let lowest = percents.min() else { return 0 }
        let margin = max(0.5, (100 - lowest) * 0.1)
        let raw = min(lowest - margin, 99.5)
        let step = raw >= 99 ? 0.5 : raw >= 90 ? 1 : 10
        return max(0, (raw / step).rounded(.down) * step)
    }

    /// The smallest 1, 2 or 5 × 10ⁿ at or above `value` (1 for 0).
    static func niceCeiling(_ value: Int) -> Int {
        guard value > 1 else { return 1 }
        var magnitude = 1
        while magnitude * 10 <= value { magnitude *= 10 }
        for factor in [1, 2, 5, 10] where factor * magnitude >= value { return factor * magnitude }
        return 10 * magnitude
    }

    static func xFor(_ index: Int, count: Int) -> Double {
        count <= 1 ? left + plotWidth / 2 : left + plotWidth * Double(index) / Double(count - 1)
    }

    static func yFor(_ value: Double, lower: Double, upper: Double) -> Double {
        let span = upper - lower
        let fraction = span > 0 ? (value - lower) / span : 1
        return top + plotHeight * (1 - min(max(fraction, 0), 1))
    }

    /// Coordinates with at most two decimals, so output is short and identical everywhere.
    static func coordinate(_ value: Double) -> String { Format.trimmed(value, places: 2) }

    // MARK: - Pieces

    static func open(id: String, title: String, description: String) -> String {
        let id = Markup.escape(id)
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 \(coordinate(width)) "
            + "\(coordinate(height))\" role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\">\n"
            + "<title id=\"\(id)-title\">\(Markup.escape(title))</title>\n"
            + "<desc id=\"\(id)-desc\">\(Markup.escape(description))</desc>\n"
            + "<rect x=\"0\" y=\"0\" width=\"\(coordinate(width))\" height=\"\(coordinate(height))\" "
            + "fill=\"#ffffff\"/>\n"
    }

    static func gridLine(y: Double, label: String) -> String {
        "<line x1=\"\(coordinate(left))\" y1=\"\(coordinate(y))\" x2=\"\(coordinate(width - right))\" "
            + "y2=\"\(coordinate(y))\" stroke=\"#c8c8c8\" stroke-width=\"1\"/>\n"
            + "<text x=\"\(coordinate(left - 6))\" y=\"\(coordinate(y + 4))\" text-anchor=\"end\" font-size=\"12\" "
            + "fill=\"#333333\">\(Markup.escape(label))</text>\n"
    }

    /// The target of a rate chart: a dashed line across the plot, labelled at its right end (`target 99.5 %`).
    static func targetLine(y: Double, percent: Double) -> String {
        // The label sits above the line, or below it when the line is at the top of the plot (a 100 % target), far
        // enough down that the phone's larger text (23 units) clears the line too.
        let labelY = y - 5 < top + 10 ? y + 26 : y - 5
        return "<line class=\"chart-target\" x1=\"\(coordinate(left))\" y1=\"\(coordinate(y))\" "
            + "x2=\"\(coordinate(width - right))\" y2=\"\(coordinate(y))\" stroke=\"#8a1c12\" stroke-width=\"1.5\" "
            + "stroke-dasharray=\"6 4\"/>\n"
            + "<text x=\"\(coordinate(width - right))\" y=\"\(coordinate(labelY))\" text-anchor=\"end\" "
            + "font-size=\"12\" fill=\"#8a1c12\">target \(Markup.escape(Format.trimmed(percent, places: 2))) %</text>\n"
    }

    /// The first, middle and last labels under the x axis.
    static func xLabels(_ labels: [String], position: (Int) -> Double) -> String {
        guard !labels.isEmpty else { return "" }
        let y = coordinate(height - bottom + 20)
        var picks: [(Int, String)] = [(0, "start")]
        if labels.count > 2 { picks.append((labels.count / 2, "middle")) }
        if labels.count > 1 { picks.append((labels.count - 1, "end")) }
        return picks.map { index, anchor in
            "<text x=\"\(coordinate(position(index)))\" y=\"\(y)\" "
                + "text-anchor=\"\(labels.count <= 1 ? "middle" : anchor)\" font-size=\"12\" fill=\"#333333\">"
                + "\(Markup.escape(labels[index]))</text>\n"
        }.joined()
    }

    static func noData(text: String = "No data") -> String {
        "<text x=\"\(coordinate(left + plotWidth / 2))\" y=\"\(coordinate(top + plotHeight / 2))\" "
            + "text-anchor=\"middle\" font-size=\"16\" fill=\"#333333\">\(Markup.escape(text))</text>\n"
    }
}
