import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SiteRenderer {
    /// Renders one issue's page now, outside the render cycle: after a change made from the dashboard, so the
    /// page the browser is sent back to already shows it (the next cycle renders it again with everything else).
    ///
    /// - Parameters:
    ///   - issue: the issue; a "no longer exists" page is written when it is gone.
    ///   - project: its project.
    ///   - sources: where the data comes from.
    ///   - now: the time the page describes.
    ///   - write: stores the page (relative path, contents).
    public func renderIssuePage(
        _ issue: IssueID, of project: Project, sources: DashboardSources, now: Date,
        write: @escaping @Sendable (String, String) async throws -> Void
    ) async throws {
        var renderer = ProjectRenderer(
            templates: templates, limits: limits, sources: sources, project: project, now: now, since: nil)
        // The release links of the page point at rendered release pages only: the same list a full render uses.
        let releases = try await sources.insights.releases(project: project.id, now: now, limit: limits.releases)
        try await renderer.renderIssue(issue, releases: Set(releases.map(\.release)), write: write)
    }
}
