import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/index.html`: a project's health over 30 days, window totals, top issues, releases and latest alerts.
struct OverviewPage {
    /// Crash-free sessions of one window against the window before it.
    struct WindowSummary {
        var windowLabel: String
        var usersText: String
        var usersTrend: TrendView?
        var usersTarget: TargetMarkView
        var currentText: String
        var sessionsTrend: TrendView?
        var sessionsTarget: TargetMarkView
        var otherSessions: String
    }

    /// An in-page link to a top-issues section (the "tabs").
    struct Tab {
        var tabHref: String
        var tabLabel: String
    }

    /// The top issues of one kind (crashes, non-fatal errors): a section with its own heading, holding a ranking for
    /// each window. Kinds are ranked apart, so a non-fatal that reaches many users never outranks a crash.
    struct KindGroup {
        var kindAnchor: String
        var kindHeading: String
        var tabs: [Tab]
        var sections: [TopIssueSection]
    }

    /// Everything the page shows, gathered by the project renderer.
    struct Input {
        var slug: ProjectSlug
        var now: Date
        var trend30: HealthTrend
        var trend90: HealthTrend
        var today: ReleaseHealth
        /// Each window's rankings: every kind's ranking, one after the other (the page splits them by the issue's kind).
        var top: [(window: TopIssueWindow, issues: [TopIssue])]
        var releases: [ReleaseRow]
        var alerts: [Alert]
        var counts: [IssueStatus: Int]
        var missingDebugFiles: Int
        var renderedIssues: Set<IssueID>
        var renderedReleases: Set<String>
        /// The project's privacy settings (what ingest scrubs), shown so a reader knows what the data can hold.
        var privacy: PrivacySettings = PrivacySettings()
        /// How long the project keeps its minidumps, shown with the privacy settings (a dump holds raw stack memory).
        var minidumps: MinidumpRetention = .untilProcessed
        /// The project's crash-free targets: every rate on the page is shown against them.
        var targets: CrashFreeTargets = CrashFreeTargets()
        /// The issues with a recent velocity alert, listed first ("Trending now").
        var trending = TrendingMarks()
        /// What the quotas counted in the last 30 days (accepted and dropped events per day and release).
        var quotaCounts: [QuotaCount] = []
        /// The project's event quotas.
        var quotas = EventQuotas()
        /// Whether the project has had a hang issue: then hangs are ranked in a group of their own.
        var hasHangs = false
    }

    var chrome: PageChrome
    var projectName: String
    var todayUsers: String
    var todaySessions: String
    /// Today against yesterday.
    var todayUsersTrend: TrendView?
    var todaySessionsTrend: TrendView?
    /// Today's rates against the project's targets.
    var todayUsersTarget: TargetMarkView
    var todaySessionsTarget: TargetMarkView
    /// The targets themselves (`99.5 %`), shown with the settings.
    var usersTargetText: String
    var sessionsTargetText: String
    var openIssues: Int
    var closedIssues: Int
    var mutedIssues: Int
    var charts: [ChartBlock]
    var windows: [WindowSummary]
    /// In-page links to each kind's rankings, crashes first.
    var tabs: [Tab]
    /// "Crashes, hangs and non-fatal errors are ranked apart" (hangs named for a project that has them).
    var rankedApart: String
    var kindGroups: [KindGroup]
    var releaseRows: [ReleaseRowView]
    var hasReleases: Bool
    var alertRows: [AlertView]
    var hasAlerts: Bool
    var missingDebugFiles: Int
    var issuesHref: String
    var releasesHref: String
    /// The releases page, which opens with the comparison of the latest releases.
    var compareHref: String
    var alertsHref: String
    /// "Trending now": the issues with a recent velocity alert and its numbers.
    var trending: TrendingSection
    var missingHref: String
    var privacyScrubbing: String
    var privacySafeFields: String
    var privacySensitiveFields: String
    var privacyIPAddresses: String
    var privacyMinidumps: String
    /// Events accepted and dropped (past a quota or the rate limit) today, in 7 and in 30 days.
    var volumeToday: String
    var volume7Days: String
    var volume30Days: String
    /// The project's quotas (`1000 per minute, 50000 per month` or `None`).
    var quotaText: String

    init(_ input: Input) {
        let slug = input.slug
        let path = SitePaths.overview(slug)
        chrome = PageChrome(path: path, title: "Overview", project: slug, now: input.now)
        projectName = slug.rawValue
        todayUsers = Format.crashFreeUsers(input.today)
        todaySessions = Format.crashFreeSessions(input.today)
        let targets = input.targets
        (todayUsersTarget, todaySessionsTarget) = TargetMarkView.pair(input.today, targets: targets)
        usersTargetText = TargetMarkView.percent(targets.users)
        sessionsTargetText = TargetMarkView.percent(targets.sessions)
        openIssues = input.counts[.open] ?? 0
        closedIssues = input.counts[.closed] ?? 0
        mutedIssues = input.counts[.muted] ?? 0
        charts = [
            .health(
                id: "chart-users", metric: .users, scope: "all releases", trend: input.trend30, target: targets.users),
            .health(
                id: "chart-sessions", metric: .sessions, scope: "all releases", trend: input.trend30,
                target: targets.sessions),
        ]
        let yesterday = input.trend30.days.dropLast().last?.health ?? ReleaseHealth()
        todayUsersTrend = TrendView.rate(
            now: input.today.crashFreeUsers, before: yesterday.crashFreeUsers, was: Format.crashFreeUsers(yesterday))
        todaySessionsTrend = TrendView.rate(
            now: input.today.crashFreeSessions, before: yesterday.crashFreeSessions,
            was: Format.crashFreeSessions(yesterday))
        // The 30-day series holds the 7 days and the 7 before them.
        let trend7 = HealthTrend.make(series: input.trend30.days, last: DayNumber(input.now), length: 7)
        windows = [("Last 7 days", trend7), ("Last 30 days", input.trend30), ("Last 90 days", input.trend90)].map {
            label, trend in
            WindowSummary(
                windowLabel: label, usersText: Format.crashFreeUserDays(trend.userDays),
                usersTrend: TrendView.rate(
                    now: trend.userDays.crashFreeUsers, before: trend.previousUserDays.crashFreeUsers,
                    was: Format.crashFreeUserDays(trend.previousUserDays)),
                usersTarget: TargetMarkView(rate: trend.userDays.crashFreeUsers, target: targets.users),
                currentText: Format.crashFreeSessions(trend.total),
                sessionsTrend: TrendView.rate(
                    now: trend.total.crashFreeSessions, before: trend.previous.crashFreeSessions,
                    was: Format.crashFreeSessions(trend.previous)),
                sessionsTarget: TargetMarkView(rate: trend.total.crashFreeSessions, target: targets.sessions),
                otherSessions: "\(trend.total.abnormalSessions) abnormal, \(trend.total.erroredSessions) with errors")
        }
        rankedApart = TopIssueSection.rankedApart(hasHangs: input.hasHangs)
        kindGroups = TopIssueSection.categories(hasHangs: input.hasHangs).map {
            Self.kindGroup(
                $0, top: input.top, slug: slug, from: path, releases: input.renderedReleases, trending: input.trending)
        }
        tabs = kindGroups.map { Tab(tabHref: "#" + $0.kindAnchor, tabLabel: $0.kindHeading) }
        releaseRows = input.releases.map {
            ReleaseRowView($0, slug: slug, from: path, rendered: input.renderedReleases, targets: targets)
        }
        hasReleases = !releaseRows.isEmpty
        alertRows = input.alerts.map {
            AlertView($0, slug: slug, from: path, issues: input.renderedIssues, releases: input.renderedReleases)
        }
        hasAlerts = !alertRows.isEmpty
        missingDebugFiles = input.missingDebugFiles
        issuesHref = SitePaths.relative(from: path, to: SitePaths.issues(slug))
        releasesHref = SitePaths.relative(from: path, to: SitePaths.releases(slug))
        compareHref = releasesHref
        alertsHref = SitePaths.relative(from: path, to: SitePaths.alerts(slug))
        trending = TrendingSection(input.trending, slug: slug, from: path, issues: input.renderedIssues)
        missingHref = SitePaths.relative(from: path, to: SitePaths.missingDebugFiles(slug))
        let today = DayNumber(input.now)
        (volumeToday, volume7Days, volume30Days) = (
            Self.volume(input.quotaCounts, from: today), Self.volume(input.quotaCounts, from: today.adding(-6)),
            Self.volume(input.quotaCounts, from: today.adding(-29))
        )
        let quotas = QuotaWindow.allCases.compactMap { window in
            input.quotas[window].map { "\($0) per \(window.rawValue)" }
        }
        quotaText = quotas.isEmpty ? "None" : quotas.joined(separator: ", ")
        let privacy = input.privacy
        privacyScrubbing =
            privacy.scrubbing
            ? "On: sensitive keys, card numbers, IBANs, private keys, tokens and URL passwords are replaced with [Filtered]"
            : "Off: values are stored as sent"
        privacySafeFields = privacy.safeFields.isEmpty ? "none" : privacy.safeFields.joined(separator: ", ")
        privacySensitiveFields =
            privacy.sensitiveFields.isEmpty ? "defaults only" : privacy.sensitiveFields.joined(separator: ", ")
        privacyIPAddresses = privacy.keepIPAddresses ? "Kept" : "Dropped"
        switch input.minidumps {
        case .untilProcessed:
            privacyMinidumps = "Deleted once processed: kept only until the report's stack is final"
        case .retentionPeriod:
            privacyMinidumps =
                "Kept for the retention period, for download: their stack memory may hold secrets and environment strings"
        }
    }

    /// Accepted and dropped events from day `from` on: `1,000 accepted, 49,000 dropped`.
    static func volume(_ counts: [QuotaCount], from day: DayNumber) -> String {
        let window = counts.filter { $0.day >= day }
        let accepted = window.reduce(0) { $0 &+ $1.accepted }
        let dropped = window.reduce(0) { $0 &+ $1.dropped }
        return "\(accepted) accepted, \(dropped) dropped"
    }

    /// One category's rankings, a section per window (`crashes-24h`, `hangs-7d`, `non-fatal-release`…), headed one
    /// level below the category's heading; the rows of `trending` issues carry the mark.
    static func kindGroup(
        _ category: IssueCategory, top: [(window: TopIssueWindow, issues: [TopIssue])], slug: ProjectSlug,
        from path: String,
        releases: Set<String>, trending: TrendingMarks = TrendingMarks()
    ) -> KindGroup {
        let anchor = TopIssueSection.anchor(category)
        let sections = top.map { entry in
            let heading: String
            let suffix: String
            switch entry.window {
            case .last24Hours: (heading, suffix) = ("Last 24 hours", "24h")
            case .last7Days: (heading, suffix) = ("Last 7 days", "7d")
            case .release(let release): (heading, suffix) = ("Latest release: \(release)", "release")
            }
            var section = TopIssueSection(
                anchor: "\(anchor)-\(suffix)", heading: heading, headingLevel: 4, category: category,
                window: entry.window, issues: entry.issues.filter { $0.issue.category == category }, slug: slug,
                from: path, releases: releases, trending: trending)
            section.labelledBy = "\(anchor)-heading \(section.labelledBy)"
            return section
        }
        return KindGroup(
            kindAnchor: anchor, kindHeading: category.heading,
            tabs: sections.map { Tab(tabHref: "#" + $0.anchor, tabLabel: $0.sectionHeading) }, sections: sections)
    }
}
