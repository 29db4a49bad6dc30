import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/alerts.html`: the alerts that fired, grouped by kind (trending first: it is what needs looking at now),
/// newest first in each group, with the numbers behind each; and whether anyone was sent them.
struct AlertsPage {
    /// The alerts of one kind, newest first.
    struct Group {
        var groupAnchor: String
        var groupHeading: String
        var groupCount: Int
        var alertRows: [AlertView]
    }

    /// An in-page link to a group, with its count ("Trending (2)").
    struct GroupLink {
        var linkHref: String
        var linkText: String
    }

    var chrome: PageChrome
    var projectName: String
    var groups: [Group]
    var groupLinks: [GroupLink]
    var hasAlerts: Bool
    /// Said when the project has no webhook: the alerts were recorded, nobody was sent them, and how to change that.
    var noChannelText: String?
    var noChannelCommand: String?
    /// Said when a webhook is set (its URL is not shown: a Slack webhook's URL is its secret).
    var channelText: String?

    /// The order the groups are shown in: what needs a look now first, server notices last.
    static let kindOrder: [AlertKind] = [
        .velocity, .regression, .crashFreeTarget, .newIssue, .quotaReached, .storageFull, .storageOK,
    ]

    /// - Parameters:
    ///   - alerts: the project's alerts (any order: each group is sorted newest first).
    ///   - issues: issues that have a page.
    ///   - releases: releases that have a page.
    ///   - settings: the project's alert settings; nil when unknown (nothing is said about delivery).
    init(
        slug: ProjectSlug, alerts: [Alert], issues: Set<IssueID>, releases: Set<String>, now: Date,
        settings: AlertSettings? = nil
    ) {
        let path = SitePaths.alerts(slug)
        chrome = PageChrome(path: path, title: "Alerts", project: slug, now: now)
        projectName = slug.rawValue
        let byKind = Dictionary(grouping: alerts, by: \.kind)
        groups = Self.kindOrder.compactMap { kind in
            guard let ofKind = byKind[kind], !ofKind.isEmpty else { return nil }
            let newestFirst = ofKind.sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
            return Group(
                groupAnchor: "alerts-\(kind.rawValue)", groupHeading: Self.heading(kind), groupCount: ofKind.count,
                alertRows: newestFirst.map { AlertView($0, slug: slug, from: path, issues: issues, releases: releases) }
            )
        }
        groupLinks = groups.map {
            GroupLink(linkHref: "#\($0.groupAnchor)", linkText: "\($0.groupHeading) (\($0.groupCount))")
        }
        hasAlerts = !groups.isEmpty
        if let settings {
            if let url = settings.webhookURL, !url.isEmpty {
                channelText = "Alerts are also sent to the project's webhook."
            } else {
                noChannelText =
                    "No delivery channel is configured: alerts are recorded and shown here only, and nobody was sent "
                    + "them. To have them posted to Slack or any webhook, run:"
                noChannelCommand = "faultline alerts configure \(slug.rawValue) --webhook URL"
            }
        }
    }

    /// A group's heading: the kind in people's words.
    static func heading(_ kind: AlertKind) -> String {
        switch kind {
        case .velocity: "Trending (velocity)"
        case .regression: "Regressions"
        case .crashFreeTarget: "Below the crash-free target"
        case .newIssue: "New issues"
        case .storageFull: "Storage full"
        case .storageOK: "Storage OK again"
        case .quotaReached: "Quota reached"
        }
    }
}
