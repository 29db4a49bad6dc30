#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a webhook URL is not accepted as a target.
public struct WebhookTargetProblem: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not an absolute http(s) URL with a host, or it holds characters a URL may not.
        case invalidURL = "invalid_url"
        /// The host is, or resolves to, a loopback, private, link-local or otherwise internal address.
        case privateAddress = "private_address"
        /// The host name did not resolve.
        case unresolvable = "unresolvable_host"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// A webhook URL taken apart as far as the target rules need: the scheme and the host the client will connect to.
///
/// The host comes from Foundation's `URL`, the same parser the HTTP client uses, so the host checked here is the
/// host connected to (two parsers that disagree on `http://a\@b/` are a classic way around such checks). URLs
/// with user info, spaces, backslashes or non-ASCII characters are refused outright.
public struct WebhookTarget: Sendable, Equatable {
    /// `http` or `https`.
    public var scheme: String
    /// Lowercased; an IPv6 literal without its brackets.
    public var host: String

    public init(scheme: String, host: String) {
        self.scheme = scheme
        self.host = host
    }

    /// Parses `url`; throws ``WebhookTargetProblem`` (`invalidURL`) when it is not a plain http(s) URL with a host.
    public static func parse(_ url: String) throws(WebhookTargetProblem) -> WebhookTarget {
        let bad = WebhookTargetProblem(.invalidURL, "must be an absolute http:// or https:// URL with a host name")
        guard !url.isEmpty, url.utf8.count <= 2048 else { throw bad }
        if let character = url.first(where: { !(0x21..<0x7f).contains($0.asciiValue ?? 0) || $0 == "\\" }) {
            // Name it: a literal `…` copied from an example is the usual one, and "not a URL" alone does not say so.
            let code = character.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }
            let shown = character.isASCII ? "" : "\"\(character)\" "
            throw WebhookTargetProblem(
                .invalidURL,
                "holds \(shown)(\(code.joined(separator: " "))), which a URL may not: give the whole URL, not a shortened one"
            )
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(),
            scheme == "http" || scheme == "https",
            var host = parsed.host(percentEncoded: false)?.lowercased(), !host.isEmpty
        else { throw bad }
        guard parsed.user(percentEncoded: true) == nil, parsed.password(percentEncoded: true) == nil else {
            throw WebhookTargetProblem(.invalidURL, "must not hold a user name or password before the host")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        while host.hasSuffix(".") { host.removeLast() }
        guard !host.isEmpty else { throw bad }
        return WebhookTarget(scheme: scheme, host: host)
    }
}

/// Which IP addresses a webhook may not reach: everything that is not a public unicast address. Pure.
///
/// Refused: IPv4 `0.0.0.0/8`, `10/8`, `100.64/10` (CGNAT), `127/8`, `169.254/16`, `172.16/12`, `192.0.0/24`,
/// `192.0.2/24`, `192.168/16`, `198.18/15`, `198.51.100/24`, `203.0.113/24`, `224/4` (multicast), `240/4` and
/// broadcast; IPv6 `::`, `::1`, IPv4-mapped `::ffff:0:0/96` and IPv4-compatible `::/96`, `64:ff9b::/96` (NAT64),
/// `100::/64`, `2001:db8::/32`, `2002::/16` (6to4) and `2001::/32` (Teredo) when the IPv4 address inside is
/// refused, `fc00::/7` (unique local), `fe80::/10` (link-local), `fec0::/10`, `ff00::/8` (multicast).
public enum NetworkAddressRules {
    /// Whether `address` (4 or 16 bytes, network order) is one a webhook may not reach. Any other length is refused.
    public static func isPrivate(_ address: [UInt8]) -> Bool {
        switch address.count {
        case 4: return isPrivateIPv4(address)
        case 16: return isPrivateIPv6(address)
        default: return true
        }
    }

    static func isPrivateIPv4(_ a: [UInt8]) -> Bool {
        let (b0, b1, b2) = (a[0], a[1], a[2])
        switch b0 {
        case 0, 10, 127: return true
        case 100: return b1 & 0xc0 == 64  // 100.64.0.0/10
        case 169: return b1 == 254
        case 172: return b1 & 0xf0 == 16
        case 192: return (b1 == 0 && (b2 == 0 || b2 == 2)) || b1 == 168 || (b1 == 88 && b2 == 99)
        case 198: return b1 & 0xfe == 18 || (b1 == 51 && b2 == 100)
        case 203: return b1 == 0 && b2 == 113
        default: return b0 >= 224  // multicast 224/4, reserved 240/4, broadcast
        }
    }

    static func isPrivateIPv6(_ a: [UInt8]) -> Bool {
        let first10Zero = a[0..<10].allSatisfy { $0 == 0 }
        if first10Zero && a[10] == 0 && a[11] == 0 { return true }  // ::, ::1 and IPv4-compatible ::a.b.c.d
        if first10Zero && a[10] == 0xff && a[11] == 0xff { return true }  // IPv4-mapped ::ffff:a.b.c.d
        if a[0] == 0x00, a[1] == 0x64, a[2] == 0xff, a[3] == 0x9b, a[4..<12].allSatisfy({ $0 == 0 }) {
            return isPrivateIPv4(Array(a[12..<16]))  // NAT64 64:ff9b::/96
        }
        if a[0] == 0x01, a[1] == 0x00, a[2..<8].allSatisfy({ $0 == 0 }) { return true }  // discard 100::/64
        if a[0] == 0x20, a[1] == 0x01, a[2] == 0x0d, a[3] == 0xb8 { return true }  // documentation 2001:db8::/32
        if a[0] == 0x20, a[1] == 0x02 { return isPrivateIPv4(Array(a[2..<6])) }  // 6to4 2002::/16
        if a[0] == 0x20, a[1] == 0x01, a[2] == 0, a[3] == 0 {  // Teredo 2001::/32: the client address, inverted
            return isPrivateIPv4(a[12..<16].map { ~$0 })
        }
        if a[0] & 0xfe == 0xfc { return true }  // unique local fc00::/7
        if a[0] == 0xfe, a[1] & 0xc0 == 0x80 || a[1] & 0xc0 == 0xc0 { return true }  // fe80::/10 link-local, fec0::/10
        if a[0] == 0xff { return true }  // multicast
        return false
    }

    /// The bytes of a dotted-quad IPv4 literal (`127.0.0.1`), or nil. Only the strict four-decimal form; other
    /// spellings (`2130706433`, `0x7f.1`) are left to the resolver, whose answer is checked too.
    public static func parseIPv4(_ text: String) -> [UInt8]? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var out: [UInt8] = []
        for part in parts {
            guard (1...3).contains(part.utf8.count), part.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = UInt8(part)
            else { return nil }
            out.append(value)
        }
        return out
    }

    /// Why `target` may not be posted to, judging its host when it is an IP literal; nil when it may (a host
    /// name must still be resolved and every address checked). `localhost` and `*.localhost` are refused by name.
    public static func literalProblem(_ target: WebhookTarget) -> WebhookTargetProblem? {
        if target.host == "localhost" || target.host.hasSuffix(".localhost") {
            return refused(target.host)
        }
        if let v4 = parseIPv4(target.host), isPrivate(v4) { return refused(target.host) }
        return nil
    }

    /// The problem for a host that is or resolves to an internal address.
    public static func refused(_ host: String) -> WebhookTargetProblem {
        WebhookTargetProblem(
            .privateAddress,
            "\(host) is or resolves to a loopback, private, link-local or otherwise internal address; webhooks go to public "
                + "hosts only (start the server with --allow-private-webhooks to allow internal targets)")
    }
}
