#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How many events (crashes, non-fatal errors, minidumps) a project may send per minute, hour and calendar month
/// (UTC), like Sentry's and Bugsink's quotas; nil is no quota for that window. Past any of them events are refused
/// (429 with `Retry-After` until the window ends) and counted as dropped. Sessions are never under a quota: they are
/// what crash-free rates are made of.
public struct EventQuotas: Sendable, Equatable {
    public var perMinute: Int?
    public var perHour: Int?
    public var perMonth: Int?

    public init(perMinute: Int? = nil, perHour: Int? = nil, perMonth: Int? = nil) {
        self.perMinute = perMinute
        self.perHour = perHour
        self.perMonth = perMonth
    }

    /// The quota of `window`, if any.
    public subscript(window: QuotaWindow) -> Int? {
        switch window {
        case .minute: perMinute
        case .hour: perHour
        case .month: perMonth
        }
    }

    /// True when no window has a quota.
    public var isEmpty: Bool { perMinute == nil && perHour == nil && perMonth == nil }

    /// The largest quota a window may have (a billion events; a stored value fits every engine's integer).
    public static let maxValue = 1_000_000_000

    /// Why `value` cannot be a quota, or nil when it can (1 … ``maxValue``).
    public static func problem(_ value: Int) -> String? {
        (1...maxValue).contains(value) ? nil : "must be from 1 to \(maxValue)"
    }
}

/// A quota's window: a fixed minute, hour or calendar month (UTC), as Sentry counts them, not a sliding one.
public enum QuotaWindow: String, Sendable, CaseIterable, Comparable {
    case minute, hour, month

    public static func < (a: Self, b: Self) -> Bool { a.seconds < b.seconds }

    /// The window's length in seconds (a month as its shortest, 28 days: only the order matters).
    var seconds: Int64 {
        switch self {
        case .minute: 60
        case .hour: 3600
        case .month: 28 * 86_400
        }
    }

    /// The first second (since 1970, UTC) of the window that holds `second`.
    public func start(of second: Int64) -> Int64 {
        switch self {
        case .minute: return Self.floor(second, 60)
        case .hour: return Self.floor(second, 3600)
        case .month:
            let (year, month) = Self.civil(day: Self.floor(second, 86_400) / 86_400)
            return Self.days(year: year, month: month) * 86_400
        }
    }

    /// The first second after the window that starts at `start`.
    public func end(ofWindowStartingAt start: Int64) -> Int64 {
        switch self {
        case .minute: return start &+ 60
        case .hour: return start &+ 3600
        case .month:
            let (year, month) = Self.civil(day: start / 86_400)
            return (month == 12 ? Self.days(year: year + 1, month: 1) : Self.days(year: year, month: month + 1))
                * 86_400
        }
    }

    /// Whole seconds since 1970 of `date`, clamped to ±10,000 years (no trap on any date, NaN is 0).
    public static func second(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return 0 }
        return Int64(min(max(seconds.rounded(.down), -315_569_520_000), 315_569_520_000))
    }

    static func floor(_ value: Int64, _ divisor: Int64) -> Int64 {
        let remainder = value % divisor
        return remainder < 0 ? value - remainder - divisor : value - remainder
    }

    /// The first day (UTC) of the calendar month that holds `date`: where a month's quota counts start.
    public static func firstDayOfMonth(_ date: Date) -> DayNumber {
        let (year, month) = civil(day: floor(second(date), 86_400) / 86_400)
        return DayNumber(rawValue: Int(days(year: year, month: month)))
    }

    /// Year and month of a day number (Howard Hinnant's civil-from-days, as `DayNumber.description`).
    static func civil(day: Int64) -> (year: Int64, month: Int64) {
        let z = day + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month)
    }

    /// The day number of the first day of `month` in `year` (days-from-civil).
    static func days(year: Int64, month: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

/// What one quota holder (a project, or the whole server) has admitted in its current windows. Kept in memory by
/// the node that counts (`SpikeGuard`); ``QuotaPolicy/decide(_:counts:cost:at:share:)`` is the only thing that moves it.
public struct QuotaCounts: Sendable, Equatable {
    /// One window's count: its first second and the events admitted in it.
    public struct Count: Sendable, Equatable {
        public var start: Int64
        public var admitted: Int
    }

    /// Per window, its current count.
    public var windows: [QuotaWindow: Count] = [:]
    public init() {}

    /// Events admitted in the window of `window` that holds `second` (0 once that window has passed).
    public func admitted(_ window: QuotaWindow, at second: Int64) -> Int {
        guard let entry = windows[window], entry.start == window.start(of: second) else { return 0 }
        return entry.admitted
    }

    /// Adds `events` admitted in the month that holds `second` before this count began (read back from the database
    /// after a restart) to the month's count.
    public mutating func addToMonth(_ events: Int, at second: Int64) {
        let (total, overflow) = admitted(.month, at: second).addingReportingOverflow(max(events, 0))
        windows[.month] = Count(start: QuotaWindow.month.start(of: second), admitted: overflow ? .max : total)
    }
}

/// The answer of ``QuotaPolicy/decide(_:counts:cost:at:share:)``.
public enum QuotaDecision: Sendable, Equatable {
    /// Admitted: the counts were charged.
    case admit
    /// Refused by the quota of `window` (the first that is full, smallest window first); nothing was charged.
    /// `retryAfter` is the whole seconds until that window ends; `windowStart` names the window (an alert's identity).
    case refuse(window: QuotaWindow, retryAfter: Int, windowStart: Int64)
}

/// The quota rule, pure: events are admitted while every window with a quota has room for them.
public enum QuotaPolicy {
    /// Decides whether `cost` events fit `quotas` at `date`, and charges `counts` when they do.
    ///
    /// - Parameters:
    ///   - share: the part of each quota this node enforces (1 alone, 1 ÷ N with N nodes sharing one database: each
    ///     node counts in memory, and a balancer spreading requests evenly gives the project about its quota in all).
    ///     Anything outside (0, 1] counts as 1.
    /// A batch bigger than a whole (shared) quota is admitted into an empty window, so it is never refused forever;
    /// the window is then full. A window's count resets when the window passes.
    public static func decide(
        _ quotas: EventQuotas, counts: inout QuotaCounts, cost: Int, at date: Date, share: Double = 1
    ) -> QuotaDecision {
        let cost = max(cost, 0)
        let second = QuotaWindow.second(date)
        let part = share.isFinite && share > 0 && share <= 1 ? share : 1
        for window in QuotaWindow.allCases {
            guard let quota = quotas[window] else { continue }
            let limit = max(Int((Double(quota) * part).rounded(.down)), 1)
            let admitted = counts.admitted(window, at: second)
            let (total, overflow) = admitted.addingReportingOverflow(cost)
            if overflow || (total > limit && admitted > 0) {
                let start = window.start(of: second)
                let end = window.end(ofWindowStartingAt: start)
                return .refuse(window: window, retryAfter: Int(max(end - second, 1)), windowStart: start)
            }
        }
        for window in QuotaWindow.allCases where quotas[window] != nil {
            let admitted = counts.admitted(window, at: second)
            counts.windows[window] = QuotaCounts.Count(start: window.start(of: second), admitted: admitted &+ cost)
        }
        return .admit
    }
}

/// Events counted by a project's quota per day and release (and fingerprint, for dropped crashes whose client
/// sent one): what the overview shows and what keeps an issue's count honest during a spike.
public struct QuotaCount: Sendable, Equatable, Hashable {
    public var project: ProjectID
    public var day: DayNumber
    /// The event's release ("" when it named none).
    public var release: String
    /// The issue fingerprint of a dropped event, when it is known from the request alone (the client sent a
    /// fingerprint without `{{ default }}`); nil otherwise and for accepted events (their issue counts them).
    public var fingerprint: Fingerprint?
    public var accepted: Int
    public var dropped: Int

    public init(
        project: ProjectID, day: DayNumber, release: String, fingerprint: Fingerprint? = nil, accepted: Int = 0,
        dropped: Int = 0
    ) {
        self.project = project
        self.day = day
        self.release = release
        self.fingerprint = fingerprint
        self.accepted = accepted
        self.dropped = dropped
    }

    /// The fingerprint of `report`'s issue when the request alone says it: a client fingerprint without
    /// `{{ default }}` (which stands for frames only symbolication knows).
    public static func cheapFingerprint(_ report: Report) -> Fingerprint? {
        guard let client = report.fingerprint, !client.isEmpty, !client.contains(where: Grouping.isDefault) else {
            return nil
        }
        return Grouping.fingerprint(kind: report.kind, source: .client, components: client)
    }
}

/// Stored quota counts (`quota_counts`): added to by each node's flush, read by the overview, the API and issue pages,
/// and read back at start for the month's quota.
public protocol QuotaCountStore: Sendable {
    /// Adds `counts` to the stored rows (one transaction; rows keyed by project, day, release and fingerprint). The
    /// issues a dropped count names by fingerprint (their own, or one merged into them) are marked changed at `now`
    /// in the same transaction: their pages show what was dropped, and a page nothing marks is never rendered again.
    func addQuotaCounts(_ counts: [QuotaCount], at now: Date) async throws
    /// The stored rows of `project` from day `from` on, newest day first.
    func quotaCounts(project: ProjectID, from: DayNumber) async throws -> [QuotaCount]
    /// The events of `project` dropped past a quota under any of `fingerprints` (an issue's own and those merged into
    /// it), over the rows kept per fingerprint (the retention period, ``QuotaCountKeep``).
    func droppedEvents(project: ProjectID, fingerprints: [Fingerprint]) async throws -> Int
    /// Every project's accepted events from day `from` on: what a restarted server's month quota starts from.
    func acceptedEvents(from: DayNumber) async throws -> [ProjectID: Int]
}

/// How long quota counts are kept (decision 0073). A row per fingerprint stands in for reports that were never
/// stored, so it is kept as long as the reports it stands beside (the retention period); past it, its counts are
/// added to its day and release's total row and the row goes (`RetentionStore.foldQuotaCounts`). The totals are
/// kept like the other daily rollups (crash-free health, an issue's days), which retention never prunes: they are
/// a few rows a day per release, and the overview's accepted and dropped figures stay exact for as long as the
/// crash-free figures beside them. What stays bounded is what a hostile client could grow: at most
/// `SpikeGuard.maxFingerprintsPerDay` fingerprint rows a project and day, for the retention period only.
public enum QuotaCountKeep {
    /// The first day whose fingerprint rows are kept when reports are kept `retentionDays` days before `now`.
    public static func firstFingerprintDay(retentionDays: Int, now: Date) -> DayNumber {
        DayNumber(now).adding(-max(retentionDays, 1))
    }
}

/// The `quota_reached` alert: one per project, quota window and window (its dedupe key names the window, so every
/// node that refused in it records the same alert once).
public enum QuotaAlerts {
    /// The draft for `project` reaching its `quota` of `window` in the window starting at `windowStart`.
    public static func draft(
        project: ProjectID, window: QuotaWindow, windowStart: Int64, quota: Int, retryAfter: Int, server: Bool
    ) -> AlertDraft {
        AlertDraft(
            project: project, kind: .quotaReached,
            dedupeKey: "quota_reached:\(server ? "server-" : "")\(window.rawValue):\(windowStart)", issue: nil,
            release: nil,
            title: server
                ? "The server's ceiling of \(quota) events per \(window.rawValue) was reached"
                : "The project's quota of \(quota) events per \(window.rawValue) was reached",
            reason: ["quota": Double(quota), "retry_after_seconds": Double(retryAfter)])
    }
}
