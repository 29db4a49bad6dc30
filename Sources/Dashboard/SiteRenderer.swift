import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders the static dashboard: view models from the insights ports, HTML from the Mustache templates of `web/`.
///
/// Pages are made one at a time and handed to `write` as soon as they are ready, so a site of thousands of issues
/// never sits in memory. Every link is relative (see `SitePaths`). Event data is hostile: templates only use
/// escaped `{{value}}`, except for the SVG charts, which this module builds from numbers and escaped strings.
public struct SiteRenderer: Sendable {
    /// How much the site shows; larger numbers mean more pages and longer renders.
    public struct Limits: Sendable, Equatable {
        /// Issues given a page per project, most recently seen first.
        public var issues: Int
        /// Issues per page of an issue list: `issues.html` shows the first page of every issue (it is rewritten
        /// on every refresh, and a 5,000-row page alone took most of a refresh's summary pages), the lists served
        /// at `/{slug}/list` page the same way. Longer lists are paged, never cut.
        public var issuesPerPage: Int
        /// Releases listed (and given a page) per project, newest first.
        public var releases: Int
        /// Issues in each top-issues ranking.
        public var topIssues: Int
        /// Alerts listed on the alerts page (the overview shows the newest `overviewAlerts`).
        public var alerts: Int
        /// Alerts shown on a project's overview.
        public var overviewAlerts: Int

        /// The defaults suit a site of a few thousand issues per project.
        public init(
            issues: Int = 10_000, issuesPerPage: Int = 100, releases: Int = 50, topIssues: Int = 10, alerts: Int = 200,
            overviewAlerts: Int = 5
        ) {
            self.issues = issues
            self.issuesPerPage = issuesPerPage
            self.releases = releases
            self.topIssues = topIssues
            self.alerts = alerts
            self.overviewAlerts = overviewAlerts
        }
    }

    let templates: TemplateSet
    /// The limits every render uses.
    public var limits: Limits

    /// Loads `<webDirectory>/templates/*.mustache` and `<webDirectory>/static/style.css`.
    ///
    /// - Parameters:
    ///   - webDirectory: the repository's `web` folder (or a copy of it).
    ///   - limits: how much each project's pages show.
    /// - Throws: `DashboardError` naming the missing folder or file, or the template that does not parse.
    public init(webDirectory: String, limits: Limits = Limits()) throws {
        templates = try TemplateSet(webDirectory: webDirectory)
        self.limits = limits
    }

    /// Renders pages and hands each (relative path, contents) to `write`.
    ///
    /// `since == nil` renders everything. Otherwise only the pages that can have changed: the project index, each
    /// project's overview, first issue-list page, releases (the list and each release's page, whose daily numbers move),
    /// alerts and missing-debug-files pages, and the pages of the issues `insights.issuesChanged(project:since:)`
    /// names. `style.css` is written every time.
    ///
    /// - Parameters:
    ///   - sources: where the data comes from.
    ///   - now: the time the pages describe ("today", "last 24 hours").
    ///   - since: the start of the last render, for an incremental render.
    ///   - write: stores one file; paths use `/` and are relative to the site folder.
    /// - Returns: how many files were written (pages and the stylesheet).
    /// - Throws: what `sources` or `write` throw, or `DashboardError` when a template fails.
    public func render(
        sources: DashboardSources, now: Date, since: Date?,
        write: @Sendable (String, String) async throws -> Void
    ) async throws -> Int {
        try await render(sources: sources, now: now, since: since, cycle: Cycle(), write: write).pages
    }

    /// How a render cycle runs beside the server: which issue pages are current already, what to tell when the
    /// summary pages are done, and when to leave the rest of the issue pages to the next cycle.
    public struct Cycle: Sendable {
        /// The versions the site's issue pages were rendered from: pages still current are not rendered again, and
        /// every page rendered is recorded. Nil: render every pending page, record nothing.
        public var ledger: IssuePageLedger?
        /// Called once, when every summary page (index, overviews, lists, releases, alerts) is written and before
        /// any issue page.
        public var summariesWritten: @Sendable () -> Void
        /// Asked before each issue page: true leaves the remaining pages to a later cycle (newer data arrived, or the
        /// disk is too full to write them; the summary pages go first again, and a reader asking for an issue page
        /// gets it rendered then).
        public var stopIssuePages: @Sendable () -> Bool

        public init(
            ledger: IssuePageLedger? = nil, summariesWritten: @escaping @Sendable () -> Void = {},
            stopIssuePages: @escaping @Sendable () -> Bool = { false }
        ) {
            self.ledger = ledger
            self.summariesWritten = summariesWritten
            self.stopIssuePages = stopIssuePages
        }
    }

    /// What one render cycle did.
    public struct CycleResult: Sendable, Equatable {
        /// Files written (pages and the stylesheet).
        public var pages: Int
        /// Summary pages and the stylesheet written before any issue page.
        public var summaryPages: Int
        /// Issue pages rendered.
        public var issuePages: Int
        /// Changed issues whose pages were current already (rendered on request or after an action).
        public var issuePagesCurrent: Int
        /// False when the cycle left issue pages to a later one (``Cycle/stopIssuePages``).
        public var complete: Bool
    }

    /// Renders like ``render(sources:now:since:write:)``, in two passes: first every project's summary pages and
    /// the index (what a refresh is looked at for), then the issue pages, at low priority, skipping those `cycle`'s
    /// ledger says are current and stopping when `cycle` says so (newer data waits, or the disk is full).
    public func render(
        sources: DashboardSources, now: Date, since: Date?, cycle: Cycle,
        write: @Sendable (String, String) async throws -> Void
    ) async throws -> CycleResult {
        try await write(SitePaths.stylesheet, templates.stylesheet)
        var written = 1
        var entries: [ProjectIndexPage.Entry] = []
        var pending: [(ProjectRenderer, ProjectRenderer.PendingIssues)] = []
        for project in try await sources.projects().sorted(by: { $0.slug.rawValue < $1.slug.rawValue }) {
            var renderer = ProjectRenderer(
                templates: templates, limits: limits, sources: sources, project: project, now: now, since: since)
            let (entry, issues) = try await renderer.renderSummary(write: write)
            entries.append(entry)
            written += renderer.written
            cycle.ledger?.setReleaseNames(issues.releases, of: project.id)
            pending.append((renderer, issues))
        }
        try await write(
            SitePaths.index, try templates.render(ProjectIndexPage(entries: entries, now: now), as: "index"))
        written += 1
        cycle.summariesWritten()
        var result = CycleResult(pages: written, summaryPages: written, issuePages: 0, issuePagesCurrent: 0, complete: true)
        for (renderer, issues) in pending {
            var renderer = renderer
            let before = renderer.written
            let done = try await renderer.renderIssues(
                issues, ledger: cycle.ledger, write: write, stop: cycle.stopIssuePages)
            result.pages += renderer.written - before
            result.issuePages += done.rendered
            result.issuePagesCurrent += done.skipped
            if !done.complete {
                result.complete = false
                break
            }
        }
        return result
    }

    /// The sign-in page for the server's `/login`, with an optional error message.
    ///
    /// - Parameters:
    ///   - error: shown above the form (escaped), e.g. "That token is not valid."
    ///   - next: where to go after signing in; sent back in a hidden field (escaped), the server must validate it.
    /// - Throws: `DashboardError` when the template fails.
    public func loginPage(error: String?, next: String) throws -> String {
        try templates.render(LoginPage(error: error, next: next), as: "login")
    }
}
