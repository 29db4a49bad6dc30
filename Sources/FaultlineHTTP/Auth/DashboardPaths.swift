import FaultlineCore

/// Which paths the dashboard guard leaves to the routes' own authentication, and which redirect targets are safe.
///
/// Whole path segments are matched, never prefixes: `/metrics` is the metrics route, `/metrics-app/…` is the
/// dashboard of a project slugged `metrics-app` and needs the admin token. Slugs equal to these names are refused
/// at creation (``ProjectSlug/reserved``), and site files are never served under them (``SiteFilesMiddleware``).
enum DashboardPaths {
    /// Routes that are exactly these paths.
    static let openExact: Set<String> = [
        "/healthz", "/metrics", "/login", "/logout", "/login/sso", "/login/sso/callback",
    ]
    /// Routes under these first segments (`/api/…`, `/buildid/…`, `/invite/…`), which authenticate by themselves.
    static let openFirstSegments: Set<String> = ["api", "buildid", "invite", "unsubscribe"]
    /// Site files anyone may fetch: the stylesheet the login page needs.
    static let publicFiles: Set<String> = ["/style.css"]

    /// Whether `path` (the request's path, as sent) is one of the routes that do their own authentication.
    static func isOpenRoute(_ path: String) -> Bool {
        if openExact.contains(path) { return true }
        guard path.hasPrefix("/") else { return false }
        let rest = path.dropFirst()
        let first = rest.prefix { $0 != "/" }
        return openFirstSegments.contains(String(first)) && rest.count > first.count
    }

    /// The first segment of `path` (`/api/v1/x` → `api`).
    static func firstSegment(_ path: String) -> Substring {
        path.drop { $0 == "/" }.prefix { $0 != "/" }
    }

    /// Whether `location` is a path on this server that a browser cannot read as another host: it starts with
    /// exactly one `/`, holds no backslash (browsers read `/\evil` as `//evil`) and only printable ASCII (no scheme
    /// can precede the first `/`).
    static func isLocalRedirect(_ location: String) -> Bool {
        guard location.hasPrefix("/"), !location.hasPrefix("//"), !location.contains("\\") else { return false }
        return location.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f }
    }

    /// `path` with `%XX` escapes decoded (`+` stays `+`); nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ path: String) -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count)
        var rest = Array(path.utf8)[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard rest.count >= 2, let value = UInt8(String(decoding: rest.prefix(2), as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(value)
            rest = rest.dropFirst(2)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
