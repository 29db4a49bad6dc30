import FaultlineCore

#if canImport(Glibc)
import Glibc
#endif
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
    /// Where people reach the server (`--public-url`, else its listen address), asked at each render: issue pages put
    /// it in the link back of the tracker issue they prefill (`TrackerLink`). Nil leaves that link out.
    public var publicURL: @Sendable () -> String? = { nil }

    /// Loads `<webDirectory>/templates/*.mustache` and `<webDirectory>/static/style.css`.
    ///
    /// - Parameters:
    ///   - webDirectory: the repository's `web` folder (or a copy of it).
    ///   - limits: how much each project's pages show.
    ///   - build: what identifies the program that renders (``programIdentity`` by default): issue pages rendered
    ///     by another build are rendered again rather than taken as current (``stamp``).
    /// - Throws: `DashboardError` naming the missing folder or file, or the template that does not parse.
    public init(webDirectory: String, limits: Limits = Limits(), build: String = SiteRenderer.programIdentity) throws {
        templates = try TemplateSet(webDirectory: webDirectory, build: build)
        self.limits = limits
    }

    /// What the issue pages this renderer writes name as their renderer (16 hex digits of the build and the
    /// templates): a server started again with the same program and templates takes the pages whose issue did not
    /// change as current (``IssuePageLedger``); after an upgrade or a template edit every page is rendered again.
    public var stamp: String { templates.stamp }

    /// The running program's file (device and inode), its size and its modification time (nanoseconds): a new build,
    /// or another program, differs. Unknown (no `/proc`) gives a value of its own each time, so nothing is taken as current.
    public static var programIdentity: String {
        var info = stat()
        guard stat("/proc/self/exe", &info) == 0 else { return "unknown \(UInt64.random(in: 0...UInt64.max))" }
        return "\(info.st_dev) \(info.st_ino) \(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)"
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
        /// Told the path of each issue page the cycle left alone because it is current: a full render keeps those
        /// pages as if it had written them (only pages of issues no longer listed are stale).
        public var issuePageKept: @Sendable (String) -> Void

        public init(
            ledger: IssuePageLedger? = nil, summariesWritten: @escaping @Sendable () -> Void = {},
            stopIssuePages: @escaping @Sendable () -> Bool = { false },
            issuePageKept: @escaping @Sendable (String) -> Void = { _ in }
        ) {
            self.ledger = ledger
            self.summariesWritten = summariesWritten
            self.stopIssuePages = stopIssuePages
            self.issuePageKept = issuePageKept
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
        /// The reports the pages said were still being processed (0: no notice drawn).
        public var processing: Int = 0
    }

    /// Renders like ``render(sources:now:since:write:)``, in two passes: first every project's summary pages and
    /// the index (what a refresh is looked at for), then the issue pages, at low priority, skipping those `cycle`'s
    /// ledger says are current and stopping when `cycle` says so (newer data waits, or the disk is full).
    public func render(
        sources: DashboardSources, now: Date, since: Date?, cycle: Cycle,
        write: @Sendable (String, String) async throws -> Void
    ) async throws -> CycleResult {
        var templates = self.templates
        templates.notice = try await ProcessingNotice.read(sources, now: now)
        try await write(SitePaths.stylesheet, templates.stylesheet)
        var written = 1
        var entries: [ProjectIndexPage.Entry] = []
        var pending: [(ProjectRenderer, ProjectRenderer.PendingIssues)] = []
        for project in try await sources.projects().sorted(by: { $0.slug.rawValue < $1.slug.rawValue }) {
            var renderer = ProjectRenderer(
                templates: templates, limits: limits, sources: sources, project: project, now: now, since: since)
            renderer.publicURL = publicURL()
            let (entry, issues) = try await renderer.renderSummary(versions: cycle.ledger != nil, write: write)
            entries.append(entry)
            written += renderer.written
            cycle.ledger?.setReleaseNames(issues.releases, of: project.id)
            pending.append((renderer, issues))
        }
        try await write(
            SitePaths.index, try templates.render(ProjectIndexPage(entries: entries, now: now), as: "index"))
        written += 1
        cycle.summariesWritten()
        var result = CycleResult(
            pages: written, summaryPages: written, issuePages: 0, issuePagesCurrent: 0, complete: true,
            processing: templates.notice?.pending ?? 0)
        for (renderer, issues) in pending {
            var renderer = renderer
            let before = renderer.written
            let done = try await renderer.renderIssues(
                issues, ledger: cycle.ledger, write: write, kept: cycle.issuePageKept, stop: cycle.stopIssuePages)
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
    ///   - singleSignOn: the OpenID provider's name, for a "Sign in with …" link; nil when single sign-on is off.
    /// - Throws: `DashboardError` when the template fails.
    public func loginPage(error: String?, next: String, singleSignOn: String? = nil) throws -> String {
        try templates.render(LoginPage(error: error, next: next, singleSignOn: singleSignOn), as: "login")
    }
}
