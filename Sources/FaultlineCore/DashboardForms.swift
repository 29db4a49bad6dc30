/// What the rendered dashboard's forms and the server that answers them agree on.
///
/// The site is rendered once for everyone, but a CSRF token belongs to one login session: the renderer writes
/// ``csrfField`` into each form, and the server puts the session's token in its place when it serves the page.
public enum DashboardForms {
    /// The form field that carries the CSRF token.
    public static let csrfName = "csrf"
    /// The token's stand-in in rendered pages: only ever substituted inside this exact attribute text, which
    /// escaped report text cannot contain (it has no literal `"`).
    public static let csrfPlaceholder = "__FAULTLINE_CSRF__"
    /// The hidden input as the renderer writes it (`web/templates/issue.mustache` spells it out; the dashboard
    /// tests check that the rendered page holds exactly this).
    public static let csrfField = "<input type=\"hidden\" name=\"\(csrfName)\" value=\"\(csrfPlaceholder)\">"
    /// Statuses a person can set from an issue's page, in the order its buttons appear.
    public static let settableStatuses: [IssueStatus] = [.open, .closed, .muted]

    /// The optional form field naming the dashboard page to return to after the change (an issue list).
    public static let backName = "back"
    /// Longest `back` accepted, in bytes (a list's query string with the longest release, percent-encoded).
    public static let maxBackBytes = 16 * 1024

    /// The page to send the browser back to for a form's `back` value, or nil when it is not one of `project`'s
    /// dashboard lists: `/{slug}/issues.html`, `/{slug}/list` or `/{slug}/list?{query}` whose query holds only
    /// unreserved characters, `%XX` escapes, `=`, `&` and `+`. Anything else (another project, another host, `..`,
    /// a scheme, a fragment) is refused, so the redirect can never leave the project's dashboard.
    public static func returnPath(_ back: String?, project: ProjectSlug) -> String? {
        guard let back, back.utf8.count <= maxBackBytes else { return nil }
        let prefix = "/\(project.rawValue)/"
        guard back.hasPrefix(prefix) else { return nil }
        let rest = back.dropFirst(prefix.count)
        if rest == "issues.html" || rest == "list" { return back }
        guard rest.hasPrefix("list?") else { return nil }
        var query = Array(rest.dropFirst("list?".count).utf8)[...]
        while let byte = query.popFirst() {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "="),
                UInt8(ascii: "&"),
                UInt8(ascii: "+"):
                continue
            case UInt8(ascii: "%"):
                guard query.count >= 2,
                    query.prefix(2).allSatisfy({
                        ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102)
                    })
                else { return nil }
                query = query.dropFirst(2)
            default:
                return nil
            }
        }
        return back
    }
}
