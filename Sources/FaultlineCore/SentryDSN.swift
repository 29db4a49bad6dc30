/// The Sentry DSN of a project: `http://<ingest key>@host:port[/prefix]/<project id>`, what any Sentry SDK takes to
/// know where to send and with which key. Made by `faultline projects create|rotate-key` and the settings page's
/// rotation, from the server's public address.
public enum SentryDSN {
    /// The DSN for `key` of `project` on the server at `base` (`https://crashes.example.org[/prefix]`; a base without
    /// a scheme is taken as http).
    public static func string(base: String, key: String, project: ProjectID) -> String {
        var rest = Substring(base)
        var scheme = "http"
        if let range = base.firstRange(of: "://") {
            scheme = String(base[..<range.lowerBound])
            rest = base[range.upperBound...]
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        return "\(scheme)://\(key)@\(rest)/\(project.rawValue)"
    }
}
