import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/issues/<id>.html`: one issue, the crash first (docs/insights.md, "The issue page"): title, culprit, key
/// numbers and status actions; the latest sample event in full (its error, the crashed thread's stack, breadcrumbs,
/// keys, device, the other threads folded) with links to its own page; then activity, breakdowns, why it was
/// grouped, the samples (each linked to its event page) and the note.
struct IssuePage {
    /// The issue's activity in one release.
    struct ReleaseActivity {
        var release: ReleaseLink
        var releaseEvents: Int
        var releaseUsers: Int
        var firstSeen: TimeView
        var lastSeen: TimeView
    }

    /// Events and users counted by one dimension (device, OS, environment, build), or events by user.
    struct Breakdown {
        struct Entry {
            var entryValue: String
            var entryEvents: Int
            /// The value's share of the issue's events ("62 %"); nil for the users, counted among recent reports only.
            var entryShare: String?
            /// The distinct users among the value's events, exact (0 in the users' own breakdown, which has no such
            /// column).
            var entryUsers: Int
            /// Those users' share of the issue's users ("41 %"), as Crashlytics gives it; nil without the column.
            var entryUserShare: String?
        }
        var breakdownHeading: String
        var breakdownCaption: String
        var valueHeader: String
        var entries: [Entry]
        var hasEntries: Bool
        var hasShare: Bool
        /// Whether the table has the users columns: every dimension but the users themselves, when the issue has users
        /// (none when its reports carry no user id).
        var hasUsers: Bool
    }

    /// One of the newest events.
    struct Sample {
        var sampleEventID: String
        /// Its own page (`../events/<id>`, served live).
        var sampleHref: String
        var sampleTime: TimeView
        var sampleRelease: String
        var sampleUser: String
    }

    var chrome: PageChrome
    var projectName: String
    var issueNumber: String
    /// The stored title, as lists and alerts show it.
    var issueTitle: String
    /// The title as this page's heading shows it (`IssueTitle.display`: no repeated signal name).
    var displayTitle: String
    var culpritText: String?
    var kindText: String
    /// The error code the issue's events share (`-1001`), shown in the header beside the kind.
    var errorCode: String?
    var statusBadge: Badge
    var signalBadges: [Badge]
    var hasSignals: Bool
    /// The velocity alert's numbers when the issue is trending (``TrendingMarks``).
    var trending: TrendingMarkView?
    /// The project's alerts page, relative to this page.
    var alertsHref: String
    var firstSeen: TimeView
    var lastSeen: TimeView
    var firstRelease: ReleaseLink?
    var lastRelease: ReleaseLink?
    var events: Int
    var users: Int
    var repeatUsers: Int
    /// Events in the last 7 days against the 7 days before (from the daily counts).
    var eventsTrend: TrendView
    /// Links through the issue's events from the one shown (its own page, the next older one).
    var eventNavigation: [EventNavigation.Link]
    var hasEventNavigation: Bool
    var charts: [ChartBlock]
    var releaseActivity: [ReleaseActivity]
    var hasReleaseActivity: Bool
    var breakdowns: [Breakdown]
    var groupingExplanation: String
    var groupingComponents: [String]
    var fingerprint: String
    var samples: [Sample]
    var hasSamples: Bool
    var latestEvent: SampleEventView?
    /// "12 frames lack a dSYM for UUID … (App, arm64)", one per Mach-O module of the latest event that was
    /// symbolicated without its dSYM.
    var missingDSYMNotes: [String]
    var hasMissingDSYMNotes: Bool
    var missingDebugFilesHref: String
    var eventMissingText: String?
    var issuesHref: String
    /// One button of the status form.
    struct StatusAction {
        var actionStatus: String
        var actionLabel: String
    }
    /// The status form's buttons: every status a person can set other than the current one.
    var statusActions: [StatusAction]
    /// Where the status form posts, relative to this page (`<id>/status`).
    var statusActionHref: String
    /// When the status last changed, and who changed it (nil: unknown, or a new event reopened it).
    var statusChangedAt: TimeView?
    /// Who: a person's name (``StatusChanger/shown(_:)``), `the CLI`, `the API (upload token)`…
    var statusChangedBy: String?
    /// What the change was, for the sentence "Closed … by Ada": Closed, Muted or Reopened.
    var statusChangeVerb: String
    /// The team's note, escaped by the template; nil when there is none.
    var noteText: String?
    /// Where the note form posts, relative to this page (`<id>/note`).
    var noteActionHref: String
    var noteMaxBytes: Int
    /// The "Open in tracker" link and the tracker issue's field (``TrackerView``).
    var tracker: TrackerView
    /// Where the merge form posts, relative to this page (`<id>/merge`): the issues it names merge into this one.
    var mergeActionHref: String
    /// The fingerprints merged into this issue, each with its unmerge form (`showMerged(_:)`).
    var mergedFingerprints: [MergedFingerprintView] = []
    var hasMergedFingerprints = false
    /// The events refused past a quota that the client's fingerprint put in this issue (`showDropped(_:)`); nil
    /// when there were none.
    var droppedText: String?

    /// - Parameters:
    ///   - event: the newest sample in full, nil when there is none or it was pruned.
    ///   - releases: releases that have a page.
    ///   - inApp: the project's in-app rules (frame badges and folding).
    ///   - sourceExcerpts: source lines for the event's in-app frames.
    ///   - trending: the issue's trending mark, nil when it is not trending.
    init(
        slug: ProjectSlug, detail: IssueDetail, event: (report: Report, symbols: SymbolicatedReport?)?,
        releases: Set<String>, now: Date, inApp: InAppRules = .none,
        sourceExcerpts: [CodeLocation: SourceExcerpt] = [:],
        trending: TrendingMarkView? = nil, tracker: IssueTracker? = nil, publicURL: String? = nil
    ) {
        let issue = detail.summary
        let path = SitePaths.issue(slug, issue.id)
        func link(_ release: String) -> ReleaseLink { ReleaseLink(release, slug: slug, from: path, rendered: releases) }
        chrome = PageChrome(path: path, title: "Issue \(issue.id.rawValue)", project: slug, now: now)
        projectName = slug.rawValue
        issueNumber = String(issue.id.rawValue)
        issueTitle = issue.title.isEmpty ? "Issue \(issue.id.rawValue)" : issue.title
        displayTitle = IssueTitle.display(issueTitle)
        culpritText = issue.culprit.flatMap { $0.isEmpty ? nil : $0 }
        switch issue.category {  // as filing stored it (`IssueCategory`)
        case .crash: kindText = "crash"
        case .hang: kindText = "hang or ANR"
        case .nonFatal: kindText = "non-fatal error"
        }
        errorCode = issue.errorCode
        statusBadge = .status(issue.status)
        signalBadges = Badge.signals(issue.signals)
        hasSignals = !signalBadges.isEmpty
        self.trending = trending
        alertsHref = SitePaths.relative(from: path, to: SitePaths.alerts(slug))
        firstSeen = TimeView(issue.firstSeen)
        lastSeen = TimeView(issue.lastSeen)
        firstRelease = issue.firstRelease.map(link)
        lastRelease = issue.lastRelease.map(link)
        events = issue.events
        users = issue.users
        repeatUsers = detail.repeatUsers

        let today = DayNumber(now)
        eventsTrend = Self.weekTrend(detail.days, today: today)
        charts = [
            // Hour by hour first: a one-hour spike is a bar of its own, not part of a day's.
            .hourlyEvents(
                id: "chart-events-48h", hours: detail.hours, last: IssueHour.number(of: now),
                length: IssueSQL.chartedHours),
            .events(id: "chart-events-30", days: detail.days, last: today, length: 30),
            .events(id: "chart-events-90", days: detail.days, last: today, length: 90),
        ]
        releaseActivity = detail.releases.map {
            ReleaseActivity(
                release: link($0.release), releaseEvents: $0.events, releaseUsers: $0.users,
                firstSeen: TimeView($0.firstSeen), lastSeen: TimeView($0.lastSeen))
        }
        hasReleaseActivity = !releaseActivity.isEmpty
        breakdowns = Self.breakdowns(
            detail.breakdowns, events: detail.summary.events, users: detail.summary.users)
        groupingExplanation = Self.explanation(detail.grouping.source)
        groupingComponents = detail.grouping.components
        fingerprint = detail.grouping.fingerprint.rawValue
        samples = detail.samples.map {
            Sample(
                sampleEventID: $0.eventID.rawValue,
                sampleHref: SitePaths.relative(from: path, to: SitePaths.event(slug, $0.eventID)),
                sampleTime: TimeView($0.timestamp),
                sampleRelease: $0.release ?? "none",
                sampleUser: $0.userKey ?? "unknown")
        }
        hasSamples = !samples.isEmpty
        let title = issueTitle
        latestEvent = event.map {
            SampleEventView(report: $0.report, symbols: $0.symbols, inApp: inApp, sources: sourceExcerpts, title: title)
        }
        eventNavigation =
            latestEvent == nil ? [] : EventNavigation.fromIssuePage(samples: detail.samples, slug: slug, from: path)
        hasEventNavigation = !eventNavigation.isEmpty
        missingDSYMNotes = event.map { MissingDSYMNotes.lines(report: $0.report, symbols: $0.symbols) } ?? []
        hasMissingDSYMNotes = !missingDSYMNotes.isEmpty
        missingDebugFilesHref = SitePaths.relative(from: path, to: SitePaths.missingDebugFiles(slug))
        if latestEvent == nil {
            eventMissingText =
                detail.samples.isEmpty
                ? "No sample event is stored for this issue."
                : "The latest sample event is no longer stored (it was pruned)."
        }
        issuesHref = SitePaths.relative(from: path, to: SitePaths.issues(slug))
        statusActions = DashboardForms.settableStatuses.filter { $0 != issue.status }.map {
            switch $0 {
            case .open: StatusAction(actionStatus: $0.rawValue, actionLabel: "Reopen")
            case .closed: StatusAction(actionStatus: $0.rawValue, actionLabel: "Close")
            case .muted: StatusAction(actionStatus: $0.rawValue, actionLabel: "Mute")
            }
        }
        statusActionHref = "\(issue.id.rawValue)/status"
        statusChangedAt = detail.statusChange.map { TimeView($0.at) }
        statusChangedBy = detail.statusChange?.by.map(StatusChanger.shown)
        statusChangeVerb =
            switch issue.status {
            case .closed: "Closed"
            case .muted: "Muted"
            case .open: "Reopened"
            }
        noteText = detail.note
        noteActionHref = "\(issue.id.rawValue)/note"
        noteMaxBytes = IssueNote.maxBytes
        self.tracker = TrackerView(tracker: tracker, detail: detail, page: path, publicURL: publicURL)
        mergeActionHref = "\(issue.id.rawValue)/merge"
    }

    /// Events in the 7 days ending `today` against the 7 days before them.
    static func weekTrend(_ days: [IssueDay], today: DayNumber) -> TrendView {
        var recent = 0
        var before = 0
        for day in days {
            let age = today.rawValue.subtractingReportingOverflow(day.day.rawValue)
            guard !age.overflow, age.partialValue >= 0, age.partialValue < 14 else { continue }
            if age.partialValue < 7 {
                recent = recent.addingReportingOverflow(day.events).partialValue
            } else {
                before = before.addingReportingOverflow(day.events).partialValue
            }
        }
        return TrendView.count(recent, before: before, noun: "event", window: "the 7 days")
    }

    /// Why the events of an issue belong together, for each grouping source.
    static func explanation(_ source: GroupingResult.Source) -> String {
        switch source {
        case .client:
            "The app sent its own fingerprint, which wins over the one the server computes."
        case .stack:
            "Grouped by the crashing thread's frames: in-app frames first, function names without addresses, offsets, "
                + "line numbers or specialization noise, runtime and trap frames left out."
        case .error:
            "Grouped by the error's type or domain and code, with its top frames."
        case .message:
            "No usable frames and no error type: grouped by the message, with numbers and quoted values masked."
        case .rule:
            "Grouped by one of the project's fingerprint rules (settings, Grouping), whose fingerprint replaces the "
                + "computed one."
        case .overflow:
            "Not grouped: the project had made as many new issues as its cap allows in this window, so reports that "
                + "would have opened another issue are kept here (alert setting new_issue_cap)."
        }
    }

    static let dimensions: [(key: String, heading: String, header: String)] = [
        ("device", "Devices", "Device"), ("os", "Operating systems", "Operating system"),
        ("environment", "Environments", "Environment"), ("build", "Builds", "Build"), ("user", "Users", "User"),
    ]

    /// The breakdowns of an issue of `events` events and `users` users: each value with its events and, but for the
    /// users, its share of all the issue's events, its distinct users and their share of the issue's users (the tag
    /// counts cover every event; the users breakdown only the newest reports kept).
    static func breakdowns(_ all: [String: [BreakdownEntry]], events: Int = 0, users: Int = 0) -> [Breakdown] {
        let known = Set(dimensions.map(\.key))
        let extra = all.keys.filter { !known.contains($0) }.sorted().map { (key: $0, heading: $0, header: $0) }
        return (dimensions + extra).map { dimension in
            let shared = dimension.key != "user" && events > 0
            let counted = dimension.key != "user" && users > 0
            let entries = (all[dimension.key] ?? []).map {
                // Apple's machine ids read as names: "iPhone 14 Pro (iPhone15,2)".
                Breakdown.Entry(
                    entryValue: dimension.key == "device" ? AppleDeviceNames.display(model: $0.value) : $0.value,
                    entryEvents: $0.events,
                    entryShare: shared ? percent($0.events, of: events) : nil,
                    entryUsers: $0.users ?? 0, entryUserShare: counted ? percent($0.users ?? 0, of: users) : nil)
            }
            // Users are counted from the retained reports (the rollups hold keyed hashes, RollupUser): the caption says so.
            let caption =
                dimension.key == "user"
                ? "Events by user, in the reports still kept"
                : "\(counted ? "Events and users" : "Events") by \(dimension.header.lowercased())"
            return Breakdown(
                breakdownHeading: dimension.heading, breakdownCaption: caption,
                valueHeader: dimension.header, entries: entries, hasEntries: !entries.isEmpty, hasShare: shared,
                hasUsers: counted)
        }
    }

    /// `part` of `whole` (above 0) as "41.5 %", never above 100 %.
    static func percent(_ part: Int, of whole: Int) -> String {
        Format.trimmed(Double(min(max(part, 0), whole)) * 100 / Double(whole), places: 1) + " %"
    }
}
