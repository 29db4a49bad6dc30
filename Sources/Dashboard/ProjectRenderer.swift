import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders one project's pages: reads what the pages need, renders each page, writes it and forgets it.
///
/// Only the project-wide lists (issue summaries, releases, alerts) are held for the whole render; an issue's detail
/// and sample event are read, rendered and dropped one issue at a time.
struct ProjectRenderer {
    typealias Writer = @Sendable (String, String) async throws -> Void

    /// What the project-wide pages show, read once.
    struct Snapshot {
        var trend30: HealthTrend
        var trend90: HealthTrend
        var today: ReleaseHealth
        var releases: [ReleaseRow]
        var top: [(window: TopIssueWindow, issues: [TopIssue])]
        /// The rows of the first issue-list page.
        var issues: [IssueSummary]
        var alerts: [Alert]
        var counts: [IssueStatus: Int]
        var missing: [MissingDebugFileSummary]
        /// How many issues are listed (at most `Limits.issues`).
        var listedCount: Int
        /// Issues that have (or get, in a full render) a page: listed ones and those of every ranking.
        var issueIDs: Set<IssueID>
        /// The top issues of the releases compared on the releases page, filled as their pages are rendered.
        var releaseTop: [String: [TopIssue]] = [:]
        /// The user-days of the compared releases in the last 7 days (their users' adoption), filled likewise.
        var releaseUserDays: [String: Int] = [:]
        /// Whether the project has had a hang issue (then hangs are ranked apart on the overview and release pages).
        var hasHangs = false
        var releaseNames: Set<String> { Set(releases.map(\.release)) }
    }

    let templates: TemplateSet
    let limits: SiteRenderer.Limits
    let sources: DashboardSources
    let project: Project
    let now: Date
    let since: Date?
    /// Where people reach the server (`SiteRenderer.publicURL`): issue pages link back to themselves from the tracker
    /// issues they prefill; nil leaves the link out.
    var publicURL: String? = nil
    /// Files written so far.
    private(set) var written = 0

    init(
        templates: TemplateSet, limits: SiteRenderer.Limits, sources: DashboardSources, project: Project, now: Date,
        since: Date?
    ) {
        self.templates = templates
        self.limits = limits
        self.sources = sources
        self.project = project
        self.now = now
        self.since = since
    }

    private var slug: ProjectSlug { project.slug }
    private var today: DayNumber { DayNumber(now) }

    /// The issue pages a render still has to make after the summary pages: every listed or ranked issue (a full
    /// render) or the issues changed since the last render, with their versions now (a full render without a
    /// ledger reads none: every page is rendered).
    struct PendingIssues {
        var ids: [IssueID]
        var versions: [IssueID: IssueVersion]
        var releases: Set<String>
        /// The trending issues (their pages carry the mark; their versions fold in the alert).
        var marks = TrendingMarks()
    }

    /// Renders the project's summary pages (releases, overview, first issue-list page, releases list, alerts,
    /// missing debug files); returns the index entry and the issue pages to render afterwards. A full render reads
    /// the versions of the issues it lists when `versions` (there is a ledger to compare them with: pages current
    /// since before a restart are not rendered again).
    mutating func renderSummary(versions: Bool, write: Writer) async throws -> (ProjectIndexPage.Entry, PendingIssues) {
        var snapshot = try await read()
        for (index, row) in snapshot.releases.enumerated() {
            let (top, daily) = try await renderRelease(row, snapshot: snapshot, write: write)
            snapshot.issueIDs.formUnion(top.map(\.issue.id))
            if index < ReleaseComparison.defaultCount {
                snapshot.releaseTop[row.release] = top
                snapshot.releaseUserDays[row.release] =
                    HealthTrend.make(series: daily.days, last: today, length: 7).userDays.users
            }
        }
        try await renderProjectPages(snapshot, write: write)
        let marks = TrendingMarks(snapshot.alerts, now: now)
        var pending = PendingIssues(
            ids: snapshot.issueIDs.sorted(), versions: [:], releases: snapshot.releaseNames, marks: marks)
        if let since {
            pending.versions = try await sources.insights.issueVersions(project: project.id, changedSince: since)
            // An issue whose velocity alert fired since then changed what its page shows, not the issue.
            let alerted = marks.issues(since: since).filter { pending.versions[$0] == nil }
            if !alerted.isEmpty {
                pending.versions.merge(
                    try await sources.insights.issueVersions(of: alerted, project: project.id)
                ) { old, _ in old }
            }
            pending.ids = pending.versions.keys.sorted()
        } else if versions {
            pending.versions = try await sources.insights.issueVersions(of: pending.ids, project: project.id)
        }
        for (issue, version) in pending.versions { pending.versions[issue] = marks.version(version, of: issue) }
        let entry = ProjectIndexPage.Entry(
            slug: slug, today: snapshot.today, openIssues: snapshot.counts[.open] ?? 0, targets: project.targets)
        return (entry, pending)
    }

    /// Renders the pending issue pages, skipping those `ledger` says are current (same version; each is handed to
    /// `kept`), yielding between pages and stopping early when `stop` says so. Returns how many were rendered and
    /// skipped and whether all were done.
    mutating func renderIssues(
        _ pending: PendingIssues, ledger: IssuePageLedger?, write: Writer, kept: (String) -> Void,
        stop: @Sendable () -> Bool
    ) async throws -> (rendered: Int, skipped: Int, complete: Bool) {
        var rendered = 0
        var skipped = 0
        for issueID in pending.ids {
            if stop() { return (rendered, skipped, false) }
            let path = SitePaths.issue(slug, issueID)
            if let ledger, let version = pending.versions[issueID],
                ledger.isCurrent(path, .page(version), stamp: templates.stamp)
            {
                kept(path)
                skipped += 1
                continue
            }
            try await renderIssue(
                issueID, releases: pending.releases, marks: pending.marks, ledger: ledger, write: write)
            rendered += 1
            // Low priority: requests (which render the pages they ask for) and other work go first.
            await Task.yield()
        }
        return (rendered, skipped, true)
    }

    /// Reads the project-wide data.
    func read() async throws -> Snapshot {
        let insights = sources.insights
        let id = project.id
        // One read covers both windows and the windows before them (2 × 90 days).
        let series = try await insights.health(project: id, release: nil, from: today.adding(-179), through: today)
        let releases = try await insights.releases(project: id, now: now, limit: limits.releases)
        // A hang issue of any status, read from the hangs' partial index (`issues_hangs`): one entry at most.
        let hasHangs = try await !insights.issueIDs(matching: IssueQuery(project: id, category: .hang, limit: 1))
            .isEmpty
        var windows: [TopIssueWindow] = [.last24Hours, .last7Days]
        // The newest named release: a report without a release (`unknown`) never becomes the latest.
        if let latest = releases.first(where: { ReleaseName.isNamed($0.release) }) {
            windows.append(.release(latest.release))
        }
        var top: [(window: TopIssueWindow, issues: [TopIssue])] = []
        for window in windows {
            top.append((window, try await ranked(window, hasHangs: hasHangs)))
        }
        // The rows of the first list page; the ids alone of every listed issue (those a full render makes pages for).
        let listed = try await insights.issueIDs(matching: IssueQuery(project: id, limit: limits.issues))
        let issues = try await insights.issues(
            matching: IssueQuery(project: id, limit: min(limits.issues, max(1, limits.issuesPerPage))), now: now)
        return Snapshot(
            trend30: HealthTrend.make(series: series, last: today, length: 30),
            trend90: HealthTrend.make(series: series, last: today, length: 90),
            today: series.filter { $0.day == today }.reduce(ReleaseHealth()) { $0 + $1.health },
            releases: releases, top: top, issues: issues,
            alerts: try await insights.alerts(project: id, limit: limits.alerts),
            counts: try await insights.issueCounts(project: id),
            missing: try await sources.missingDebugFiles(id),
            listedCount: listed.count,
            issueIDs: Set(listed).union(issues.map(\.id)).union(top.flatMap { $0.issues.map(\.issue.id) }),
            hasHangs: hasHangs)
    }

    /// The top issues of `window`, each category ranked apart (at most `limits.topIssues` of each), crashes first: a
    /// non-fatal that reaches many users must not push a crash out of the ranking, nor a hang.
    func ranked(_ window: TopIssueWindow, hasHangs: Bool) async throws -> [TopIssue] {
        var top: [TopIssue] = []
        for category in TopIssueSection.categories(hasHangs: hasHangs) {
            top += try await sources.insights.topIssues(
                project: project.id, window: window, category: category, now: now, limit: limits.topIssues)
        }
        return top
    }

    /// Renders a release's page; returns its top issues (their pages must exist too) and its daily health.
    mutating func renderRelease(_ row: ReleaseRow, snapshot: Snapshot, write: Writer) async throws -> (
        top: [TopIssue], daily: HealthTrend
    ) {
        let window = TopIssueWindow.release(row.release)
        let top: [TopIssue]
        if let known = snapshot.top.first(where: { $0.window == window }) {
            top = known.issues
        } else {
            top = try await ranked(window, hasHangs: snapshot.hasHangs)
        }
        let daily = try await sources.insights.health(
            project: project.id, release: row.release, from: today.adding(-29), through: today)
        let trend = HealthTrend.make(series: daily, last: today, length: 30)
        let gate = try await sources.insights.releaseGate(
            project: project.id, release: row.release, baseline: nil,
            policy: ReleaseGatePolicy(targets: project.targets),
            now: now, releases: snapshot.releases)
        let page = ReleasePage(
            slug: slug, row: row, trend: trend, top: top,
            releases: snapshot.releaseNames, now: now, missing: snapshot.missing, targets: project.targets, gate: gate,
            trending: TrendingMarks(snapshot.alerts, now: now), hasHangs: snapshot.hasHangs)
        try await emit(SitePaths.release(slug, row.release), page, as: "release", write: write)
        return (top, trend)
    }

    /// Renders the overview, the issue list, the releases list, the alerts and the missing debug files.
    mutating func renderProjectPages(_ snapshot: Snapshot, write: Writer) async throws {
        let releases = snapshot.releaseNames
        let marks = TrendingMarks(snapshot.alerts, now: now)
        let overview = OverviewPage(
            .init(
                slug: slug, now: now, trend30: snapshot.trend30, trend90: snapshot.trend90, today: snapshot.today,
                top: snapshot.top, releases: snapshot.releases,
                alerts: Array(snapshot.alerts.prefix(limits.overviewAlerts)), counts: snapshot.counts,
                missingDebugFiles: snapshot.missing.count, renderedIssues: snapshot.issueIDs,
                renderedReleases: releases, privacy: project.privacy, minidumps: project.minidumps,
                targets: project.targets, trending: marks,
                quotaCounts: try await sources.quotaCounts(project.id, today.adding(-29)), quotas: project.quotas,
                hasHangs: snapshot.hasHangs))
        try await emit(SitePaths.overview(slug), overview, as: "overview", write: write)
        // The first page of the default list; every other list and page is served live (`SiteRenderer.issueListPage`).
        let perPage = max(1, limits.issuesPerPage)
        let paging = IssueListPaging(
            total: max(snapshot.counts.values.reduce(0, +), snapshot.listedCount), perPage: perPage, page: 1)
        let list = IssueListPage(
            slug: slug, path: SitePaths.issues(slug), request: IssueListRequest(),
            issues: Array(snapshot.issues.prefix(perPage)),
            paging: paging, releaseChoices: snapshot.releases.map(\.release), renderedReleases: releases,
            csrfValue: DashboardForms.csrfPlaceholder, now: now, trending: marks)
        try await emit(SitePaths.issues(slug), list, as: "issues", write: write)
        let releasesPage = ReleasesPage(
            slug: slug, releases: snapshot.releases, now: now, targets: project.targets, top: snapshot.releaseTop,
            userDays: snapshot.releaseUserDays,
            totalUserDays: HealthTrend.make(series: snapshot.trend30.days, last: today, length: 7).userDays.users)
        try await emit(SitePaths.releases(slug), releasesPage, as: "releases", write: write)
        let alerts = AlertsPage(
            slug: slug, alerts: snapshot.alerts, issues: snapshot.issueIDs, releases: releases, now: now,
            settings: try await sources.alertSettings(project.id))
        try await emit(SitePaths.alerts(slug), alerts, as: "alerts", write: write)
        let missing = MissingDebugFilesPage(slug: slug, missing: snapshot.missing, now: now)
        try await emit(SitePaths.missingDebugFiles(slug), missing, as: "missing_debug_files", write: write)
    }

    /// Renders one issue's page (a short "no longer exists" page when the issue is gone) and records in `ledger`
    /// the version it was rendered from.
    mutating func renderIssue(
        _ issueID: IssueID, releases: Set<String>, marks: TrendingMarks, ledger: IssuePageLedger?, write: Writer
    ) async throws {
        let path = SitePaths.issue(slug, issueID)
        guard let detail = try await sources.insights.issue(issueID, project: project.id, now: now) else {
            let survivor = try await sources.insights.replacement(of: issueID, project: project.id)
            try await emit(
                path, IssueGonePage(slug: slug, id: issueID, now: now, mergedInto: survivor), as: "issue_gone",
                mark: .gone, write: write)
            record(path, .gone, in: ledger)
            return
        }
        var event: (report: Report, symbols: SymbolicatedReport?)?
        if let sample = detail.samples.first { event = try await sources.event(sample) }
        var excerpts: [CodeLocation: SourceExcerpt] = [:]
        if let event {
            excerpts = await SampleEventView.sourceExcerpts(
                report: event.report, symbols: event.symbols, inApp: project.inApp, project: project.id,
                reader: sources.sourceContext)
        }
        var page = IssuePage(
            slug: slug, detail: detail, event: event, releases: releases, now: now, inApp: project.inApp,
            sourceExcerpts: excerpts, trending: marks.mark(issueID), tracker: project.tracker, publicURL: publicURL)
        let merged = try await sources.insights.mergedFingerprints(of: issueID)
        page.showMerged(merged)
        page.showDropped(
            try await sources.droppedEvents(
                project.id, [detail.grouping.fingerprint] + merged.compactMap { Fingerprint($0.fingerprint) }))
        let version = detail.version.map { marks.version($0, of: issueID) }
        try await emit(path, page, as: "issue", mark: version.map { .page($0) }, write: write)
        // A reader that knows no versions: the page is rendered again whenever asked for (never stale).
        record(path, version.map { .page($0) }, in: ledger)
    }

    /// Records in `ledger` what the page at `path` was rendered from; a page drawn with the "still being processed"
    /// notice, or from no known version, is not current (drawn again once the backlog is gone, or when asked for).
    private func record(_ path: String, _ entry: IssuePageLedger.Entry?, in ledger: IssuePageLedger?) {
        guard let ledger else { return }
        if templates.notice != nil {
            ledger.drewNotice(path)
        } else if let entry {
            ledger.record(path, entry)
        } else {
            ledger.forget(path)
        }
    }

    /// Renders and writes one page; an issue page ends with the mark of what it was rendered from (`mark`).
    private mutating func emit(
        _ path: String, _ model: Any, as template: String, mark: IssuePageLedger.Entry? = nil, write: Writer
    ) async throws {
        var html = try templates.render(model, as: template)
        // A page drawn with the "still being processed" notice carries no mark: it is never taken as current.
        if let mark, templates.notice == nil, let text = IssuePageMark(stamp: templates.stamp, entry: mark).text {
            html += text
        }
        try await write(path, html)
        written += 1
    }
}
