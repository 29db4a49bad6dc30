import Dashboard
import FaultlineCore
import FaultlineHTTP
import Formats
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The dashboard over the opened data: what it reads, and renders that publish into `site/` through `site` (one
/// publisher: atomic writes, never over a page a later render wrote).
extension Composition {
    /// What the dashboard reads, over this data folder.
    var dashboardSources: DashboardSources {
        let symbolication = symbolicationStore
        let projects = self.projects
        let load = loadEvent
        let alerts = alertStore
        var sources = DashboardSources(
            projects: { try await projects.all() }, insights: insights,
            missingDebugFiles: { try await symbolication.missingDebugFiles(project: $0, release: nil) },
            event: { summary in
                try await load(summary.eventID, summary.project).map { ($0.report, $0.symbols) }
            }, sourceContext: sourceContext,
            pendingReports: { try await symbolication.pendingCount(atMost: $0) })
        sources.alertSettings = { try await alerts.settings(project: $0) }
        let quotas = stores.quotas
        sources.quotaCounts = { try await quotas.quotaCounts(project: $0, from: $1) }
        sources.droppedEvents = { try await quotas.droppedEvents(project: $0, fingerprints: $1) }
        return sources
    }

    /// Renders the dashboard into `out` (default: this folder's `site/`); `since == nil` renders every page and
    /// removes pages of issues that no longer exist. Returns the pages written.
    public func render(with renderer: SiteRenderer, since: Date?, into out: String? = nil) async throws -> Int {
        try await renderCycle(with: renderer, since: since, into: out).pages
    }

    /// One render cycle: the summary pages first (`summariesWritten` is called then), then the issue pages changed
    /// since `since` whose pages are not current (``issuePages``; into `site/` only). The cycle stops before the next
    /// issue page once `stop` answers true (the caller decides why: newer data, a full disk) and says it is not
    /// complete. `since == nil` renders everything and, when complete, removes pages of issues that no longer exist
    /// (a full render cut short cannot tell them from pages it did not reach, so it removes nothing).
    public func renderCycle(
        with renderer: SiteRenderer, since: Date?, into out: String? = nil,
        summariesWritten: @escaping @Sendable () -> Void = {},
        stop: @escaping @Sendable () -> Bool = { false }
    ) async throws -> SiteRenderer.CycleResult {
        let writer = out.map { SitePublisher(root: $0) } ?? site
        // Issue pages drawn with the "still being processed" notice are not current: the first cycle after the
        // backlog is gone renders every issue page (an incremental one would leave the notice on issues that do not
        // change again). While reports still wait, cycles stay incremental.
        var noticeDrawn = false
        if out == nil, try await symbolicationStore.pendingCount(atMost: 1) == 0 {
            noticeDrawn = issuePages.takeNoticeDrawn()
        }
        let since = noticeDrawn ? nil : since
        let publish = writer.startRender()
        let written = WrittenPages()
        let cycle = SiteRenderer.Cycle(
            ledger: out == nil ? issuePages : nil, summariesWritten: summariesWritten, stopIssuePages: stop,
            issuePageKept: { written.insert($0) })
        let result = try await renderer.render(sources: dashboardSources, now: clock.now(), since: since, cycle: cycle)
        { path, html in
            try publish(path, html)
            written.insert(path)
        }
        if since == nil && result.complete { writer.removeStale(kept: written.paths) }
        if noticeDrawn && !result.complete { issuePages.keepNoticeDrawn() }
        return result
    }

    /// Renders one issue's page into this folder's `site/` now (after a change from the dashboard). A render
    /// cycle that started earlier and finishes later does not overwrite it (`PageGenerations`).
    func renderIssuePage(with renderer: SiteRenderer, project: Project, issue: IssueID) async throws {
        let publish = site.startRender()
        try await renderer.renderIssuePage(
            issue, of: project, sources: dashboardSources, now: clock.now(), ledger: issuePages,
            write: { try publish($0, $1) })
    }

    /// Makes the page of issue `issue` of project `slug` in `site/` current before it is served: rendered now
    /// when the issue changed since the page was rendered, left alone when current, nothing for an unknown project
    /// or issue (`SiteRenderer.refreshIssuePage`).
    public func currentIssuePage(with renderer: SiteRenderer, slug: ProjectSlug, issue: IssueID) async throws
        -> SiteRenderer.IssuePageRefresh
    {
        guard let project = try await projects.project(slug: slug) else { return .absent }
        let exists = site.exists(SitePaths.issue(project.slug, issue))
        let publish = site.startRender()
        return try await renderer.refreshIssuePage(
            issue, of: project, sources: dashboardSources, now: clock.now(), ledger: issuePages, pageExists: exists,
            write: { try publish($0, $1) })
    }

    /// The page served for issue `issue` of project `slug` when it has none (`currentIssuePage` answered `.absent`):
    /// "does not exist (yet)"; nil for an unknown project.
    func missingIssuePage(with renderer: SiteRenderer, slug: ProjectSlug, issue: IssueID) async throws -> String? {
        guard let project = try await projects.project(slug: slug) else { return nil }
        return try await renderer.missingIssuePage(issue, of: project, sources: dashboardSources, now: clock.now())
    }

    /// The server-rendered search and event pages over this data folder, rendered with `renderer`.
    func searchPages(_ renderer: SiteRenderer) -> SearchPages {
        let search = searchStore
        let load = loadEvent
        let reader = self.reader
        let clock = clock
        let sourceContext = self.sourceContext
        return SearchPages(
            search: { project, query, text, page, error in
                var results: SearchResults?
                if let text {
                    results = try await search.search(
                        text, project: project.id, page: page, pageSize: SiteRenderer.searchPageSize, now: clock.now())
                }
                return try renderer.searchPage(
                    project: project, query: query, results: results, page: page, error: error)
            },
            event: { project, id in
                guard let event = try await load(id, project.id) else { return nil }
                let neighbours = try await Self.neighbours(of: id, issue: event.issue, project: project.id, reader)
                return try await renderer.eventPage(
                    project: project, eventID: id.rawValue, event: event, sourceContext: sourceContext,
                    neighbours: neighbours)
            },
            eventMissing: { project, id in try await renderer.eventPage(project: project, eventID: id, event: nil) },
            maxPage: SiteRenderer.searchMaxPage)
    }

    /// The events beside `event` among its issue's, in the read API's order (the report cursor, newest first): four
    /// keyset reads of one row each on `reports_by_issue_id`, whatever the issue's size. Nil for an event without
    /// an issue yet.
    static func neighbours(of event: EventID, issue: IssueID?, project: ProjectID, _ reader: AnyReportReader)
        async throws -> IssueEventNeighbours?
    {
        guard let issue, let cursor = try await reader.rawReport(eventID: event, project: project)?.summary.cursor
        else { return nil }
        func first(before: Int64? = nil, after: Int64? = nil) async throws -> EventID? {
            try await reader.reports(
                matching: ReportQuery(project: project, issue: issue, before: before, after: after, limit: 1)
            ).first?.eventID
        }
        return IssueEventNeighbours(
            newest: try await first(), newer: try await first(after: cursor), older: try await first(before: cursor),
            oldest: try await first(after: 0))
    }

    /// The dashboard renderer over the templates in `webDirectory`, stamped with ``programBuild``.
    public func siteRenderer(webDirectory: String) throws -> SiteRenderer {
        try SiteRenderer(webDirectory: webDirectory, build: Self.programBuild)
    }

    /// What names this program in the issue pages' marks (`SiteRenderer.stamp`): its GNU build-id, the same for the
    /// same binary on every node sharing a site folder and new with every build; the file's identity
    /// (`SiteRenderer.programIdentity`) when it has none.
    static let programBuild: String = {
        if let id = try? ELFReader.inspect(FileByteSource(path: "/proc/self/exe")).buildID {
            return "build-id " + id.rawValue
        }
        return SiteRenderer.programIdentity
    }()

    /// Where the dashboard templates are: `FAULTLINE_WEB`, else `web/` beside the working directory or up from the
    /// executable (`.build/<config>/faultline` → the checkout's `web/`). nil when none is found.
    public static func locateWebDirectory(executable: String = CommandLine.arguments.first ?? "") -> String? {
        var candidates: [String] = []
        if let env = ProcessInfo.processInfo.environment["FAULTLINE_WEB"], !env.isEmpty { candidates.append(env) }
        candidates.append(FileManager.default.currentDirectoryPath + "/web")
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(dir.appendingPathComponent("web").path)
            dir = dir.deletingLastPathComponent()
        }
        return candidates.first { FileManager.default.fileExists(atPath: $0 + "/templates") }
    }
}

/// The set of pages one render wrote (collected from the writer callback).
final class WrittenPages: Sendable {
    private let written = Mutex<Set<String>>([])
    func insert(_ path: String) {
        _ = written.withLock { $0.insert(path) }
    }
    var paths: Set<String> { written.withLock { $0 } }
}
