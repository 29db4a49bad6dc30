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
    /// The level of the section's heading (3 or 4), which the page sets by where the section sits in its outline.
    var headingLevel: Int
    /// The ids of the headings that name the section (its own; on the overview the kind's too, so that "Last 24
    /// hours" of the crashes and of the non-fatal errors are distinct landmarks).
    var labelledBy: String
    var tableCaption: String
    var rows: [TopIssueRowView]
    var hasRows: Bool
    /// Whether the ranking compares with the window before it (then the table has a trend column).
    var hasTrends: Bool
    /// What the section says when the ranking is empty ("No crashes in this window.").
    var emptyText: String

    /// - Parameter trending: the project's trending issues, whose rows carry the mark.
    init(
        anchor: String, heading: String, headingLevel: Int = 3, category: IssueCategory? = nil, window: TopIssueWindow,
        issues: [TopIssue], slug: ProjectSlug, from path: String, releases: Set<String>,
        trending: TrendingMarks = TrendingMarks()
    ) {
        self.anchor = anchor
        sectionHeading = heading
        self.headingLevel = headingLevel
        labelledBy = anchor + "-heading"
        tableCaption = "Top \(category?.noun ?? "issues"), \(window.label), by users affected"
        emptyText = "No \(category?.noun ?? "issues") in this window."
        let before: String
        switch window {
        case .last24Hours: before = "the 24 hours"
        case .last7Days: before = "the 7 days"
        case .release: before = ""
        }
        rows = issues.enumerated().map { index, top in
            TopIssueRowView(
                rank: index + 1,
                issue: IssueRowView(top.issue, slug: slug, from: path, releases: releases, trending: trending),
                windowUsers: top.users, windowEvents: top.events,
                usersTrend: top.previous.map {
                    TrendView.count(top.users, before: $0.users, noun: "user", window: before)
                })
        }
        hasRows = !rows.isEmpty
        hasTrends = rows.contains { $0.usersTrend != nil }
    }
}

extension TopIssueSection {
    /// The categories ranked apart, in the order pages show them: fatal crashes first (they end sessions and count
    /// against crash-free rates), then hangs and ANRs, then non-fatal errors; each issue in the one its filing stored
    /// (``IssueCategory``). Hangs only for a project that has had a hang issue (`hasHangs`): as Crashlytics shows its
    /// ANR tab only for the apps whose SDK reports them, a project whose clients never send hangs (a Linux service, a
    /// native C program) is not shown an empty "Hangs" section for ever.
    static func categories(hasHangs: Bool) -> [IssueCategory] {
        hasHangs ? [.crash, .hang, .nonFatal] : [.crash, .nonFatal]
    }

    /// What the pages say above their rankings: "Crashes, hangs and non-fatal errors are ranked apart".
    static func rankedApart(hasHangs: Bool) -> String {
        (hasHangs ? "Crashes, hangs and non-fatal errors" : "Crashes and non-fatal errors") + " are ranked apart"
    }

    /// The anchor of a category's group of sections.
    static func anchor(_ category: IssueCategory) -> String {
        switch category {
        case .crash: "crashes"
        case .hang: "hangs"
        case .nonFatal: "non-fatal"
        }
    }
}
