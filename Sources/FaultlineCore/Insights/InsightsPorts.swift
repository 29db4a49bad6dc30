#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One release of a project with its stability.
public struct ReleaseRow: Sendable, Equatable {
    public var release: String
    public var firstSeen: Date
    public var lastSeen: Date
    /// Every session of the release (users distinct over the release's whole life).
    public var health: ReleaseHealth
    /// Share of the project's sessions in the last 7 days that ran this release (0…1); nil when the project had
    /// no sessions in that time.
    public var adoption: Double?
    /// Sessions of this release in the last 7 days.
    public var recentSessions: Int
    /// Issues first seen in this release.
    public var newIssues: Int
    public init(
        release: String, firstSeen: Date, lastSeen: Date, health: ReleaseHealth, adoption: Double?, recentSessions: Int,
        newIssues: Int
    ) {
        self.release = release
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.health = health
        self.adoption = adoption
        self.recentSessions = recentSessions
        self.newIssues = newIssues
    }
}

/// Which events a top-issues ranking counts.
public enum TopIssueWindow: Sendable, Equatable, Hashable {
    case last24Hours
    case last7Days
    case release(String)

    public var label: String {
        switch self {
        case .last24Hours: "last 24 hours"
        case .last7Days: "last 7 days"
        case .release(let r): "release \(r)"
        }
    }
}

extension InsightsReader {
    /// Issues of every kind ranked by users affected in `window`, then events.
    public func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws
        -> [TopIssue]
    {
        try await topIssues(project: project, window: window, category: nil, now: now, limit: limit)
    }
}

/// An issue ranked by the users it affected in a window.
public struct TopIssue: Sendable, Equatable {
    public var issue: IssueSummary
    /// Distinct users affected in the window.
    public var users: Int
    /// Events in the window.
    public var events: Int
    /// Distinct users and events of the issue in the window of the same length just before (the trend arrows);
    /// nil for a release's ranking, which has no window before it.
    public var previous: Counts?

    /// An issue's numbers in one window.
    public struct Counts: Sendable, Equatable {
        public var users: Int
        public var events: Int
        public init(users: Int, events: Int) {
            self.users = users
            self.events = events
        }
    }

    public init(issue: IssueSummary, users: Int, events: Int, previous: Counts? = nil) {
        self.issue = issue
        self.users = users
        self.events = events
        self.previous = previous
    }
}

/// A count of an issue's events by one value (a release, a device model, an OS, a user).
public struct BreakdownEntry: Sendable, Equatable {
    public var value: String
    public var events: Int
    /// The distinct users among those events, exact (`issue_tags.users`, counted from the per-user rows of migration
    /// `v40-tag-users`/`pg25-tag-users` on); nil for the user breakdown, whose values are users.
    public var users: Int?
    public init(value: String, events: Int, users: Int? = nil) {
        self.value = value
        self.events = events
        self.users = users
    }
}

/// An issue's activity in one release.
public struct IssueReleaseRow: Sendable, Equatable {
    public var release: String
    public var events: Int
    public var users: Int
    public var firstSeen: Date
    public var lastSeen: Date
    public init(release: String, events: Int, users: Int, firstSeen: Date, lastSeen: Date) {
        self.release = release
        self.events = events
        self.users = users
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
    }
}

/// An issue's activity on one day.
public struct IssueDay: Sendable, Equatable {
    public var day: DayNumber
    public var events: Int
    public var users: Int
    public init(day: DayNumber, events: Int, users: Int) {
        self.day = day
        self.events = events
        self.users = users
    }
}

/// Everything an issue page shows, except the sample events' contents.
public struct IssueDetail: Sendable, Equatable {
    public var summary: IssueSummary
    public var grouping: GroupingResult
    public var releases: [IssueReleaseRow]
    public var days: [IssueDay]
    /// Its events per hour over the last ``IssueSQL/chartedHours`` (hours with events only).
    public var hours: [IssueHour] = []
    /// Breakdowns by `device`, `os`, `environment` and `user` (most events first, top 10 each).
    public var breakdowns: [String: [BreakdownEntry]]
    /// Users who hit the issue more than once.
    public var repeatUsers: Int
    /// The newest events of the issue (at most 10), newest first.
    public var samples: [ReportSummary]
    /// The last change of the status (nil when it never changed).
    public var statusChange: IssueStatusChange?
    /// The team's free-text note on the issue (nil when there is none).
    public var note: String?
    /// The tracker issue opened for it (`TrackerURL`; nil when none was recorded).
    public var trackerURL: String? = nil
    /// The issue's version read with this detail (nil when the reader does not know it): a page rendered from this
    /// detail is current while ``InsightsReader/issueVersion(_:project:)`` still answers the same version.
    public var version: IssueVersion?
    public init(
        summary: IssueSummary, grouping: GroupingResult, releases: [IssueReleaseRow], days: [IssueDay],
        breakdowns: [String: [BreakdownEntry]], repeatUsers: Int, samples: [ReportSummary],
        statusChange: IssueStatusChange? = nil, note: String? = nil, version: IssueVersion? = nil
    ) {
        self.version = version
        self.statusChange = statusChange
        self.note = note
        self.summary = summary
        self.grouping = grouping
        self.releases = releases
        self.days = days
        self.breakdowns = breakdowns
        self.repeatUsers = repeatUsers
        self.samples = samples
    }
}

/// Filters, order and window of an issue listing.
public struct IssueQuery: Sendable, Equatable {
    public var project: ProjectID
    public var status: IssueStatus?
    /// Only issues in this release; their events, users and last seen are then those of the release.
    public var release: String?
    /// Only issues of this kind as the clients sent them (fatal or not: the release gate's crashes, fatal hangs
    /// among them).
    public var kind: ReportKind?
    /// Only crashes, hangs or non-fatal errors (``IssueCategory``: a hang is never listed with the crashes or
    /// non-fatals it was sent as).
    public var category: IssueCategory?
    /// true: only issues marked regressed (whatever their status); false: only those not marked; nil: both.
    public var regressed: Bool?
    /// The order (total, see ``IssueOrder``).
    public var order: IssueOrder
    /// Issues skipped from the start of the ordered list (paging).
    public var offset: Int
    public var limit: Int
    public init(
        project: ProjectID, status: IssueStatus? = nil, release: String? = nil, kind: ReportKind? = nil,
        category: IssueCategory? = nil, regressed: Bool? = nil, order: IssueOrder = .lastSeen, offset: Int = 0,
        limit: Int = 100
    ) {
        self.project = project
        self.status = status
        self.release = release
        self.kind = kind
        self.category = category
        self.regressed = regressed
        self.order = order
        self.offset = offset
        self.limit = limit
    }
}

/// Reads of issues, rollups and alerts (the dashboard and the JSON API). Every call reads rollup tables or a
/// bounded window of recent events, never a scan of everything stored.
public protocol InsightsReader: Sendable {
    /// Per-day health of a project (`release == nil`: all releases together), days without sessions omitted.
    func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws -> [DailyHealth]
    /// Releases of a project, newest first (at most `limit`).
    func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow]
    /// Issues ranked by users affected in `window`, then events; only issues of `category` when given (crashes, hangs
    /// and non-fatals are ranked apart: a timeout that reaches many users must not bury a crash).
    func topIssues(
        project: ProjectID, window: TopIssueWindow, category: IssueCategory?, now: Date, limit: Int
    ) async throws
        -> [TopIssue]
    /// Issues matching `query`'s filters, in its order, from its offset, at most its limit.
    func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary]
    /// The ids of the issues `issues(matching:now:)` answers, in the same order: for a render that needs to know
    /// which issues are listed but not their rows (read from an index alone where the engine can).
    func issueIDs(matching query: IssueQuery) async throws -> [IssueID]
    /// How many issues match `query`'s filters (its order, offset and limit do not count).
    func issueCount(matching query: IssueQuery) async throws -> Int
    /// One issue's page data; `project` limits the lookup when given.
    func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail?
    /// Issues of a project changed at or after `since` (for an incremental render).
    func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID]
    /// The versions of a project's issues changed at or after `since`, by issue (one indexed read: what a render
    /// cycle compares with the versions its pages were rendered from).
    func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion]
    /// The versions of these issues of `project` now, by issue (issues of another project or that do not exist
    /// are left out): what a full render compares with the versions its pages were rendered from, reading only
    /// the issues it lists, however many a project has.
    func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion]
    /// One issue's version now (nil: no such issue in `project`); a cheap read made before serving its page.
    func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion?
    /// Alerts of a project, newest first.
    func alerts(project: ProjectID, limit: Int) async throws -> [Alert]
    /// Open issues per status of a project.
    func issueCounts(project: ProjectID) async throws -> [IssueStatus: Int]
    /// The issue `issue` was merged into (`IssueMerge`), in `project` when given; nil when it was not.
    func replacement(of issue: IssueID, project: ProjectID?) async throws -> IssueID?
    /// The fingerprints merged into `issue`, oldest first: what an unmerge can split back out.
    func mergedFingerprints(of issue: IssueID) async throws -> [MergedFingerprint]
}

extension InsightsReader {
    /// A reader of a store without merges: no issue was merged.
    public func replacement(of issue: IssueID, project: ProjectID?) async throws -> IssueID? { nil }
    /// A reader of a store without merges: nothing was merged into any issue.
    public func mergedFingerprints(of issue: IssueID) async throws -> [MergedFingerprint] { [] }
}

/// What an issue page's own data was when it was read: every change of an issue (a new event, a regroup, a
/// status or note change, a pruned event) sets its change time and moves its counts, status or note, so two
/// reads with the same version read the same issue. (Two changes in the same millisecond that leave the event
/// count, status and note length alike would look the same; the next change or a full render renders the page.)
public struct IssueVersion: Sendable, Hashable {
    /// The issue's last change, milliseconds since 1970.
    public var changedAt: Int64
    public var events: Int64
    public var status: String
    /// The note's length in UTF-8 bytes, -1 when there is none.
    public var noteBytes: Int64
    public init(changedAt: Int64, events: Int64, status: String, noteBytes: Int64) {
        self.changedAt = changedAt
        self.events = events
        self.status = status
        self.noteBytes = noteBytes
    }
}

/// When an issue's status last changed, and who changed it.
public struct IssueStatusChange: Sendable, Equatable {
    public var at: Date
    /// Who changed it (`the dashboard (session 3)`, `the CLI`, `the API (admin token)`); nil when a new event
    /// reopened it as regressed, or for changes made before this was recorded.
    public var by: String?
    public init(at: Date, by: String?) {
        self.at = at
        self.by = by
    }
}

/// Changes of issue state made by people (CLI, API, dashboard).
public protocol IssueStateStore: Sendable {
    /// Sets the status; clears the regressed mark when an issue is closed or reopened by hand; records `by` and
    /// `date` as the last status change. Returns the issue after the change, or nil when no such issue (in
    /// `project`, when given) exists.
    func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String?, at date: Date) async throws
        -> IssueSummary?
    /// Sets the issue's note (nil clears it); false when no such issue (in `project`, when given) exists.
    func setNote(_ note: String?, issue: IssueID, project: ProjectID?, at date: Date) async throws -> Bool
    /// Sets the URL of the tracker issue opened for the issue (checked by `TrackerURL.validated` first; nil clears
    /// it); false when no such issue (in `project`, when given) exists.
    func setTrackerURL(_ url: String?, issue: IssueID, project: ProjectID?, at date: Date) async throws -> Bool
    /// Merges `others` into `survivor`, all of `project` (nil: the survivor's), in one transaction (`IssueMerge`):
    /// throws `IssueMergeError` when the merge is refused (nothing changed then).
    func merge(_ others: [IssueID], into survivor: IssueID, project: ProjectID?, by: String?, at date: Date)
        async throws -> IssueMergeResult
    /// Splits `fingerprint`, merged into `survivor` (of `project`, when given), back out: the alias goes and the
    /// survivor's reports are queued to be filed again. Throws `IssueMergeError` when it was not merged into it.
    func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?, at date: Date) async throws
        -> IssueUnmergeResult
}

extension IssueStateStore {
    /// ``setStatus(_:issue:project:by:at:)`` without saying who.
    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, at date: Date) async throws
        -> IssueSummary?
    {
        try await setStatus(status, issue: issue, project: project, by: nil, at: date)
    }
}

/// An issue note's limits.
public enum IssueNote {
    /// Most UTF-8 bytes a note may have.
    public static let maxBytes = 2048

    /// The note to store for `text`: trimmed, nil when empty; throws when it is too long or holds control
    /// characters other than line breaks and tabs.
    public static func validated(_ text: String) throws(IssueNoteError) -> String? {
        let trimmed = Substring(text).drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()
        let note = String(trimmed)
        if note.isEmpty { return nil }
        guard note.utf8.count <= maxBytes else { throw .tooLong }
        for scalar in note.unicodeScalars {
            let allowed =
                scalar == "\n" || scalar == "\r" || scalar == "\t" || (scalar.value >= 0x20 && scalar.value != 0x7f)
            if !allowed { throw .controlCharacters }
        }
        return note
    }
}

/// Why a note was refused.
public enum IssueNoteError: Error, Equatable, CustomStringConvertible {
    case tooLong
    case controlCharacters
    public var description: String {
        switch self {
        case .tooLong: "a note has at most \(IssueNote.maxBytes) bytes"
        case .controlCharacters: "a note holds text, line breaks and tabs only"
        }
    }
}

/// Events SDKs dropped before sending (Sentry client reports), summed per day.
public struct DroppedEvents: Sendable, Equatable {
    public var day: DayNumber
    public var reason: String
    public var category: String
    public var quantity: Int
    public init(day: DayNumber, reason: String, category: String, quantity: Int) {
        self.day = day
        self.reason = reason
        self.category = category
        self.quantity = quantity
    }
}

/// Reads of the dropped-event statistics.
public protocol ClientReportReader: Sendable {
    /// Per day, reason and category, newest day first, from `from` on.
    func droppedEvents(project: ProjectID, from: DayNumber) async throws -> [DroppedEvents]
}
