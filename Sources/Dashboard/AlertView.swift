import FaultlineCore

/// An alert as pages show it: what fired, when, and the numbers that made it fire, in words.
struct AlertView {
    /// One named number of the alert's reason.
    struct ReasonItem {
        var reasonLabel: String
        var reasonValue: String
    }

    var kindText: String
    var alertTitle: String
    var alertRelease: ReleaseLink?
    var createdAt: TimeView
    var summary: String
    var reasonItems: [ReasonItem]
    var hasReasons: Bool
    var issueHref: String
    var issueLinked: Bool

    /// - Parameters:
    ///   - issues: issues that have a page; an alert about another issue is not linked.
    ///   - releases: releases that have a page.
    init(_ alert: Alert, slug: ProjectSlug, from path: String, issues: Set<IssueID>, releases: Set<String>) {
        kindText = Self.kindText(alert.kind)
        alertTitle = alert.title
        alertRelease = alert.release.map { ReleaseLink($0, slug: slug, from: path, rendered: releases) }
        createdAt = TimeView(alert.createdAt)
        summary = Self.summary(alert)
        reasonItems = Self.orderedKeys(alert.reason).map { key in
            ReasonItem(reasonLabel: Self.labels[key] ?? key, reasonValue: Format.trimmed(alert.reason[key] ?? 0))
        }
        hasReasons = !reasonItems.isEmpty
        if let issue = alert.issue, issues.contains(issue) {
            issueHref = SitePaths.relative(from: path, to: SitePaths.issue(slug, issue))
            issueLinked = true
        } else {
            issueHref = ""
            issueLinked = false
        }
    }

    static func kindText(_ kind: AlertKind) -> String {
        switch kind {
        case .newIssue: "New issue"
        case .regression: "Regression"
        case .velocity: "Trending (velocity)"
        case .crashFreeTarget: "Below crash-free target"
        case .storageFull: "Storage full"
        case .storageOK: "Storage OK again"
        case .quotaReached: "Quota reached"
        }
    }

    /// People's names for the reason keys `AlertRules` writes, in the order they are listed.
    static let order = [
        "issue_sessions", "release_sessions", "share_percent", "threshold_percent", "issue_users", "min_users",
        "release_users", "window_minutes", "crash_free_sessions_percent", "target_percent", "sessions",
        "crashed_sessions", "users", "crashed_users", "free_mib", "floor_mib", "quota", "retry_after_seconds",
    ]
    static let labels = [
        "issue_sessions": "Sessions that crashed with the issue",
        "release_sessions": "Sessions of the release",
        "share_percent": "Share of the release's sessions (%)",
        "threshold_percent": "Threshold (%)",
        "issue_users": "Users affected",
        "min_users": "Users needed to alert",
        "release_users": "Users of the release",
        "window_minutes": "Window (minutes)",
        "crash_free_sessions_percent": "Crash-free sessions (%)",
        "target_percent": "Target (%)",
        "sessions": "Sessions",
        "crashed_sessions": "Crashed sessions",
        "users": "Users",
        "crashed_users": "Users with a crash",
        "free_mib": "Free space (MiB)",
        "floor_mib": "Free-space floor (MiB)",
        "quota": "Quota (events per window)",
        "retry_after_seconds": "Refused for (seconds)",
    ]

    static func orderedKeys(_ reason: [String: Double]) -> [String] {
        order.filter { reason[$0] != nil } + reason.keys.filter { labels[$0] == nil }.sorted()
    }

    /// One sentence with the numbers that matter for the alert's kind; every percentage with its counts.
    static func summary(_ alert: Alert) -> String {
        func n(_ key: String) -> String { alert.reason[key].map { Format.trimmed($0) } ?? "?" }
        let release = alert.release ?? "all releases"
        switch alert.kind {
        case .newIssue:
            return "A new issue was seen for the first time" + (alert.release.map { " in release \($0)." } ?? ".")
        case .regression:
            return "A closed issue came back in release \(release)."
        case .velocity:
            return
                "\(n("issue_sessions")) of \(n("release_sessions")) sessions of release \(release) crashed with this "
                + "issue in \(n("window_minutes")) minutes (\(n("share_percent")) %, "
                + "above the \(n("threshold_percent")) % threshold); \(n("issue_users")) users affected, "
                + "\(n("release_users")) users on the release."
        case .crashFreeTarget:
            return "Crash-free sessions of \(release) were \(n("crash_free_sessions_percent")) % "
                + "(\(n("crashed_sessions")) of \(n("sessions")) sessions crashed), "
                + "below the \(n("target_percent")) % target."
        case .storageFull:
            return
                "The server's disk was full (\(n("free_mib")) MiB free, floor \(n("floor_mib")) MiB): ingest answered 507 "
                + "and background work paused until space returned."
        case .storageOK:
            return "The server's disk had space again (\(n("free_mib")) MiB free): ingest and background work resumed."
        case .quotaReached:
            return "\(alert.title): further events were refused (429) and counted as dropped for the rest of the "
                + "window (\(n("retry_after_seconds")) s); sessions were kept."
        }
    }
}
