import FaultlineCore
import Hummingbird
import Pipeline

// The dashboard's merge and unmerge forms (`IssueMerge`), CSRF-guarded like the status and note forms.
extension IssueActionsController {
    /// Most bytes the merge form's list of issue numbers may have.
    static let maxMergeListBytes = 1000

    /// The issue numbers of the merge form's field: numbers separated by commas, spaces or `#`; nil when anything
    /// else is there, or a number is not positive.
    static func issueNumbers(_ text: String) -> [IssueID]? {
        guard text.utf8.count <= maxMergeListBytes else { return nil }
        var ids: [IssueID] = []
        for token in text.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "#" || $0.isNewline || $0 == "\t" }) {
            guard let value = Int64(token), value > 0 else { return nil }
            ids.append(IssueID(value))
        }
        return ids.isEmpty ? nil : ids
    }

    @Sendable func merge(_ request: Request, context: AppRequestContext) async throws -> Response {
        // The CSRF token and a list of numbers, percent-encoded (at most three bytes a character).
        let target = try await target(request, context: context, maxBytes: 4 * Self.maxMergeListBytes)
        guard let others = target.fields["issues"].flatMap(Self.issueNumbers) else {
            throw APIError.badRequest("name the issues to merge by their numbers, like 12, 15", field: "issues")
        }
        let result = try await issues.merge(
            others, into: target.issue, project: target.project.id, by: target.changer,
            origin: context.changeOrigin())
        // The merged issues' pages now send the browser to this one.
        for merged in result.merged { try? await refreshPage(target.project, merged) }
        return await back(to: target)
    }

    @Sendable func unmerge(_ request: Request, context: AppRequestContext) async throws -> Response {
        let target = try await target(request, context: context, maxBytes: 4096)
        guard let fingerprint = target.fields["fingerprint"], Fingerprint(fingerprint) != nil else {
            throw APIError.badRequest("send the merged fingerprint as the field fingerprint", field: "fingerprint")
        }
        _ = try await issues.unmerge(
            fingerprint: fingerprint, from: target.issue, project: target.project.id, origin: context.changeOrigin())
        return await back(to: target)
    }
}
