import FaultlineCore
import Hummingbird
import Pipeline

// An issue list's merge form: the rows' checkboxes, merged into the oldest selected issue (decision 0072).
extension IssueActionsController {
    /// The issue numbers of a list's merge form: every `issues` field of `body` (one per checked row), in order, each
    /// once; nil when a value is not a positive number.
    static func selectedIssues(_ body: String) -> [IssueID]? {
        var ids: [IssueID] = []
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.first.flatMap(LoginController.percentDecode) == "issues" else { continue }
            guard kv.count == 2, let value = LoginController.percentDecode(kv[1]).flatMap({ Int64($0) }), value > 0
            else { return nil }
            if !ids.contains(IssueID(value)) { ids.append(IssueID(value)) }
        }
        return ids
    }

    /// `POST /{slug}/issues/merge` with `issues=12&issues=15…` and `back=` the list: merges the selected issues into
    /// the one with the lowest number (the oldest: its number is the one alerts, notes and tracker issues have named
    /// longest), then a 303 back to the list (``DashboardForms/returnPath(_:project:)``; the survivor's page when
    /// `back` is not a list of this project). Checked as every issue form is (session, CSRF token, role) before its
    /// fields are read; fewer than two issues is a 400 naming `issues`, and a refused merge (another project's issue,
    /// the overflow issue, more than `IssueMerge.maxOthers`) changes nothing.
    @Sendable func mergeSelected(_ request: Request, context: AppRequestContext) async throws -> Response {
        // The CSRF token, `back`, and the numbers (`issues=` and up to 19 digits each, at most maxOthers + 1).
        let maxBytes = DashboardForms.maxBackBytes + 4096 + (IssueMerge.maxOthers + 1) * 32
        let body = String(buffer: try await request.body.collect(upTo: maxBytes))
        let target = try await target(body, context: context) { body in
            guard let selected = Self.selectedIssues(body), let survivor = selected.min(),
                selected.count >= 2
            else {
                throw APIError.badRequest("select at least two issues of the list to merge", field: "issues")
            }
            return survivor
        }
        let others = (Self.selectedIssues(body) ?? []).filter { $0 != target.issue }
        let result = try await issues.merge(
            others, into: target.issue, project: target.project.id, by: target.changer,
            origin: context.changeOrigin())
        // The merged issues' pages now send the browser to the survivor.
        for merged in result.merged { try? await refreshPage(target.project, merged) }
        return await back(
            to: target,
            location: DashboardForms.returnPath(target.fields[DashboardForms.backName], project: target.slug))
    }
}
