import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Parses the timestamps clients send: RFC 3339 / ISO 8601 strings (`2026-11-22T05:08:09.152247Z`,
/// `+02:00` offsets, no zone = UTC) and unix seconds as numbers.
///
/// Hand-written rather than `Date.ISO8601FormatStyle` because it runs for every breadcrumb on the
/// ingest path and must accept both fractional and whole seconds and zone-less times in one pass.
public enum Timestamps {
    /// Parses an ISO 8601 date-time; nil when `text` is not one.
    public static func parseISO8601(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in i..<(i + n) {
                let d = Int(b[k]) - 48
                guard d >= 0, d <= 9 else { return nil }
                v = v * 10 + d
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(UInt8(ascii: "-")), let month = digits(2), expect(UInt8(ascii: "-")),
            let day = digits(2)
        else { return nil }
        guard i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: " ") else {
            return nil
        }
        i += 1
        guard let hour = digits(2), expect(UInt8(ascii: ":")), let minute = digits(2), expect(UInt8(ascii: ":")),
            let second = digits(2)
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            guard i > start else { return nil }
        }
        var offsetSeconds = 0
        if i < b.count {
            switch b[i] {
            case UInt8(ascii: "Z"), UInt8(ascii: "z"):
                i += 1
            case UInt8(ascii: "+"), UInt8(ascii: "-"):
                let sign = b[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = digits(2) else { return nil }
                _ = expect(UInt8(ascii: ":"))
                guard let om = digits(2) else { return nil }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            default:
                return nil
            }
        }
        guard i == b.count else { return nil }
        guard (1...12).contains(month), hour < 24, minute < 60, second <= 60 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        guard (1...monthDays).contains(day) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return Date(timeIntervalSince1970: seconds)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// Formats `date` as `2026-11-22T05:08:09.152Z` (UTC, milliseconds).
    public static func formatISO8601(_ date: Date) -> String {
        let raw = (date.timeIntervalSince1970 * 1000).rounded(.down)
        let totalMillis = raw.isFinite ? Int64(max(-9.0e15, min(9.0e15, raw))) : 0
        var days = totalMillis >= 0 ? totalMillis / 86_400_000 : (totalMillis - 86_399_999) / 86_400_000
        let millisOfDay = totalMillis - days * 86_400_000
        // civil from days (Hinnant)
        days += 719_468
        let era = (days >= 0 ? days : days - 146_096) / 146_097
        let doe = days - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        let y = yoe + era * 400 + (m <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let h = millisOfDay / 3_600_000
        let mi = millisOfDay / 60_000 % 60
        let s = millisOfDay / 1000 % 60
        let ms = millisOfDay % 1000
        return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(h, 2)):\(pad(mi, 2)):\(pad(s, 2)).\(pad(ms, 3))Z"
    }
}
