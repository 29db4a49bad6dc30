import FaultlineCore

/// The forms on dashboard pages that change issues (the issue page's status buttons, note, tracker issue, merge and
/// unmerge, an issue list's row buttons), and taking them out of a page for a reader who may not use them (a viewer, a
/// public dashboard, a Basic-auth reader without a session): pages never show a control that would answer 403.
///
/// Every such form carries the CSRF placeholder (``DashboardForms/csrfPlaceholder``), which the server fills in for a
/// reader who may post it: a form is `<form` up to the next `</form>`, and one that holds the placeholder is taken out
/// whole. A new form is covered as soon as it is guarded. Report text cannot fake either tag: the templates escape
/// every `<` of it.
enum ActionForms {
    /// `html` without the forms that change issues.
    static func removed(from html: String) -> String {
        var out = ""
        out.reserveCapacity(html.utf8.count)
        var rest = html[...]
        while let start = rest.range(of: "<form"),
            let end = rest.range(of: "</form>", range: start.upperBound..<rest.endIndex)
        {
            out += rest[..<start.lowerBound]
            let form = rest[start.lowerBound..<end.upperBound]
            if !form.contains(DashboardForms.csrfPlaceholder) { out += form }
            rest = rest[end.upperBound...]
        }
        out += rest
        return out
    }

    /// Whether the request's reader may use the forms in `project`: a login session (the forms carry its CSRF token)
    /// whose requester may change issues there.
    static func allowed(_ context: AppRequestContext, project: ProjectID) -> Bool {
        guard context.adminSession != nil, let requester = context.requester else { return false }
        return Access.decide(requester, .changeIssues, project: project) == .allowed
    }
}
