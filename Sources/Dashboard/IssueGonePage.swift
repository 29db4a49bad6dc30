import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The page of an issue that has none: written for an issue that a list named but that no longer exists (so that
/// no link leads nowhere), and served with a 404 for an issue number that does not exist (yet), so that a link
/// opened before its reports were grouped says so in HTML instead of answering JSON.
struct IssueGonePage {
    var chrome: PageChrome
    var issueNumber: String
    var issuesHref: String
    /// True: the issue never existed here (yet); false: it existed and no longer does.
    var notYet: Bool
    /// The issue it was merged into (`IssueMerge`), and that issue's page: the page links there and sends the browser
    /// on at once. Nil: it was not merged.
    var mergedInto: String?
    var survivorHref: String?

    /// - Parameters:
    ///   - notYet: true for a number no issue has (yet): the page is served for that request only.
    ///   - mergedInto: the issue it was merged into, when it was.
    init(slug: ProjectSlug, id: IssueID, now: Date, notYet: Bool = false, mergedInto: IssueID? = nil) {
        let path = SitePaths.issue(slug, id)
        chrome = PageChrome(path: path, title: "Issue \(id.rawValue)", project: slug, now: notYet ? nil : now)
        issueNumber = String(id.rawValue)
        issuesHref = SitePaths.relative(from: path, to: SitePaths.issues(slug))
        self.notYet = notYet && mergedInto == nil
        if let mergedInto {
            self.mergedInto = String(mergedInto.rawValue)
            let href = SitePaths.relative(from: path, to: SitePaths.issue(slug, mergedInto))
            survivorHref = href
            chrome.refreshHref = href
        }
    }
}
