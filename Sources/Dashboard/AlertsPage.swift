import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/alerts.html`: the alerts that fired, newest first, with the numbers behind each.
struct AlertsPage {
    var chrome: PageChrome
    var projectName: String
    var alertRows: [AlertView]
    var hasAlerts: Bool

    init(slug: ProjectSlug, alerts: [Alert], issues: Set<IssueID>, releases: Set<String>, now: Date) {
        let path = SitePaths.alerts(slug)
        chrome = PageChrome(path: path, title: "Alerts", project: slug, now: now)
        projectName = slug.rawValue
        alertRows = alerts.map { AlertView($0, slug: slug, from: path, issues: issues, releases: releases) }
        hasAlerts = !alertRows.isEmpty
    }
}
