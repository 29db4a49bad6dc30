import FaultlineCore

/// A change against the window before, as an arrow with numbers (Crashlytics' trends): `▲ +9` with what it was.
///
/// The arrow is decoration (`aria-hidden`); `trendSpoken` says the direction in words for screen readers, and the
/// colour class says whether the change is good or bad for the reader (more users hit by an issue is bad, a higher
/// crash-free rate is good), never the direction alone.
struct TrendView {
    /// `▲`, `▼` or `=`.
    var trendArrow: String
    /// `up`, `down`, `unchanged`, `new` — read instead of the arrow.
    var trendSpoken: String
    /// `+9`, `-0.40 pp`, `new`.
    var trendChange: String
    /// `(3 users the 24 hours before)`, `(was 98.10 % (3 of 160 sessions crashed))`.
    var trendBefore: String
    /// `trend trend-worse`, `trend trend-better` or `trend trend-same`.
    var trendClass: String

    /// The trend of an issue's count in a window: `now` against `before` in the window before it.
    static func count(_ now: Int, before: Int, noun: String, window: String) -> TrendView {
        let was = "(\(Format.count(before, noun)) \(window) before)"
        if before == 0 && now > 0 {
            return TrendView(
                trendArrow: "▲", trendSpoken: "new", trendChange: "new", trendBefore: was,
                trendClass: "trend trend-worse")
        }
        if now == before {
            return TrendView(
                trendArrow: "=", trendSpoken: "unchanged", trendChange: "±0", trendBefore: was,
                trendClass: "trend trend-same")
        }
        let up = now > before
        let change = now.subtractingReportingOverflow(before).partialValue
        return TrendView(
            trendArrow: up ? "▲" : "▼", trendSpoken: up ? "up" : "down", trendChange: (up ? "+" : "") + String(change),
            trendBefore: was, trendClass: up ? "trend trend-worse" : "trend trend-better")
    }

    /// The trend of a crash-free rate: nil when either window has no data. `was` is the earlier rate with its
    /// counts (every percentage on the site comes with the counts it is made of).
    static func rate(now: Double?, before: Double?, was: String) -> TrendView? {
        guard let now, let before else { return nil }
        let change = (now - before) * 100
        let text = Format.pointChange(change)
        let from = "(was \(was))"
        if text == "±0.00 pp" {
            return TrendView(
                trendArrow: "=", trendSpoken: "unchanged", trendChange: text, trendBefore: from,
                trendClass: "trend trend-same")
        }
        let up = change > 0
        return TrendView(
            trendArrow: up ? "▲" : "▼", trendSpoken: up ? "up" : "down", trendChange: text, trendBefore: from,
            trendClass: up ? "trend trend-better" : "trend trend-worse")
    }
}
