import FaultlineCore

/// One row of a top-issues table: the issue and its numbers in the window.
struct TopIssueRowView {
    var rank: Int
    var issue: IssueRowView
    var windowUsers: Int
    var windowEvents: Int
    /// Users affected against the window before (nil for a release's ranking).
    var usersTrend: TrendView?
}

/// One ranking of top issues (a "tab" of the overview, made of a section and an in-page link, no script).
struct TopIssueSection {
    var anchor: String
    var sectionHeading: String
    var tableCaption: String
    var rows: [TopIssueRowView]
    var hasRows: Bool
    /// Whether the ranking compares with the window before it (then the table has a trend column).
    var hasTrends: Bool

    init(
        anchor: String, heading: String, window: TopIssueWindow, issues: [TopIssue], slug: ProjectSlug,
        from path: String,
        releases: Set<String>
    ) {
        self.anchor = anchor
        sectionHeading = heading
        tableCaption = "Top issues, \(window.label), by users affected"
        let before: String
        switch window {
        case .last24Hours: before = "the 24 hours"
        case .last7Days: before = "the 7 days"
        case .release: before = ""
        }
        rows = issues.enumerated().map { index, top in
            TopIssueRowView(
                rank: index + 1, issue: IssueRowView(top.issue, slug: slug, from: path, releases: releases),
                windowUsers: top.users, windowEvents: top.events,
                usersTrend: top.previous.map {
                    TrendView.count(top.users, before: $0.users, noun: "user", window: before)
                })
        }
        hasRows = !rows.isEmpty
        hasTrends = rows.contains { $0.usersTrend != nil }
    }
}
