/// Typed identifiers. A bare `String` or `Int64` never crosses a module boundary as an id: the types
/// validate and normalise once, at the edge, so every layer below can trust them.

/// A project's numeric id (numeric so that Sentry DSNs, which require an integer, can name it).
public struct ProjectID: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public init(_ value: Int64) { self.rawValue = value }
    public var description: String { String(rawValue) }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public init(from decoder: any Decoder) throws {
        self.rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A project's short URL-safe name: lowercase letters, digits, `-` and `_`, 1–64 characters, starting
/// with a letter or digit.
public struct ProjectSlug: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    /// Validates `value`; returns nil when it is not a slug.
    public init?(_ value: String) {
        let bytes = Array(value.utf8)
        guard (1...64).contains(bytes.count), let first = bytes.first, Hex.isLowerAlnum(first) else { return nil }
        guard bytes.allSatisfy({ Hex.isLowerAlnum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") }) else {
            return nil
        }
        self.rawValue = value
    }
    public var description: String { rawValue }

    /// Top-level names the server and the rendered site use for themselves (`/api/…`, `/metrics`, `/login`…).
    /// A project may not take one as its slug: its dashboard lives at `/<slug>/`, and a slug equal to an open
    /// route would put the project's pages under that route (the dashboard guard lets those paths through).
    ///
    /// Existing projects are still read with such a slug (``init(_:)`` accepts it); only creating one is refused.
    public static let reserved: Set<String> = [
        "api", "buildid", "healthz", "metrics", "login", "logout",
        // Invite links (`/invite/<secret>`, issue #37): a person sets their password there before they can sign in.
        "invite",
        // The signed-in person's own page (`/account`: tokens, password, second factor).
        "account",
        // Signed unsubscribe links in alert mail and digests (`/unsubscribe/<token>`): they work without a login.
        "unsubscribe",
        // Kept for the dashboard's own pages (search, static files, administration), so adding one later
        // cannot collide with a project.
        "admin", "assets", "search", "static",
    ]

    /// Whether this slug is one of ``reserved``.
    public var isReserved: Bool { Self.reserved.contains(rawValue) }

    /// Why `value` cannot name a new project, or nil when it can.
    public static func problemForNewProject(_ value: String) -> String? {
        guard let slug = ProjectSlug(value) else {
            return
                "'\(value)' is not a slug: use 1–64 lowercase letters, digits, '-' or '_', starting with a letter or digit"
        }
        if slug.isReserved {
            return
                "'\(value)' is reserved for the server's own paths (\(reserved.sorted().joined(separator: ", "))): choose another slug"
        }
        return nil
    }
}

/// A client-chosen event id, normalised to 32 lowercase hex digits (the form Sentry uses).
///
/// Accepts a hyphenated UUID (`7077e450-fa6f-4594-850b-fed9428d1d98`) or 32 hex digits, any case.
/// Normalising matters: the same report retried with the other spelling must be recognised as a
/// duplicate, or it would be stored twice.
public struct EventID: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String
    public init?(_ value: String) {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for b in value.utf8 where b != UInt8(ascii: "-") {
            guard let lower = Hex.lowercasedHexDigit(b) else { return nil }
            out.append(lower)
        }
        guard out.count == 32 else { return nil }
        // Hyphens are only allowed in the canonical 8-4-4-4-12 places.
        if value.utf8.count != 32 {
            let hyphens = value.utf8.enumerated().filter { $0.element == UInt8(ascii: "-") }.map(\.offset)
            guard value.utf8.count == 36, hyphens == [8, 13, 18, 23] else { return nil }
        }
        self.rawValue = String(decoding: out, as: UTF8.self)
    }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A session id chosen by the client (usually a UUID); 1–128 printable ASCII characters, kept as sent
/// but lowercased so that the two spellings of a UUID are one session.
public struct SessionID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init?(_ value: String) {
        guard (1...128).contains(value.utf8.count), value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            return nil
        }
        self.rawValue = value.lowercased()
    }
    public var description: String { rawValue }
}

/// A GNU build-id: 1–64 bytes, written as lowercase hex. Paths on disk are derived from it, so it is
/// validated strictly (hex digits only, even length): a build-id can never contain `/` or `..`.
public struct BuildID: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: String
    public init?(_ value: String) {
        var out = [UInt8]()
        out.reserveCapacity(value.utf8.count)
        for b in value.utf8 {
            guard let lower = Hex.lowercasedHexDigit(b) else { return nil }
            out.append(lower)
        }
        guard out.count >= 2, out.count <= 128, out.count % 2 == 0 else { return nil }
        self.rawValue = String(decoding: out, as: UTF8.self)
    }
    /// Builds the id from the raw note bytes.
    public init?(bytes: some Collection<UInt8>) {
        self.init(Hex.encode(bytes))
    }
    public var description: String { rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// Hex helpers shared by the identifier types.
public enum Hex {
    static func lowercasedHexDigit(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): return b
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b + 32
        default: return nil
        }
    }
    static func isLowerAlnum(_ b: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b)
    }
    /// The lowercase hex digits, by value.
    static let digits = Array("0123456789abcdef".utf8)
    /// Lowercase hex of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: encodedBytes(bytes), as: UTF8.self)
    }
    /// Lowercase hex of `bytes`, as UTF-8 bytes.
    public static func encodedBytes(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return out
    }
    /// The bytes of hex `text` (digits of either case); nil for an odd length or another character.
    public static func bytes(_ text: some StringProtocol) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = lowercasedHexDigit(digits[index]).map(value),
                let low = lowercasedHexDigit(digits[index + 1]).map(value)
            else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
    /// The value of a lowercase hex digit.
    static func value(_ digit: UInt8) -> UInt8 {
        digit <= UInt8(ascii: "9") ? digit - UInt8(ascii: "0") : digit - UInt8(ascii: "a") + 10
    }
    /// Parses `0x`-prefixed or bare hex into a 64-bit value; nil on overflow or a non-hex digit.
    public static func parseUInt64(_ text: some StringProtocol) -> UInt64? {
        var s = Substring(text)
        if s.hasPrefix("0x") || s.hasPrefix("0X") { s = s.dropFirst(2) }
        guard !s.isEmpty, s.utf8.count <= 16 else { return nil }
        return UInt64(s, radix: 16)
    }
}
