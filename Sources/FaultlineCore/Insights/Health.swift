#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Session counts of one slice (a day, a release, a day of a release) and the crash-free rates they give.
///
/// Only fatal crashes count against the rates (a `crashed` session); `abnormal` and `errored` are reported
/// beside them. Without sessions a rate is nil — "no data", never 100 %.
public struct ReleaseHealth: Sendable, Equatable, Codable {
    public var sessions: Int
    public var crashedSessions: Int
    public var abnormalSessions: Int
    public var erroredSessions: Int
    /// Distinct users (with a user or install id) who had a session in the slice.
    public var users: Int
    /// Distinct users who had at least one crashed session in the slice.
    public var crashedUsers: Int
    public init(
        sessions: Int = 0, crashedSessions: Int = 0, abnormalSessions: Int = 0, erroredSessions: Int = 0,
        users: Int = 0,
        crashedUsers: Int = 0
    ) {
        self.sessions = sessions
        self.crashedSessions = crashedSessions
        self.abnormalSessions = abnormalSessions
        self.erroredSessions = erroredSessions
        self.users = users
        self.crashedUsers = crashedUsers
    }

    /// 1 − crashed sessions ÷ sessions; nil without sessions.
    public var crashFreeSessions: Double? { sessions == 0 ? nil : 1 - Double(crashedSessions) / Double(sessions) }
    /// 1 − crashed users ÷ users; nil without users.
    public var crashFreeUsers: Double? { users == 0 ? nil : 1 - Double(crashedUsers) / Double(users) }

    /// Counts of two disjoint session slices added (users only add up when the slices' users are disjoint,
    /// so callers use this for sessions and take users from a distinct count).
    public static func + (a: ReleaseHealth, b: ReleaseHealth) -> ReleaseHealth {
        ReleaseHealth(
            sessions: a.sessions + b.sessions, crashedSessions: a.crashedSessions + b.crashedSessions,
            abnormalSessions: a.abnormalSessions + b.abnormalSessions,
            erroredSessions: a.erroredSessions + b.erroredSessions,
            users: a.users + b.users, crashedUsers: a.crashedUsers + b.crashedUsers)
    }
}

/// What one session contributes to the health rollups. Rollups are maintained by subtracting a session's old
/// contribution and adding its new one whenever an update changes it, so they always equal a recount.
public struct SessionContribution: Sendable, Equatable {
    public var day: DayNumber
    public var release: String
    public var user: String?
    public var crashed: Bool
    public var abnormal: Bool
    public var errored: Bool
    /// How many sessions of this kind (a counted aggregate's row; 1 for a session of its own). A user with a
    /// counted row is one user with that many sessions.
    public var sessions: Int
    public init(
        day: DayNumber, release: String, user: String?, crashed: Bool, abnormal: Bool, errored: Bool, sessions: Int = 1
    ) {
        self.sessions = max(1, sessions)
        self.day = day
        self.release = release
        self.user = user
        self.crashed = crashed
        self.abnormal = abnormal
        self.errored = errored
    }

    /// The contribution of a stored session state: counted on the day it started.
    public init(_ state: SessionState) {
        self.init(
            day: DayNumber(state.started), release: state.release,
            user: state.distinctID.flatMap { $0.isEmpty ? nil : $0 },
            crashed: state.status == .crashed, abnormal: state.status == .abnormal, errored: state.isErrored,
            sessions: state.count)
    }
}

/// One day of a health series.
public struct DailyHealth: Sendable, Equatable, Codable {
    public var day: DayNumber
    public var health: ReleaseHealth
    public init(day: DayNumber, health: ReleaseHealth) {
        self.day = day
        self.health = health
    }
}

/// A health trend over a window of days: every day of the window (days without sessions have zero counts and
/// nil rates), the window's session totals, and the same totals for the window before it.
public struct HealthTrend: Sendable, Equatable {
    public var days: [DailyHealth]
    /// Sessions summed over the window (users are not summed: a user of two days is one user).
    public var total: ReleaseHealth
    public var previous: ReleaseHealth
    /// User-days of the window: each day's distinct users and crashed users, summed (`users`/`crashedUsers` only).
    /// A window's distinct users are not in the daily rollups; user-days weigh each day by its users, which is
    /// what "crash-free users" averages to over a window.
    public var userDays: ReleaseHealth
    /// The same for the window before.
    public var previousUserDays: ReleaseHealth
    public init(
        days: [DailyHealth], total: ReleaseHealth, previous: ReleaseHealth, userDays: ReleaseHealth = ReleaseHealth(),
        previousUserDays: ReleaseHealth = ReleaseHealth()
    ) {
        self.days = days
        self.total = total
        self.previous = previous
        self.userDays = userDays
        self.previousUserDays = previousUserDays
    }

    /// Builds a trend of `length` days ending with `last`, filling days that had no sessions.
    public static func make(series: [DailyHealth], last: DayNumber, length: Int) -> HealthTrend {
        let first = last.adding(-(length - 1))
        let byDay = Dictionary(series.map { ($0.day, $0.health) }, uniquingKeysWith: +)
        let days = (0..<length).map { offset -> DailyHealth in
            let day = first.adding(offset)
            return DailyHealth(day: day, health: byDay[day] ?? ReleaseHealth())
        }
        var total = ReleaseHealth()
        var previous = ReleaseHealth()
        var userDays = ReleaseHealth()
        var previousUserDays = ReleaseHealth()
        for (day, health) in byDay {
            var sessionsOnly = health
            sessionsOnly.users = 0
            sessionsOnly.crashedUsers = 0
            let usersOnly = ReleaseHealth(users: health.users, crashedUsers: health.crashedUsers)
            if day >= first && day <= last {
                total = total + sessionsOnly
                userDays = userDays + usersOnly
            }
            if day >= first.adding(-length) && day < first {
                previous = previous + sessionsOnly
                previousUserDays = previousUserDays + usersOnly
            }
        }
        return HealthTrend(
            days: days, total: total, previous: previous, userDays: userDays, previousUserDays: previousUserDays)
    }

    /// The change of crash-free user-days against the previous window, in percentage points; nil without data.
    public var crashFreeUsersChange: Double? {
        guard let now = userDays.crashFreeUsers, let before = previousUserDays.crashFreeUsers else { return nil }
        return (now - before) * 100
    }

    /// The change of crash-free sessions against the previous window, in percentage points; nil without data.
    public var crashFreeSessionsChange: Double? {
        guard let now = total.crashFreeSessions, let before = previous.crashFreeSessions else { return nil }
        return (now - before) * 100
    }
}

/// Formats a rate for people: "99.52 %", or "no data".
public func formatRate(_ rate: Double?) -> String {
    guard let rate else { return "no data" }
    let hundredths = (rate * 10_000).rounded()
    let whole = Int(hundredths) / 100
    let frac = Int(hundredths) % 100
    return "\(whole).\(frac < 10 ? "0" : "")\(frac) %"
}
