import FaultlineCore

/// One issue in a list (the issues page, a top-issues table).
struct IssueRowView {
    var issueID: IssueID
    var issueHref: String
    var issueTitle: String
    var issueCulprit: String?
    /// The error code the issue's events share (`-1001`), beside the title: a domain's codes are different problems.
    var issueCode: String?
    var issueKind: String
    var statusBadge: Badge
    var signalBadges: [Badge]
    var totalEvents: Int
    var totalUsers: Int
    var firstSeen: TimeView
    var lastSeen: TimeView
    var firstRelease: ReleaseLink?
    /// The velocity alert's numbers when the issue is trending (``TrendingMarks``). Not named `trending`: a nil
    /// optional is a missing key to Mustache, which then finds the page's own `trending` (the overview's "Trending
    /// now" section) and marked every row after it.
    var issueTrending: TrendingMarkView?

    init(
        _ issue: IssueSummary, slug: ProjectSlug, from path: String, releases: Set<String>,
        trending: TrendingMarks = TrendingMarks()
    ) {
        issueID = issue.id
        issueHref = SitePaths.relative(from: path, to: SitePaths.issue(slug, issue.id))
        // Shown without a repeated prefix (`SIGSEGV: SIGSEGV (signal 11, …)`), as the issue's page shows it.
        issueTitle = IssueTitle.row(issue)
        issueCulprit = issue.culprit.flatMap { $0.isEmpty ? nil : $0 }
        issueCode = issue.errorCode
        issueKind = issue.category.rawValue  // `crash`, `hang` or `non-fatal`, as filing stored it
        statusBadge = .status(issue.status)
        signalBadges = Badge.signals(issue.signals)
        totalEvents = issue.events
        totalUsers = issue.users
        firstSeen = TimeView(issue.firstSeen)
        lastSeen = TimeView(issue.lastSeen)
        firstRelease = issue.firstRelease.map { ReleaseLink($0, slug: slug, from: path, rendered: releases) }
        issueTrending = trending.mark(issue.id)
    }
}
