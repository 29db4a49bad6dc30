/// Where reports go and with which key: `http(s)://KEY@HOST[:PORT][/PREFIX]/PROJECT`, as Sentry DSNs look.
///
/// The native routes find the project by the key, so `PROJECT` is
/// kept only to show it; `PREFIX` is a path a reverse proxy may put in front of the server.
package struct DSN: Sendable, Equatable {
    /// `scheme://host[:port][/prefix]`, without a trailing slash.
    package var baseURL: String
    /// The project's ingest key (sent as `Authorization: Bearer KEY`).
    package var key: String
    package var projectID: String?

    /// Parses a DSN; throws `invalidDSN` naming what is wrong.
    ///
    /// A Sentry-style `KEY:SECRET@` keeps only `KEY`. The last path segment is the project; the segments before
    /// it are the prefix. Query strings and fragments are refused (they would be silently lost otherwise).
    package init(_ text: String) throws {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty else { throw Self.invalid(text, "it is empty") }
        guard let schemeEnd = trimmed.range(of: "://") else {
            throw Self.invalid(text, "it needs a scheme: http://KEY@HOST[:PORT]/PROJECT")
        }
        let scheme = trimmed[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw Self.invalid(text, "the scheme must be http or https, not '\(scheme)'")
        }
        let rest = trimmed[schemeEnd.upperBound...]
        guard !rest.contains("?"), !rest.contains("#") else {
            throw Self.invalid(text, "it may not have a query string or a fragment")
        }
        guard !rest.contains(where: { $0 == " " || $0 == "\t" || $0 == "\\" }) else {
            throw Self.invalid(text, "it may not contain spaces or backslashes")
        }
        let authority: Substring
        let path: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        } else {
            authority = rest
            path = ""
        }
        guard let at = authority.lastIndex(of: "@") else {
            throw Self.invalid(text, "it has no key: put the project's ingest key before the host, KEY@HOST")
        }
        let userInfo = authority[..<at]
        let key =
            userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        guard !key.isEmpty else {
            throw Self.invalid(text, "it has no key: put the project's ingest key before the host, KEY@HOST")
        }
        guard key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw Self.invalid(text, "the key may only hold printable ASCII")
        }
        let hostPort = authority[authority.index(after: at)...]
        var host = hostPort
        var port: Substring?
        if hostPort.hasPrefix("[") {
            // An IPv6 literal: [::1]:8080
            guard let close = hostPort.firstIndex(of: "]") else { throw Self.invalid(text, "the IPv6 host has no ']'") }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw Self.invalid(text, "unexpected text after the IPv6 host") }
                port = after.dropFirst()
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<colon]
            port = hostPort[hostPort.index(after: colon)...]
        }
        guard !host.isEmpty, host != "[]" else { throw Self.invalid(text, "it has no host") }
        guard !host.contains("@") else { throw Self.invalid(text, "the host may not contain '@'") }
        if let port {
            guard !port.isEmpty, port.utf8.count <= 5, port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let number = Int(port), (1...65535).contains(number)
            else { throw Self.invalid(text, "the port must be a number from 1 to 65535") }
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let project = segments.last.map(String.init)
        let prefix = segments.dropLast().joined(separator: "/")
        var base = scheme + "://" + String(hostPort)
        if !prefix.isEmpty { base += "/" + prefix }
        self.baseURL = base
        self.key = key
        self.projectID = project
    }

    private static func invalid(_ text: String, _ why: String) -> SDKError {
        // The key is a secret of sorts: never echo the DSN itself.
        SDKError(.invalidDSN, "invalid DSN: \(why)")
    }
}

extension String {
    func trimmingASCIIWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r") }) else {
            return ""
        }
        let last = scalars.lastIndex(where: { !($0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r") }) ?? first
        return String(scalars[first...last])
    }
}
