#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-project alerting thresholds. Defaults follow Crashlytics (velocity) and leave the stability target off
/// until a team sets one.
public struct AlertSettings: Sendable, Equatable, Codable {
    /// Velocity: share of a release's sessions in the window that crashed with the issue, in percent.
    public var velocityPercent: Double = 1
    /// Velocity: at least this many distinct users affected by the issue in the window.
    public var velocityMinUsers: Int = 25
    /// Velocity: at least this many users on the release in the window (small releases are all noise).
    public var velocityMinReleaseUsers: Int = 10
    /// Velocity: the window, in minutes.
    public var velocityWindowMinutes: Int = 30
    /// Stability target for crash-free sessions, in percent (e.g. 99.5); nil = no target.
    public var crashFreeTarget: Double?
    /// The target is judged only on days with at least this many sessions (of the release).
    public var crashFreeMinSessions: Int = 100
    /// Alert when an issue is seen for the first time.
    public var alertOnNewIssue = true
    /// Alert when a closed issue regresses.
    public var alertOnRegression = true
    /// At most this many new issues a window (`newIssueWindowMinutes`); past it, reports whose fingerprint has no
    /// issue are held in the project's overflow issue and the window raises one folded alert (`IssueFiling`).
    public var newIssueCap = 100
    /// The window of `newIssueCap`, in minutes (fixed windows counted from 1970: an hour starts on the hour).
    public var newIssueWindowMinutes = 60
    /// Where alerts are POSTed (Slack-compatible JSON); nil = recorded and shown only.
    public var webhookURL: String?
    public init() {}

    /// Decodes settings; a missing key keeps its default, so `{"crash_free_target": 99.5}` is a complete document.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        velocityPercent = try c.decodeIfPresent(Double.self, forKey: .velocityPercent) ?? velocityPercent
        velocityMinUsers = try c.decodeIfPresent(Int.self, forKey: .velocityMinUsers) ?? velocityMinUsers
        velocityMinReleaseUsers =
            try c.decodeIfPresent(Int.self, forKey: .velocityMinReleaseUsers) ?? velocityMinReleaseUsers
        velocityWindowMinutes = try c.decodeIfPresent(Int.self, forKey: .velocityWindowMinutes) ?? velocityWindowMinutes
        crashFreeTarget = try c.decodeIfPresent(Double.self, forKey: .crashFreeTarget)
        crashFreeMinSessions = try c.decodeIfPresent(Int.self, forKey: .crashFreeMinSessions) ?? crashFreeMinSessions
        alertOnNewIssue = try c.decodeIfPresent(Bool.self, forKey: .alertOnNewIssue) ?? alertOnNewIssue
        alertOnRegression = try c.decodeIfPresent(Bool.self, forKey: .alertOnRegression) ?? alertOnRegression
        newIssueCap = try c.decodeIfPresent(Int.self, forKey: .newIssueCap) ?? newIssueCap
        newIssueWindowMinutes = try c.decodeIfPresent(Int.self, forKey: .newIssueWindowMinutes) ?? newIssueWindowMinutes
        webhookURL = try c.decodeIfPresent(String.self, forKey: .webhookURL)
    }

    /// What is wrong with these settings (a snake_case field name and why), or nil when they are usable.
    public var problem: (field: String, message: String)? {
        if !(velocityPercent > 0 && velocityPercent <= 100) {
            return ("velocity_percent", "must be above 0 and at most 100")
        }
        if velocityMinUsers < 1 { return ("velocity_min_users", "must be at least 1") }
        if velocityMinReleaseUsers < 0 { return ("velocity_min_release_users", "must not be negative") }
        if !(1...1440).contains(velocityWindowMinutes) { return ("velocity_window_minutes", "must be 1 to 1440") }
        if let t = crashFreeTarget, !(t > 0 && t <= 100) {
            return ("crash_free_target", "must be above 0 and at most 100")
        }
        if crashFreeMinSessions < 1 { return ("crash_free_min_sessions", "must be at least 1") }
        if !(1...Self.maxNewIssueCap).contains(newIssueCap) {
            return ("new_issue_cap", "must be 1 to \(Self.maxNewIssueCap)")
        }
        if !(1...10_080).contains(newIssueWindowMinutes) {
            return ("new_issue_window_minutes", "must be 1 to 10080 (a week)")
        }
        if let url = webhookURL, !url.isEmpty {
            do throws(WebhookTargetProblem) { _ = try WebhookTarget.parse(url) } catch {
                return ("webhook_url", error.message)
            }
        }
        return nil
    }

    /// The highest `newIssueCap` a project may set: the cap bounds what one client can make the server store,
    /// render and send.
    public static let maxNewIssueCap = 10_000

    enum CodingKeys: String, CodingKey {
        case velocityPercent = "velocity_percent", velocityMinUsers = "velocity_min_users"
        case velocityMinReleaseUsers = "velocity_min_release_users", velocityWindowMinutes = "velocity_window_minutes"
        case crashFreeTarget = "crash_free_target", crashFreeMinSessions = "crash_free_min_sessions"
        case alertOnNewIssue = "alert_on_new_issue", alertOnRegression = "alert_on_regression", webhookURL =
            "webhook_url"
        case newIssueCap = "new_issue_cap", newIssueWindowMinutes = "new_issue_window_minutes"
    }

    public func encode(to encoder: any Encoder) throws {
        // Explicit nulls, so a GET shows every setting there is.
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(velocityPercent, forKey: .velocityPercent)
        try c.encode(velocityMinUsers, forKey: .velocityMinUsers)
        try c.encode(velocityMinReleaseUsers, forKey: .velocityMinReleaseUsers)
        try c.encode(velocityWindowMinutes, forKey: .velocityWindowMinutes)
        try c.encode(crashFreeTarget, forKey: .crashFreeTarget)
        try c.encode(crashFreeMinSessions, forKey: .crashFreeMinSessions)
        try c.encode(alertOnNewIssue, forKey: .alertOnNewIssue)
        try c.encode(alertOnRegression, forKey: .alertOnRegression)
        try c.encode(newIssueCap, forKey: .newIssueCap)
        try c.encode(newIssueWindowMinutes, forKey: .newIssueWindowMinutes)
        try c.encode(webhookURL, forKey: .webhookURL)
    }
}

/// The kinds of alert.
public enum AlertKind: String, Sendable, Codable, CaseIterable {
    case newIssue = "new_issue"
    case regression
    case velocity
    case crashFreeTarget = "crash_free_target"
    /// The server's disk is full (`StoragePressurePolicy`): ingest answers 507 until space returns. Server-wide,
    /// recorded once per entry for every project with a webhook.
    case storageFull = "storage_full"
    /// The disk has space again after a `storageFull`: ingest and background work resumed.
    case storageOK = "storage_ok"
    /// A project reached one of its event quotas (`EventQuotas`): its events are refused (429) and counted as dropped
    /// until the window ends; sessions still flow. Recorded once per project, quota and window.
    case quotaReached = "quota_reached"
}

/// An alert that fired, with the numbers that made it fire.
public struct Alert: Sendable, Equatable {
    public var id: Int64
    public var project: ProjectID
    public var kind: AlertKind
    public var issue: IssueID?
    public var release: String?
    public var title: String
    /// Why it fired: named numbers (e.g. `issue_sessions`, `release_sessions`, `share_percent`).
    public var reason: [String: Double]
    public var createdAt: Date
    public init(
        id: Int64, project: ProjectID, kind: AlertKind, issue: IssueID?, release: String?, title: String,
        reason: [String: Double], createdAt: Date
    ) {
        self.id = id
        self.project = project
        self.kind = kind
        self.issue = issue
        self.release = release
        self.title = title
        self.reason = reason
        self.createdAt = createdAt
    }
}

/// An alert about to be recorded. `dedupeKey` makes firing idempotent: one velocity alert per issue and release,
/// one target alert per release and day, one new-issue alert per issue.
public struct AlertDraft: Sendable, Equatable {
    public var project: ProjectID
    public var kind: AlertKind
    public var dedupeKey: String
    public var issue: IssueID?
    public var release: String?
    public var title: String
    public var reason: [String: Double]
    public init(
        project: ProjectID, kind: AlertKind, dedupeKey: String, issue: IssueID?, release: String?, title: String,
        reason: [String: Double]
    ) {
        self.project = project
        self.kind = kind
        self.dedupeKey = dedupeKey
        self.issue = issue
        self.release = release
        self.title = title
        self.reason = reason
    }
}

/// An issue's activity in one release over the velocity window, and the release's own.
public struct VelocityWindow: Sendable, Equatable {
    public var issue: IssueID
    public var release: String
    /// Distinct sessions that crashed with the issue in the window.
    public var issueSessions: Int
    /// Distinct users affected by the issue in the window.
    public var issueUsers: Int
    /// Sessions of the release active in the window.
    public var releaseSessions: Int
    /// Distinct users of the release active in the window.
    public var releaseUsers: Int
    public init(
        issue: IssueID, release: String, issueSessions: Int, issueUsers: Int, releaseSessions: Int, releaseUsers: Int
    ) {
        self.issue = issue
        self.release = release
        self.issueSessions = issueSessions
        self.issueUsers = issueUsers
        self.releaseSessions = releaseSessions
        self.releaseUsers = releaseUsers
    }
}

/// The alert rules (DESIGN.md). Pure: the numbers come in, a decision and its reason go out.
public enum AlertRules {
    /// Velocity (Crashlytics): the issue's crashed sessions exceed `velocityPercent` of the release's sessions in
    /// the window, at least `velocityMinUsers` users are affected, and the release had at least
    /// `velocityMinReleaseUsers` users. Returns the reason when it fires.
    public static func velocity(_ w: VelocityWindow, settings: AlertSettings) -> [String: Double]? {
        guard w.releaseSessions > 0, w.releaseUsers >= settings.velocityMinReleaseUsers,
            w.issueUsers >= settings.velocityMinUsers
        else { return nil }
        let share = Double(w.issueSessions) / Double(w.releaseSessions) * 100
        guard share > settings.velocityPercent else { return nil }
        return [
            "issue_sessions": Double(w.issueSessions), "release_sessions": Double(w.releaseSessions),
            "share_percent": (share * 100).rounded() / 100, "threshold_percent": settings.velocityPercent,
            "issue_users": Double(w.issueUsers), "min_users": Double(settings.velocityMinUsers),
            "release_users": Double(w.releaseUsers), "window_minutes": Double(settings.velocityWindowMinutes),
        ]
    }

    /// Stability target: crash-free sessions of a day below the target, on a day with enough sessions.
    public static func belowTarget(_ health: ReleaseHealth, settings: AlertSettings) -> [String: Double]? {
        guard let target = settings.crashFreeTarget, health.sessions >= settings.crashFreeMinSessions,
            let rate = health.crashFreeSessions, rate * 100 < target
        else { return nil }
        return [
            "crash_free_sessions_percent": (rate * 10_000).rounded() / 100, "target_percent": target,
            "sessions": Double(health.sessions), "crashed_sessions": Double(health.crashedSessions),
            "users": Double(health.users), "crashed_users": Double(health.crashedUsers),
        ]
    }

    /// Regression: a closed issue that receives an event from a release it had not been seen in. Muted issues
    /// stay muted; an event without a release cannot regress anything.
    public static func regresses(status: IssueStatus, release: String?, seenInRelease: Bool) -> Bool {
        status == .closed && release != nil && !seenInRelease
    }

    /// The Slack-compatible one-line text of an alert.
    ///
    /// Every value that comes from reports or projects (title, release, slug, link) is escaped with
    /// ``SlackText/escape(_:)``: an error typed `<!channel>` or a message `<https://evil.example|Reset your password>`
    /// must reach the channel as text, not as a mention or a disguised link.
    public static func text(
        project: String, kind: AlertKind, title: String, release: String?, reason: [String: Double],
        link: String?
    ) -> String {
        func n(_ key: String) -> String {
            guard let v = reason[key], v.isFinite else { return "?" }
            if v == v.rounded(), let whole = Int(exactly: v) { return String(whole) }
            return String(v)
        }
        let project = SlackText.escape(project)
        let title = SlackText.escape(title)
        let release = release.map(SlackText.escape)
        let link = link.map(SlackText.escape)
        var text: String
        switch kind {
        case .newIssue where reason[IssueAlerts.heldCapKey] != nil:
            text = "[\(project)] \(title)"
        case .newIssue: text = "[\(project)] New issue: \(title)"
        case .regression: text = "[\(project)] Regressed in \(release ?? "?"): \(title)"
        case .velocity:
            text =
                "[\(project)] Trending in \(release ?? "?"): \(title) — \(n("issue_sessions")) of \(n("release_sessions")) sessions "
                + "(\(n("share_percent")) % > \(n("threshold_percent")) %), \(n("issue_users")) users in \(n("window_minutes")) min"
        case .crashFreeTarget:
            text =
                "[\(project)] Crash-free sessions \(n("crash_free_sessions_percent")) % below target \(n("target_percent")) % "
                + "in \(release ?? "all releases") (\(n("crashed_sessions")) crashed of \(n("sessions")))"
        case .storageFull:
            text =
                "[\(project)] Storage full on the Faultline server: ingest answers 507 until space returns "
                + "(\(n("free_mib")) MiB free, floor \(n("floor_mib")) MiB)"
        case .storageOK:
            text = "[\(project)] Storage OK again on the Faultline server: ingest resumed (\(n("free_mib")) MiB free)"
        case .quotaReached:
            text =
                "[\(project)] \(title): events are refused and counted as dropped for \(n("retry_after_seconds")) s; "
                + "sessions still count"
        }
        if let link { text += " <\(link)>" }
        return text
    }
}

/// The alerts a filing decision raises (`IssueFiling.Action`), drafted the same way by every storage engine.
public enum IssueAlerts {
    /// The reason key of the folded alert that stands for the new issues held past the cap.
    public static let heldCapKey = "new_issue_cap"

    /// What an engine knows when it drafts a filing's alert.
    public struct Context: Sendable, Equatable {
        public var project: ProjectID
        /// The report's issue after the decision (the overflow issue for `.alertNewIssuesHeld`).
        public var issue: Int64
        /// The issue's title now.
        public var title: String
        public var release: String?
        /// When the report occurred (milliseconds).
        public var occurredAt: Int64
        /// When it is filed (milliseconds, the server's clock): the cap's window.
        public var now: Int64
        public init(project: ProjectID, issue: Int64, title: String, release: String?, occurredAt: Int64, now: Int64) {
            self.project = project
            self.issue = issue
            self.title = title
            self.release = release
            self.occurredAt = occurredAt
            self.now = now
        }
    }

    /// The alert of a filing action (`.alertNewIssue`, `.alertNewIssuesHeld`, `.alertRegression`); nil for any other.
    /// The dedupe key makes it fire once: per issue (new), per issue and release (regression), per project and
    /// window of the new-issue cap (held).
    public static func draft(_ action: IssueFiling.Action, _ c: Context, settings: AlertSettings) -> AlertDraft? {
        switch action {
        case .alertNewIssue:
            return AlertDraft(
                project: c.project, kind: .newIssue, dedupeKey: "new:\(c.issue)", issue: IssueID(c.issue),
                release: c.release,
                title: c.title, reason: ["events": 1])
        case .alertNewIssuesHeld:
            return held(c, settings: settings)
        case .alertRegression:
            return AlertDraft(
                project: c.project, kind: .regression, dedupeKey: "regression:\(c.issue):\(c.release ?? "")",
                issue: IssueID(c.issue),
                release: c.release, title: c.title, reason: ["first_event_in_release_at_ms": Double(c.occurredAt)])
        default:
            return nil
        }
    }

    /// The window's folded new-issue alert: the cap was reached, and the new issues after it are held in the overflow
    /// issue (how many: that issue's events).
    static func held(_ c: Context, settings: AlertSettings) -> AlertDraft {
        let window = IssueFiling.window(containing: c.now, minutes: settings.newIssueWindowMinutes)
        return AlertDraft(
            project: c.project, kind: .newIssue, dedupeKey: "new-held:\(window.lowerBound)", issue: IssueID(c.issue),
            release: nil,
            title: "More than \(settings.newIssueCap) new issues in \(settings.newIssueWindowMinutes) min: "
                + "further new issues are held in one issue, not announced",
            reason: [
                heldCapKey: Double(settings.newIssueCap), "window_minutes": Double(settings.newIssueWindowMinutes),
                "window_start_ms": Double(window.lowerBound),
            ])
    }
}

/// Slack's message formatting rules for text from elsewhere.
public enum SlackText {
    /// Escapes `&`, `<` and `>` as `&amp;`, `&lt;` and `&gt;` — the three characters Slack's `mrkdwn` gives meaning
    /// to (`<!channel>`, `<@U123>`, `<url|label>`). Slack shows the escaped text as typed.
    public static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
