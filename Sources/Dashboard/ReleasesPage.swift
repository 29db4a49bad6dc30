import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/releases.html`: the latest releases compared side by side, then every release, newest first; each
/// crash-free rate against the project's targets.
struct ReleasesPage {
    var chrome: PageChrome
    var projectName: String
    var comparison: ReleaseComparison?
    var releaseRows: [ReleaseRowView]
    var hasReleases: Bool
    var usersTargetText: String
    var sessionsTargetText: String

    /// - Parameters:
    ///   - releases: newest first; the first `ReleaseComparison.defaultCount` are compared.
    ///   - top: the compared releases' issues ranked by users affected (their top crashes).
    ///   - userDays: the compared releases' user-days in the last 7 days, of the project's `totalUserDays`.
    init(
        slug: ProjectSlug, releases: [ReleaseRow], now: Date, targets: CrashFreeTargets = CrashFreeTargets(),
        top: [String: [TopIssue]] = [:], userDays: [String: Int] = [:], totalUserDays: Int = 0
    ) {
        let path = SitePaths.releases(slug)
        let rendered = Set(releases.map(\.release))
        chrome = PageChrome(path: path, title: "Releases", project: slug, now: now)
        projectName = slug.rawValue
        comparison =
            releases.isEmpty
            ? nil
            : ReleaseComparison(
                releases: releases, top: top, targets: targets, slug: slug, from: path, rendered: rendered,
                userDays: userDays, totalUserDays: totalUserDays)
        releaseRows = releases.map {
            ReleaseRowView($0, slug: slug, from: path, rendered: rendered, targets: targets)
        }
        hasReleases = !releaseRows.isEmpty
        usersTargetText = TargetMarkView.percent(targets.users)
        sessionsTargetText = TargetMarkView.percent(targets.sessions)
    }
}
