import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/issues.html`: every listed issue, most recently seen first.
struct IssueListPage {
    var chrome: PageChrome
    var projectName: String
    var rows: [IssueRowView]
    var hasRows: Bool
    var limited: Bool
    var limit: Int
    var total: Int

    /// - Parameters:
    ///   - limit: the most issues listed; the page says so when the list is cut there.
    ///   - total: how many issues the project has.
    init(slug: ProjectSlug, issues: [IssueSummary], total: Int, limit: Int, releases: Set<String>, now: Date) {
        let path = SitePaths.issues(slug)
        chrome = PageChrome(path: path, title: "Issues", project: slug, now: now)
        projectName = slug.rawValue
        rows = issues.map { IssueRowView($0, slug: slug, from: path, releases: releases) }
        hasRows = !rows.isEmpty
        limited = issues.count >= limit && total > issues.count
        self.limit = limit
        self.total = total
    }
}
