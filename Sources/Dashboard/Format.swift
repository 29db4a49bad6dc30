import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Deterministic text for numbers, rates and times: the same input gives the same bytes on every machine and in
/// every locale (no formatter, no time zone database), so pages and charts can be compared in tests.
enum Format {
    /// `value` with exactly `places` decimals (half away from zero), e.g. `fixed(2.345, places: 1) == "2.3"`.
    static func fixed(_ value: Double, places: Int) -> String {
        guard value.isFinite else { return "0" }
        var scale: Int64 = 1
        for _ in 0..<places { scale *= 10 }
        let magnitude = (abs(value) * Double(scale)).rounded()
        guard magnitude < 9.0e15 else { return String(Int64(value.rounded())) }
        let scaled = Int64(magnitude)
        let whole = scaled / scale
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if places > 0 {
            let fraction = String(scaled % scale)
            text += "." + String(repeating: "0", count: places - fraction.count) + fraction
        }
        return text
    }

    /// At most `places` decimals, trailing zeros dropped: `3`, `3.5`, `3.25` (SVG coordinates, thresholds).
    static func trimmed(_ value: Double, places: Int = 2) -> String {
        var text = fixed(value, places: places)
        // Bytes, not `contains(".")`: with Foundation imported that is `range(of:)` through CFString, which was
        // ~2.6 % of rendering issue pages (their charts write a few hundred coordinates each).
        if text.utf8.contains(UInt8(ascii: ".")) {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// `count` and the noun, singular or plural: `1 session`, `625 sessions`.
    static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(count) \(count == 1 ? singular : plural ?? singular + "s")"
    }

    /// Crash-free sessions with the counts they come from: `99.52 % (3 of 625 sessions crashed)`, or
    /// `no data (0 sessions)`.
    static func crashFreeSessions(_ health: ReleaseHealth) -> String {
        guard let rate = health.crashFreeSessions else { return "no data (0 sessions)" }
        return "\(formatRate(rate)) (\(health.crashedSessions) of \(count(health.sessions, "session")) crashed)"
    }

    /// Crash-free users with the counts they come from: `99.10 % (2 of 222 users crashed)`, or `no data (0 users)`.
    static func crashFreeUsers(_ health: ReleaseHealth) -> String {
        guard let rate = health.crashFreeUsers else { return "no data (0 users)" }
        return "\(formatRate(rate)) (\(health.crashedUsers) of \(count(health.users, "user")) crashed)"
    }

    /// Crash-free user-days (each day's users, summed over a window): `99.10 % (2 of 222 user-days crashed)`.
    static func crashFreeUserDays(_ health: ReleaseHealth) -> String {
        guard let rate = health.crashFreeUsers else { return "no data (0 users)" }
        return "\(formatRate(rate)) (\(health.crashedUsers) of \(count(health.users, "user-day")) crashed)"
    }

    /// A change in percentage points with its sign: `+0.12 pp`, `-1.50 pp`, `±0.00 pp`, or `no data`.
    static func pointChange(_ change: Double?) -> String {
        guard let change else { return "no data" }
        let text = fixed(abs(change), places: 2)
        if text == "0.00" { return "±0.00 pp" }
        return (change > 0 ? "+" : "-") + text + " pp"
    }

    /// A release's share of recent sessions with its counts: `12.50 % (50 of 400 sessions in the last 7 days)`.
    static func adoption(_ row: ReleaseRow) -> String {
        guard let adoption = row.adoption else { return "no data (no sessions in the last 7 days)" }
        guard adoption > 0 else { return "\(formatRate(0)) (0 sessions in the last 7 days)" }
        // The project's total is the one the share was computed from, so the text agrees with the percentage.
        let total = Int((Double(row.recentSessions) / adoption).rounded())
        return "\(formatRate(adoption)) (\(row.recentSessions) of \(count(total, "session")) in the last 7 days)"
    }

    /// `2026-11-22T05:08:09Z`: the machine-readable UTC time of a `<time datetime>`.
    static func isoTime(_ date: Date) -> String {
        let (day, seconds) = split(date)
        return "\(day)T\(pad(seconds / 3600)):\(pad(seconds / 60 % 60)):\(pad(seconds % 60))Z"
    }

    /// `2026-11-22 05:08 UTC`: the same time for people.
    static func displayTime(_ date: Date) -> String {
        let (day, seconds) = split(date)
        return "\(day) \(pad(seconds / 3600)):\(pad(seconds / 60 % 60)) UTC"
    }

    /// `05:08:41 UTC`: the time of day to the second (how fresh a "still being processed" notice is).
    static func clockTime(_ date: Date) -> String {
        let (_, seconds) = split(date)
        return "\(pad(seconds / 3600)):\(pad(seconds / 60 % 60)):\(pad(seconds % 60)) UTC"
    }

    private static func split(_ date: Date) -> (DayNumber, Int) {
        let day = DayNumber(date)
        let seconds = Int((date.timeIntervalSince1970 - day.start.timeIntervalSince1970).rounded(.down))
        return (day, min(max(seconds, 0), 86_399))
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    /// Bytes for people: `512 B`, `1.5 KiB`, `3.2 GiB`.
    static func bytes(_ value: UInt64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var amount = Double(value)
        var unit = 0
        while amount >= 1024, unit < units.count - 1 {
            amount /= 1024
            unit += 1
        }
        return unit == 0 ? "\(value) B" : "\(trimmed(amount, places: 1)) \(units[unit])"
    }

    /// `0x1a2b`.
    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16) }
}

/// A time as a page shows it: `<time datetime="{{iso}}">{{text}}</time>`.
struct TimeView {
    var iso: String
    var text: String
    init(_ date: Date) {
        iso = Format.isoTime(date)
        text = Format.displayTime(date)
    }
}
