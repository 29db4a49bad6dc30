import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SiteRenderer {
    /// Renders one issue's page now, outside the render cycle: after a change made from the dashboard, so the
    /// page the browser is sent back to already shows it (the next cycle skips it while its issue is unchanged,
    /// when `ledger` records the version it was rendered from).
    ///
    /// - Parameters:
    ///   - issue: the issue; a "no longer exists" page is written when it is gone.
    ///   - project: its project.
    ///   - sources: where the data comes from.
    ///   - now: the time the page describes.
    ///   - ledger: records the version the page was rendered from (nil: nothing recorded).
    ///   - write: stores the page (relative path, contents).
    public func renderIssuePage(
        _ issue: IssueID, of project: Project, sources: DashboardSources, now: Date, ledger: IssuePageLedger? = nil,
        write: @escaping @Sendable (String, String) async throws -> Void
    ) async throws {
        var templates = self.templates
        templates.notice = try await ProcessingNotice.read(sources, now: now)
        var renderer = ProjectRenderer(
            templates: templates, limits: limits, sources: sources, project: project, now: now, since: nil)
        renderer.publicURL = publicURL()
        // The release links of the page point at rendered release pages only: the same list a full render uses.
        let releases = try await releaseNames(of: project, sources: sources, now: now, ledger: ledger)
        let marks = try await trendingMarks(of: project, insights: sources.insights, now: now)
        try await renderer.renderIssue(issue, releases: releases, marks: marks, ledger: ledger, write: write)
    }

    /// The project's trending issues now: one read of its newest alerts (the same ones a summary render reads).
    func trendingMarks(of project: Project, insights: any InsightsReader, now: Date) async throws -> TrendingMarks {
        TrendingMarks(try await insights.alerts(project: project.id, limit: limits.alerts), now: now)
    }

    /// The page served (with a 404) for an issue number that has no issue and no page: "does not exist (yet)", with
    /// the "still being processed" notice while reports wait (one of them may become this issue).
    public func missingIssuePage(_ issue: IssueID, of project: Project, sources: DashboardSources, now: Date)
        async throws -> String
    {
        var templates = self.templates
        templates.notice = try await ProcessingNotice.read(sources, now: now)
        // A merged issue's number links to (and sends the browser on to) the issue it was merged into.
        let survivor = try await sources.insights.replacement(of: issue, project: project.id)
        return try templates.render(
            IssueGonePage(slug: project.slug, id: issue, now: now, notYet: true, mergedInto: survivor), as: "issue_gone"
        )
    }

    /// The release pages an issue page may link to: those of the last summary render, else read now.
    func releaseNames(of project: Project, sources: DashboardSources, now: Date, ledger: IssuePageLedger?) async throws
        -> Set<String>
    {
        if let known = ledger?.releaseNames(project.id) { return known }
        let releases = try await sources.insights.releases(project: project.id, now: now, limit: limits.releases)
        return Set(releases.map(\.release))
    }

    /// What ``refreshIssuePage(_:of:sources:now:ledger:pageExists:write:)`` did.
    public enum IssuePageRefresh: Sendable, Equatable {
        /// The page was rendered from the issue's version now already.
        case current
        /// The page was rendered now.
        case rendered
        /// No such issue, and no page of it to replace: nothing to serve.
        case absent
    }

    /// Makes an issue's page current before it is served: renders it when its issue changed since the page was
    /// rendered (or when `ledger` does not know the page), and leaves it alone when it is current. A request for
    /// an issue that does not exist renders nothing unless an old page of it is there (it becomes "no longer
    /// exists"), so asking for made-up numbers writes no files.
    ///
    /// - Parameters:
    ///   - issue: the issue asked for.
    ///   - project: its project (the issue is looked up in this project only).
    ///   - sources: where the data comes from.
    ///   - now: the time the page describes.
    ///   - ledger: the versions the site's issue pages were rendered from.
    ///   - pageExists: whether the site folder holds a page for the issue now.
    ///   - write: stores the page (relative path, contents).
    public func refreshIssuePage(
        _ issue: IssueID, of project: Project, sources: DashboardSources, now: Date, ledger: IssuePageLedger,
        pageExists: Bool, write: @escaping @Sendable (String, String) async throws -> Void
    ) async throws -> IssuePageRefresh {
        let path = SitePaths.issue(project.slug, issue)
        if let version = try await sources.insights.issueVersion(issue, project: project.id) {
            // The version folds in a velocity alert: a page rendered before the alert fired is not current.
            let marks = try await trendingMarks(of: project, insights: sources.insights, now: now)
            if pageExists, ledger.isCurrent(path, .page(marks.version(version, of: issue)), stamp: stamp) {
                return .current
            }
        } else {
            if !pageExists { return .absent }
            if ledger.isCurrent(path, .gone, stamp: stamp) { return .current }
        }
        try await renderIssuePage(issue, of: project, sources: sources, now: now, ledger: ledger, write: write)
        return .rendered
    }
}
