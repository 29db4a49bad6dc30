/// The credentials a Sentry SDK sends with an event: the DSN's public key and a few client facts.
///
/// They arrive three ways (client-protocols.md §1.1): the `X-Sentry-Auth` header
/// (`Sentry sentry_key=KEY, sentry_version=7, sentry_client=sentry.python/2.75.0`), the same pairs in
/// `Authorization: Sentry …`, or as query parameters (`?sentry_key=KEY&sentry_version=7`, used by
/// sentry-native's minidump upload and browser SDKs). Keys may be written without the `sentry_` prefix;
/// unknown keys are ignored. Only the public key authenticates; `sentry_secret` is kept for callers
/// that want to refuse or log it (DSNs with a secret are deprecated).
public struct SentryAuth: Sendable, Equatable {
    /// The DSN's public key (the project's ingest key). 1–256 visible ASCII characters.
    public var publicKey: String
    /// `sentry_secret`, sent only by DSNs of the `KEY:SECRET@` form.
    public var secretKey: String?
    /// `sentry_version`, the protocol version (7 for every current SDK).
    public var version: String?
    /// `sentry_client`, e.g. `sentry.python/2.75.0` or `sentry-cli/x86_64`.
    public var client: String?

    public init(publicKey: String, secretKey: String? = nil, version: String? = nil, client: String? = nil) {
        self.publicKey = publicKey
        self.secretKey = secretKey
        self.version = version
        self.client = client
    }

    /// Parses an `X-Sentry-Auth` or `Authorization` header value: `Sentry ` and comma-separated `k=v` pairs.
    ///
    /// - Returns: nil when the value is not of the `Sentry` scheme or carries no valid `sentry_key`.
    public init?(header: String) {
        var text = Substring(header).drop { $0 == " " || $0 == "\t" }
        guard text.count >= 6, text.prefix(6).lowercased() == "sentry" else { return nil }
        text = text.dropFirst(6)
        // `Sentry` must be followed by whitespace (or nothing): `Sentryfoo=1` is another scheme.
        guard text.isEmpty || text.first == " " || text.first == "\t" else { return nil }
        var pairs: [(Substring, Substring)] = []
        for part in text.split(separator: ",") {
            let trimmed = part.trimmingSpacesAndTabs
            guard let eq = trimmed.firstIndex(of: "=") else { continue }
            var value = trimmed[trimmed.index(after: eq)...].trimmingSpacesAndTabs
            if value.count >= 2, value.first == "\"", value.last == "\"" { value = value.dropFirst().dropLast() }
            pairs.append((trimmed[..<eq].trimmingSpacesAndTabs, value))
        }
        self.init(pairs: pairs.map { (String($0.0), String($0.1)) })
    }

    /// Parses a URL query string (`sentry_key=KEY&sentry_version=7&…`, with or without the leading `?`),
    /// percent-decoding the values.
    ///
    /// - Returns: nil when the query carries no valid `sentry_key`.
    public init?(query: String) {
        self.init(pairs: Self.queryPairs(query))
    }

    /// The `name=value` pairs of a URL query string (with or without the leading `?`), percent-decoded; pairs
    /// without `=` or with a broken escape are left out.
    static func queryPairs(_ query: String) -> [(String, String)] {
        let text = query.hasPrefix("?") ? query.dropFirst() : Substring(query)
        var pairs: [(String, String)] = []
        for part in text.split(separator: "&") {
            let kv = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard kv.count == 2, let key = Self.percentDecoded(kv[0]), let value = Self.percentDecoded(kv[1]) else {
                continue
            }
            pairs.append((key, value))
        }
        return pairs
    }

    /// The credentials of a request: `X-Sentry-Auth` first, then `Authorization: Sentry …`, then the query.
    ///
    /// - Returns: nil when none of them holds a valid `sentry_key` (the caller answers 401).
    public static func from(xSentryAuth: String?, authorization: String?, query: String?) -> SentryAuth? {
        if let xSentryAuth, let auth = SentryAuth(header: xSentryAuth) { return auth }
        if let authorization, let auth = SentryAuth(header: authorization) { return auth }
        if let query, let auth = SentryAuth(query: query) { return auth }
        return nil
    }

    init?(pairs: [(String, String)]) {
        var key: String?
        var secret: String?
        var version: String?
        var client: String?
        for (rawName, value) in pairs {
            let name = rawName.lowercased()
            switch name.hasPrefix("sentry_") ? String(name.dropFirst(7)) : name {
            case "key": key = value
            case "secret": secret = value.isEmpty ? nil : value
            case "version": version = value.isEmpty ? nil : value
            case "client": client = value.isEmpty ? nil : value
            default: continue
            }
        }
        guard let key, Self.isValidKey(key) else { return nil }
        self.init(publicKey: key, secretKey: secret, version: version, client: client)
    }

    /// A key is 1–256 visible ASCII characters: anything else cannot be a key we issued, and refusing it
    /// here keeps control characters out of logs and lookups.
    static func isValidKey(_ key: String) -> Bool {
        (1...256).contains(key.utf8.count) && key.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }

    /// `%XX` escapes and `+` (a space in form encoding) decoded; nil for a broken escape or invalid UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let b = iterator.next() {
            switch b {
            case UInt8(ascii: "+"):
                out.append(0x20)
            case UInt8(ascii: "%"):
                guard let h = iterator.next().flatMap(Self.hexValue), let l = iterator.next().flatMap(Self.hexValue)
                else {
                    return nil
                }
                out.append(h << 4 | l)
            default:
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return b - 48
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return b - 87
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return b - 55
        default: return nil
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpacesAndTabs: Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return s
    }
}
