import FaultlineCore

/// One row of a top-issues table: the issue and its numbers in the window.
struct TopIssueRowView {
    var rank: Int
    var issue: IssueRowView
    var windowUsers: Int
    var windowEvents: Int
}

/// One ranking of top issues (a "tab" of the overview, made of a section and an in-page link, no script).
struct TopIssueSection {
    var anchor: String
    var sectionHeading: String
    var tableCaption: String
    var rows: [TopIssueRowView]
    var hasRows: Bool

    init(
        anchor: String, heading: String, window: TopIssueWindow, issues: [TopIssue], slug: ProjectSlug,
        from path: String,
        releases: Set<String>
    ) {
        self.anchor = anchor
        sectionHeading = heading
        tableCaption = "Top issues, \(window.label), by users affected"
        rows = issues.enumerated().map { index, top in
            TopIssueRowView(
                rank: index + 1, issue: IssueRowView(top.issue, slug: slug, from: path, releases: releases),
                windowUsers: top.users, windowEvents: top.events)
        }
        hasRows = !rows.isEmpty
    }
}
