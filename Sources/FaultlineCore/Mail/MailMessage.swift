#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An e-mail address as SMTP carries it (`MAIL FROM:<…>`, `RCPT TO:<…>`) and a header names it: `local@domain`.
///
/// 3 to 254 bytes of printable ASCII with exactly one `@` and something on both sides; none of the characters that
/// would end the address or start another part of a command or header (space, `<`, `>`, `(`, `)`, `,`, `;`, `:`,
/// `\`, `"`, `[`, `]`). A person's login that is not such an address gets no mail.
public struct MailAddress: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init?(rawValue: String) {
        let bytes = Array(rawValue.utf8)
        guard (3...254).contains(bytes.count) else { return nil }
        let forbidden = Set("<>(),;:\\\"[] ".utf8)
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) && !forbidden.contains($0) }) else { return nil }
        let ats = bytes.indices.filter { bytes[$0] == UInt8(ascii: "@") }
        guard ats.count == 1, let at = ats.first, at > 0, at < bytes.count - 1 else { return nil }
        self.rawValue = rawValue
    }
    public init?(_ value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
    /// The part after the `@`.
    public var domain: Substring { rawValue[rawValue.index(after: rawValue.firstIndex(of: "@")!)...] }
}

/// What a mail says: a subject, the plain text and the same as HTML.
public struct MailContent: Sendable, Equatable {
    public var subject: String
    public var text: String
    public var html: String
    public init(subject: String, text: String, html: String) {
        self.subject = subject
        self.text = text
        self.html = html
    }
}

/// Builds RFC 5322 messages: `multipart/alternative` with a plain-text and an HTML part, each UTF-8 in base64 (so
/// no line of any part is long and no byte of a report can end the message or a part), CRLF line ends.
public enum MailMessage {
    /// A `Message-ID` for one alert and one recipient, the same on every attempt: a receiver (or a person) sees a
    /// retried mail as the same mail. The recipient appears only as an FNV-1a hash.
    public static func messageID(kind: String, id: Int64, recipient: MailAddress, domain: Substring) -> String {
        "<faultline.\(kind).\(id).\(hex(fnv1a(Array(recipient.rawValue.utf8))))@\(domain)>"
    }

    /// The message's bytes.
    /// - Parameter headers: more header fields (`List-Unsubscribe`); names and values with CR or LF are dropped.
    public static func compose(
        from: MailAddress, fromName: String, to: MailAddress, content: MailContent, messageID: String, date: Date,
        headers: [(String, String)] = []
    ) -> [UInt8] {
        let boundary = "faultline-\(hex(fnv1a(Array(messageID.utf8))))"
        var lines = [
            "From: \(encodedWord(fromName)) <\(from)>",
            "To: <\(to)>",
            "Subject: \(encodedWord(content.subject))",
            "Date: \(rfc5322Date(date))",
            "Message-ID: \(messageID)",
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
        ]
        for (name, value) in headers where !(name + value).contains(where: { $0 == "\r" || $0 == "\n" }) {
            lines.append("\(name): \(value)")
        }
        lines += [
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
            "--\(boundary)",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ]
        lines += base64Lines(Array(content.text.utf8))
        lines += ["--\(boundary)", "Content-Type: text/html; charset=utf-8", "Content-Transfer-Encoding: base64", ""]
        lines += base64Lines(Array(content.html.utf8))
        lines += ["--\(boundary)--", ""]
        return Array(lines.joined(separator: "\r\n").utf8)
    }

    /// `text` as a header value: itself when it is printable ASCII, else RFC 2047 encoded words (UTF-8, base64),
    /// split on character boundaries so that no encoded word is longer than 75 characters. CR and LF become spaces.
    public static func encodedWord(_ text: String) -> String {
        let flat = String(text.map { $0 == "\r" || $0 == "\n" || $0 == "\r\n" ? " " : $0 }.prefix(300))
        if flat.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) { return flat }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in flat {
            let bytes = Array(String(character).utf8)
            if chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(base64(chunk))?=")
                chunk = []
            }
            chunk += bytes
        }
        if !chunk.isEmpty { words.append("=?UTF-8?B?\(base64(chunk))?=") }
        return words.joined(separator: "\r\n ")
    }

    /// `date` as RFC 5322 writes it, in UTC: `Sun, 29 Nov 2026 10:17:31 +0000`.
    public static func rfc5322Date(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = civil(days)
        let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(weekday), \(day) \(months[Int(month - 1)]) \(year) \(two(secondOfDay / 3600)):"
            + "\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) +0000"
    }

    /// Year, month and day of a day number since 1970-01-01 (Howard Hinnant's `civil_from_days`).
    static func civil(_ z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        var lines: [String] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 57)  // 57 bytes → 76 characters
            lines.append(base64(Array(bytes[start..<end])))
            start = end
        }
        return lines
    }

    /// `bytes` in base64 (RFC 4648, with padding), on one line.
    public static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let b0 = bytes[index]
            let b1 = index + 1 < bytes.count ? bytes[index + 1] : 0
            let b2 = index + 2 < bytes.count ? bytes[index + 2] : 0
            out.append(alphabet[Int(b0 >> 2)])
            out.append(alphabet[Int((b0 & 0x03) << 4 | b1 >> 4)])
            out.append(index + 1 < bytes.count ? alphabet[Int((b1 & 0x0F) << 2 | b2 >> 6)] : UInt8(ascii: "="))
            out.append(index + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : UInt8(ascii: "="))
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` escaped, for HTML text and attribute values.
    public static func html(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
