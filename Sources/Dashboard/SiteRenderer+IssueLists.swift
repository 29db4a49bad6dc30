import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SiteRenderer {
    /// One page of one issue list of `project`, rendered live for `GET /{slug}/list?…`: the same page as the site's
    /// `issues.html`, for any status, kind, release and order, and any page of it.
    ///
    /// Three reads through `insights`: the list's size (`issueCount`) and this page's issues (`issues` with the page's
    /// offset), both filtered and ordered by the database, so a page costs the same on a small project as on a large
    /// one; the third, the project's newest alerts, gives the rows' trending marks. A page past the end of the list is an empty page that says so and links back to the last page.
    ///
    /// - Parameters:
    ///   - project: whose issues (the only project read).
    ///   - request: the list and page (``IssueListRequest/init(parameters:)`` checked the query).
    ///   - insights: where the issues come from.
    ///   - csrfToken: the login session's token for the rows' forms; nil writes the stand-in
    ///     (``DashboardForms/csrfPlaceholder``), which the server refuses, for a reader without a session.
    ///   - now: the time the signals (fresh…) are computed at.
    /// - Returns: the page's HTML.
    /// - Throws: what `insights` throws, or `DashboardError` when the template fails.
    public func issueListPage(
        project: Project, request: IssueListRequest, insights: any InsightsReader, csrfToken: String?, now: Date
    ) async throws -> String {
        let perPage = max(1, limits.issuesPerPage)
        let filter = request.filter
        let total = try await insights.issueCount(
            matching: filter.query(project: project.id, offset: 0, limit: perPage))
        let paging = IssueListPaging(total: total, perPage: perPage, page: request.page)
        var issues: [IssueSummary] = []
        if let offset = paging.offset, offset < total {
            issues = try await insights.issues(
                matching: filter.query(project: project.id, offset: offset, limit: perPage), now: now)
        }
        let releases = try await insights.releases(project: project.id, now: now, limit: limits.releases).map(\.release)
        // One read for the whole page: the trending marks of its rows.
        let marks = try await trendingMarks(of: project, insights: insights, now: now)
        let page = IssueListPage(
            slug: project.slug, path: SitePaths.issueList(project.slug), request: request, issues: issues,
            paging: paging,
            releaseChoices: releases, renderedReleases: Set(releases),
            csrfValue: csrfToken ?? DashboardForms.csrfPlaceholder,
            now: nil, trending: marks)
        return try templates.render(page, as: "issues")
    }
}
