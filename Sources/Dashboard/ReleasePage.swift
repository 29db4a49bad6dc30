import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/releases/<fnv>.html`: one release's daily health, its lifetime counts and its top issues.
struct ReleasePage {
    var chrome: PageChrome
    var projectName: String
    var releaseTitle: String
    var firstSeen: TimeView
    var lastSeen: TimeView
    var adoptionText: String
    var sessionsTotal: Int
    var crashFreeUsersText: String
    var crashFreeSessionsText: String
    /// The lifetime rates against the project's targets.
    var usersTarget: TargetMarkView
    var sessionsTarget: TargetMarkView
    var abnormalSessions: Int
    var erroredSessions: Int
    var newIssues: Int
    var charts: [ChartBlock]
    /// The release's top issues, a section per category: crashes first, then hangs (for a project that has them), then
    /// non-fatal errors.
    var topSections: [TopIssueSection]
    /// "Crashes, hangs and non-fatal errors are ranked apart" (hangs named for a project that has them).
    var rankedApart: String
    var releasesHref: String
    /// The release's issue list, served live (`../list?release=…`).
    var releaseIssuesHref: String
    /// "No dSYM for UUID 4C4C…A82A (Shop)": the app's Mach-O images this release's reports lacked the dSYM of (Crashlytics'
    /// "missing dSYM" banner); other missing debug files are on the missing-debug-files page.
    var missingDSYMs: [String]
    var hasMissingDSYMs: Bool
    var missingDebugFilesHref: String
    /// The release gate with `faultline gate`'s defaults; nil when it was not judged.
    var gate: ReleaseGateView?

    /// - Parameters:
    ///   - trend: the release's own daily health over the chart's window.
    ///   - top: the release's issues ranked by users affected within each category (each category's ranking, one
    ///     after the other); the page shows each category's apart.
    ///   - hasHangs: whether the project has had a hang issue: then the page has a section for hangs.
    ///   - missing: the project's missing debug files (those of this release are named).
    ///   - targets: the project's crash-free targets, which every rate on the page is shown against.
    ///   - gate: the release's gate (``ReleaseGate``), shown with its reasons.
    ///   - trending: the project's trending issues, whose top-issues rows carry the mark.
    init(
        slug: ProjectSlug, row: ReleaseRow, trend: HealthTrend, top: [TopIssue], releases: Set<String>, now: Date,
        missing: [MissingDebugFileSummary] = [], targets: CrashFreeTargets = CrashFreeTargets(),
        gate: ReleaseGate? = nil, trending: TrendingMarks = TrendingMarks(), hasHangs: Bool = false
    ) {
        let path = SitePaths.release(slug, row.release)
        chrome = PageChrome(path: path, title: "Release \(row.release)", project: slug, now: now)
        projectName = slug.rawValue
        releaseTitle = row.release
        firstSeen = TimeView(row.firstSeen)
        lastSeen = TimeView(row.lastSeen)
        adoptionText = Format.adoption(row)
        sessionsTotal = row.health.sessions
        crashFreeUsersText = Format.crashFreeUsers(row.health)
        crashFreeSessionsText = Format.crashFreeSessions(row.health)
        (usersTarget, sessionsTarget) = TargetMarkView.pair(row.health, targets: targets)
        abnormalSessions = row.health.abnormalSessions
        erroredSessions = row.health.erroredSessions
        newIssues = row.newIssues
        let scope = "release \(row.release)"
        charts = [
            .health(id: "chart-users", metric: .users, scope: scope, trend: trend, target: targets.users),
            .health(id: "chart-sessions", metric: .sessions, scope: scope, trend: trend, target: targets.sessions),
        ]
        rankedApart = TopIssueSection.rankedApart(hasHangs: hasHangs)
        topSections = TopIssueSection.categories(hasHangs: hasHangs).map { category in
            TopIssueSection(
                anchor: TopIssueSection.anchor(category), heading: category.heading, category: category,
                window: .release(row.release), issues: top.filter { $0.issue.category == category }, slug: slug,
                from: path, releases: releases, trending: trending)
        }
        releasesHref = SitePaths.relative(from: path, to: SitePaths.releases(slug))
        releaseIssuesHref =
            SitePaths.relative(from: path, to: SitePaths.issueList(slug)) + "?"
            + IssueListFilter(release: row.release).queryString()
        missingDSYMs = missing.filter { $0.releases.contains(row.release) }.compactMap(Self.missingDSYMLine)
        hasMissingDSYMs = !missingDSYMs.isEmpty
        missingDebugFilesHref = SitePaths.relative(from: path, to: SitePaths.missingDebugFiles(slug))
        self.gate = gate.map { ReleaseGateView($0, slug: slug) }
    }

    /// `No dSYM for UUID 4C4C…A82A (Shop).` for one of the app's Mach-O images; nil for Apple's libraries and for
    /// other formats' files.
    static func missingDSYMLine(_ summary: MissingDebugFileSummary) -> String? {
        let row = MissingDebugFilesPage.row(summary)
        guard row.apple, !row.systemLibrary else { return nil }
        let line = "No dSYM for UUID \(row.buildID) (\(row.moduleName))"
        return summary.has.isEmpty ? line + "." : line + "; the server has: \(row.holds)."
    }
}
