import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The page written for an issue that a list named but that no longer exists, so that no link leads nowhere.
struct IssueGonePage {
    var chrome: PageChrome
    var issueNumber: String
    var issuesHref: String

    init(slug: ProjectSlug, id: IssueID, now: Date) {
        let path = SitePaths.issue(slug, id)
        chrome = PageChrome(path: path, title: "Issue \(id.rawValue)", project: slug, now: now)
        issueNumber = String(id.rawValue)
        issuesHref = SitePaths.relative(from: path, to: SitePaths.issues(slug))
    }
}
