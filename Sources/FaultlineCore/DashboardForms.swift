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
}
