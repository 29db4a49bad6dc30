import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `index.html`: every project with today's crash-free rates and its open issues.
struct ProjectIndexPage {
    /// One project's line.
    struct Row {
        var projectName: String
        var overviewHref: String
        var todayUsers: String
        var todaySessions: String
        /// Today's rates against the project's targets.
        var usersTarget: TargetMarkView
        var sessionsTarget: TargetMarkView
        var openIssues: Int
    }

    /// What the project loop gathers for the index (a few numbers per project, never its pages).
    struct Entry {
        var slug: ProjectSlug
        var today: ReleaseHealth
        var openIssues: Int
        /// The project's targets, which today's rates are shown against.
        var targets: CrashFreeTargets = CrashFreeTargets()
    }

    static let path = SitePaths.index

    var chrome: PageChrome
    var today: String
    var rows: [Row]
    var hasRows: Bool

    init(entries: [Entry], now: Date) {
        chrome = PageChrome(path: Self.path, title: "Projects", project: nil, now: now)
        today = DayNumber(now).description
        rows = entries.map { entry in
            let marks = TargetMarkView.pair(entry.today, targets: entry.targets)
            return Row(
                projectName: entry.slug.rawValue,
                overviewHref: SitePaths.relative(from: Self.path, to: SitePaths.overview(entry.slug)),
                todayUsers: Format.crashFreeUsers(entry.today), todaySessions: Format.crashFreeSessions(entry.today),
                usersTarget: marks.users, sessionsTarget: marks.sessions, openIssues: entry.openIssues)
        }
        hasRows = !rows.isEmpty
    }
}
