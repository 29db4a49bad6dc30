import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The issues that are trending: those with a velocity alert in the last ``window``, each with its newest such
/// alert, made from the alerts a render already read (no read per row or per issue).
///
/// A mark is derived from stored alerts, not from a separate flag: what the Alerts page lists and what the lists
/// mark can never disagree.
struct TrendingMarks {
    /// How long a velocity alert marks its issue: a day, so the team that looks each morning sees yesterday's spike.
    static let window: TimeInterval = 24 * 60 * 60

    /// The newest velocity alert of each trending issue.
    private(set) var alerts: [IssueID: Alert] = [:]

    init() {}

    /// - Parameters:
    ///   - alerts: a project's alerts (any order, any kinds: only velocity alerts about an issue count).
    ///   - now: the time the page describes; alerts older than ``window`` (or from the future) mark nothing.
    init(_ alerts: [Alert], now: Date) {
        for alert in alerts where alert.kind == .velocity {
            guard let issue = alert.issue else { continue }
            let age = now.timeIntervalSince(alert.createdAt)
            guard age >= -60, age <= Self.window else { continue }
            if let known = self.alerts[issue], known.createdAt >= alert.createdAt { continue }
            self.alerts[issue] = alert
        }
    }

    var isEmpty: Bool { alerts.isEmpty }

    /// The mark of `issue`, nil when it is not trending.
    func mark(_ issue: IssueID) -> TrendingMarkView? {
        alerts[issue].map(TrendingMarkView.init)
    }

    /// `version` with the trending alert folded into its change time, so a page rendered before the alert fired is
    /// not taken for current (the alert changes what the page shows without changing the issue).
    func version(_ version: IssueVersion, of issue: IssueID) -> IssueVersion {
        guard let alert = alerts[issue] else { return version }
        var folded = version
        let alertMs = Int64((alert.createdAt.timeIntervalSince1970 * 1000).rounded(.down))
        folded.changedAt = max(version.changedAt, alertMs)
        return folded
    }

    /// The trending issues whose alert fired at or after `since` (their pages must be rendered again).
    func issues(since: Date) -> [IssueID] {
        alerts.filter { $0.value.createdAt >= since }.map(\.key).sorted()
    }
}

/// The "Trending" mark of an issue, in words (never colour alone): the velocity alert's numbers.
struct TrendingMarkView {
    /// The short form, for list rows after a "Trending:" badge: `30 of 50 sessions of 3.0 in 30 min (60 %), 30 users`.
    var trendingShort: String
    /// The sentence for the issue page (after a "Trending:" badge), with the threshold and the release's users.
    var trendingLong: String
    var trendingSince: TimeView

    init(_ alert: Alert) {
        func n(_ key: String) -> String { alert.reason[key].map { Format.trimmed($0) } ?? "?" }
        let release = alert.release.map { " of \($0)" } ?? ""
        trendingShort =
            "\(n("issue_sessions")) of \(n("release_sessions")) sessions\(release) in "
            + "\(n("window_minutes")) min (\(n("share_percent")) %), \(n("issue_users")) users"
        trendingLong = AlertView.summary(alert)
        trendingSince = TimeView(alert.createdAt)
    }
}

/// The overview's "Trending now" list: every trending issue, newest alert first, with its numbers.
struct TrendingSection {
    /// One trending issue.
    struct Item {
        var itemTitle: String
        var itemHref: String
        var itemLinked: Bool
        var mark: TrendingMarkView
    }

    var trendingItems: [Item]
    var hasTrending: Bool

    /// - Parameters:
    ///   - marks: the trending issues.
    ///   - issues: issues that have a page (the others are named, not linked).
    init(_ marks: TrendingMarks, slug: ProjectSlug, from path: String, issues: Set<IssueID>) {
        trendingItems = marks.alerts.sorted { ($0.value.createdAt, $0.key) > ($1.value.createdAt, $1.key) }.map {
            issue, alert in
            let linked = issues.contains(issue)
            return Item(
                itemTitle: alert.title.isEmpty ? "Issue \(issue.rawValue)" : alert.title,
                itemHref: linked ? SitePaths.relative(from: path, to: SitePaths.issue(slug, issue)) : "",
                itemLinked: linked, mark: TrendingMarkView(alert))
        }
        hasTrending = !trendingItems.isEmpty
    }
}
