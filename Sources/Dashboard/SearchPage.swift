import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/search?q=…&page=…`: the search form with the issues and reports that match (served by the server).
struct SearchPage {
    /// One matching report.
    struct ReportRow {
        var eventHref: String
        var eventID: String
        var reportKind: String
        var reportTime: TimeView
        var reportRelease: String
        var reportUser: String
        var reportError: String?
        var reportIssueHref: String?
        var reportIssueNumber: String?
    }

    /// A link to another page of reports.
    struct PageLink {
        var pageHref: String
        var pageLabel: String
    }

    var chrome: PageChrome
    var projectName: String
    var query: String
    var searched: Bool
    var errorText: String?
    var countText: String
    var issuesNote: String?
    var issueRows: [IssueRowView]
    var hasIssues: Bool
    var reportRows: [ReportRow]
    var hasReports: Bool
    var pageText: String
    var previousPage: PageLink?
    var nextPage: PageLink?
    var hasPaging: Bool

    init(project: Project, query: String, results: SearchResults?, page: Int, pageSize: Int, error: String?) {
        let slug = project.slug
        let path = SitePaths.search(slug)
        projectName = slug.rawValue
        self.query = query
        errorText = error
        searched = results != nil
        let found = results
        let results =
            results
            ?? SearchResults(
                reports: [], reportCount: 0, reportCountIsLowerBound: false, issues: [], issuesFromNewestOnly: false)
        let count =
            results.reportCountIsLowerBound
            ? "more than \(results.reportCount) reports" : Format.count(results.reportCount, "report")
        // The count in the title too: a browser tab (and a screen reader's page title) says what was found.
        let title = found == nil ? "Search" : "Search “\(query)”: \(count)"
        chrome = PageChrome(path: path, title: title, project: slug, now: nil, searchQuery: query)
        countText = "\(count) and \(Format.count(results.issues.count, "issue")) match"
        issuesNote =
            results.issuesFromNewestOnly
            ? "Issues of the newest \(SearchResults.countLimit) matching reports." : nil
        issueRows = results.issues.map { IssueRowView($0, slug: slug, from: path, releases: []) }
        hasIssues = !issueRows.isEmpty
        reportRows = results.reports.map { report in
            ReportRow(
                eventHref: SitePaths.relative(from: path, to: SitePaths.event(slug, report.eventID)),
                eventID: report.eventID.rawValue,
                reportKind: report.kind == .crash ? "crash" : "non-fatal",
                reportTime: TimeView(report.timestamp),
                reportRelease: report.release ?? "none",
                reportUser: report.userKey ?? "unknown",
                reportError: [report.errorType, report.errorMessage].compactMap { $0 }.joined(separator: ": ")
                    .nilIfEmpty,
                reportIssueHref: report.issue.map { SitePaths.relative(from: path, to: SitePaths.issue(slug, $0)) },
                reportIssueNumber: report.issue.map { String($0.rawValue) })
        }
        hasReports = !reportRows.isEmpty
        let shown = (page - 1) * pageSize
        let total = results.reportCount
        let lastPage = max(1, (total + pageSize - 1) / pageSize)
        pageText =
            hasReports
            ? "Reports \(shown + 1)–\(shown + reportRows.count), newest first (page \(page) of \(results.reportCountIsLowerBound ? "\(lastPage)+" : String(lastPage)))."
            : ""
        func link(_ target: Int, _ label: String) -> PageLink {
            PageLink(pageHref: "search?q=\(Self.formEncoded(query))&page=\(target)", pageLabel: label)
        }
        previousPage = page > 1 ? link(page - 1, "Newer reports") : nil
        let more = shown + reportRows.count < total || results.reportCountIsLowerBound
        nextPage =
            more && reportRows.count == pageSize && page < Self.maxPage(pageSize: pageSize)
            ? link(page + 1, "Older reports") : nil
        hasPaging = previousPage != nil || nextPage != nil
    }

    /// The last page a search can reach: counting (and paging) stops at ``SearchResults/countLimit``.
    static func maxPage(pageSize: Int) -> Int { max(1, SearchResults.countLimit / max(1, pageSize)) }

    /// `text` as a query-string value (application/x-www-form-urlencoded).
    static func formEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                out += "+"
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }
}

/// `<slug>/events/<event id>`: one stored report in full (served by the server).
struct EventPage {
    var chrome: PageChrome
    var heading: String
    var event: SampleEventView?
    var issueHref: String?
    var issueNumber: String?
    var searchHref: String
    var missingText: String?
    /// Steps through the issue's events (newest, newer, older, oldest); empty when the event has no issue yet.
    var eventNavigation: [EventNavigation.Link]
    var hasEventNavigation: Bool

    init(
        project: Project, eventID: String, event: (report: Report, symbols: SymbolicatedReport?, issue: IssueID?)?,
        sources: [CodeLocation: SourceExcerpt] = [:], neighbours: IssueEventNeighbours? = nil
    ) {
        let slug = project.slug
        let path = event.map { SitePaths.event(slug, $0.report.eventID) } ?? "\(slug.rawValue)/events/unknown"
        chrome = PageChrome(path: path, title: "Event \(eventID)", project: slug, now: nil)
        heading = "Event \(eventID)"
        self.event = event.map {
            SampleEventView(report: $0.report, symbols: $0.symbols, inApp: project.inApp, sources: sources)
        }
        issueHref = event?.issue.map { SitePaths.relative(from: path, to: SitePaths.issue(slug, $0)) }
        issueNumber = event?.issue.map { String($0.rawValue) }
        searchHref = SitePaths.relative(from: path, to: SitePaths.search(slug))
        missingText =
            event == nil ? "No event \(eventID) is stored in project \(slug.rawValue) (it may have been pruned)." : nil
        if let event, event.issue != nil, let neighbours {
            eventNavigation = EventNavigation.links(neighbours, current: event.report.eventID, slug: slug, from: path)
        } else {
            eventNavigation = []
        }
        hasEventNavigation = !eventNavigation.isEmpty
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
