import FaultlineCore
import Formats
import Hummingbird

/// JSON shapes of the insights API (snake_case; rates are 0…1 or null for "no data", always with their counts).
struct IssueOut: Codable, ResponseEncodable {
    var id: Int64
    /// As the client sent it: `crash` or `nonfatal`.
    var kind: String
    /// What lists keep apart (``IssueCategory``, as filing stored it): `crash`, `hang` or `nonfatal`, the values of
    /// the listings' `?kind=`.
    var category: String
    var title: String
    var culprit: String?
    /// The error code the issue's events share (`-1001`), when grouped by error type and code; absent otherwise.
    var errorCode: String?
    var status: String
    var signals: [String]
    var fingerprint: String
    var firstSeen: String
    var lastSeen: String
    var firstRelease: String?
    var lastRelease: String?
    var events: Int
    var users: Int
    /// The tracker issue opened for it (in an issue's detail and a PATCH's answer; absent in lists).
    var trackerURL: String?
    enum CodingKeys: String, CodingKey {
        case id, kind, category, title, culprit, errorCode = "error_code", status, signals, fingerprint, firstSeen =
            "first_seen"
        case lastSeen = "last_seen"
        case firstRelease = "first_release", lastRelease = "last_release", events, users, trackerURL = "tracker_url"
    }
    init(_ s: IssueSummary, trackerURL: String?) {
        self.init(s)
        self.trackerURL = trackerURL
    }
    init(_ s: IssueSummary) {
        id = s.id.rawValue
        kind = s.kind.rawValue
        category = Self.name(s.category)
        title = s.title
        culprit = s.culprit
        errorCode = s.errorCode
        status = s.status.rawValue
        signals = s.signals.names
        fingerprint = s.fingerprint.rawValue
        firstSeen = Timestamps.formatISO8601(s.firstSeen)
        lastSeen = Timestamps.formatISO8601(s.lastSeen)
        firstRelease = s.firstRelease
        lastRelease = s.lastRelease
        events = s.events
        users = s.users
    }
}

extension IssueOut {
    /// The API's name of a category: its `kind` spelling (`nonfatal`), so `?kind=` takes what `category` shows.
    static func name(_ category: IssueCategory) -> String {
        switch category {
        case .crash: "crash"
        case .hang: "hang"
        case .nonFatal: "nonfatal"
        }
    }

    /// The category an API listing's `?kind=` names (nil: none given).
    /// - Throws: a 400 naming `kind` for a value that is not `crash`, `hang` or `nonfatal`.
    static func category(_ parameter: Substring?) throws -> IssueCategory? {
        guard let parameter else { return nil }
        guard let category = IssueCategory.allCases.first(where: { name($0) == parameter }) else {
            throw APIError.badRequest("must be crash, hang or nonfatal", field: "kind")
        }
        return category
    }
}

struct IssuesOut: ResponseEncodable {
    var issues: [IssueOut]
}

struct IssueDetailOut: ResponseEncodable {
    struct Grouping: Codable {
        var source: String
        var components: [String]
        var fingerprint: String
    }
    struct ReleaseRow: Codable {
        var release: String
        var events: Int
        var users: Int
        var firstSeen: String
        var lastSeen: String
        enum CodingKeys: String, CodingKey {
            case release, events, users, firstSeen = "first_seen", lastSeen = "last_seen"
        }
    }
    struct Day: Codable {
        var day: String
        var events: Int
        var users: Int
    }
    /// A breakdown value: its events and, but in the `user` breakdown, its distinct users (exact).
    struct Entry: Codable {
        var value: String
        var events: Int
        var users: Int?
    }
    struct Sample: Codable {
        var eventID: String
        var timestamp: String
        var release: String?
        var user: String?
        enum CodingKeys: String, CodingKey { case eventID = "event_id", timestamp, release, user }
    }
    var issue: IssueOut
    var grouping: Grouping
    var releases: [ReleaseRow]
    var days: [Day]
    var breakdowns: [String: [Entry]]
    var repeatUsers: Int
    var samples: [Sample]
    enum CodingKeys: String, CodingKey {
        case issue, grouping, releases, days, breakdowns, repeatUsers = "repeat_users", samples
    }
    init(_ d: IssueDetail) {
        issue = IssueOut(d.summary, trackerURL: d.trackerURL)
        grouping = Grouping(
            source: d.grouping.source.rawValue, components: d.grouping.components,
            fingerprint: d.grouping.fingerprint.rawValue)
        releases = d.releases.map {
            ReleaseRow(
                release: $0.release, events: $0.events, users: $0.users,
                firstSeen: Timestamps.formatISO8601($0.firstSeen),
                lastSeen: Timestamps.formatISO8601($0.lastSeen))
        }
        days = d.days.map { Day(day: $0.day.description, events: $0.events, users: $0.users) }
        breakdowns = d.breakdowns.mapValues { $0.map { Entry(value: $0.value, events: $0.events, users: $0.users) } }
        repeatUsers = d.repeatUsers
        samples = d.samples.map {
            Sample(
                eventID: $0.eventID.rawValue, timestamp: Timestamps.formatISO8601($0.timestamp), release: $0.release,
                user: $0.userKey)
        }
    }
}

/// Counts and rates of one slice of sessions.
struct SliceOut: Codable {
    var sessions: Int
    var crashedSessions: Int
    var abnormalSessions: Int
    var erroredSessions: Int
    var users: Int
    var crashedUsers: Int
    var crashFreeSessions: Double?
    var crashFreeUsers: Double?
    enum CodingKeys: String, CodingKey {
        case sessions, crashedSessions = "crashed_sessions", abnormalSessions = "abnormal_sessions"
        case erroredSessions = "errored_sessions", users, crashedUsers = "crashed_users"
        case crashFreeSessions = "crash_free_sessions", crashFreeUsers = "crash_free_users"
    }
    init(_ h: ReleaseHealth) {
        sessions = h.sessions
        crashedSessions = h.crashedSessions
        abnormalSessions = h.abnormalSessions
        erroredSessions = h.erroredSessions
        users = h.users
        crashedUsers = h.crashedUsers
        crashFreeSessions = h.crashFreeSessions
        crashFreeUsers = h.crashFreeUsers
    }
    func encode(to encoder: any Encoder) throws {
        // Explicit nulls: a missing rate means "no data", and clients should see that said.
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(sessions, forKey: .sessions)
        try c.encode(crashedSessions, forKey: .crashedSessions)
        try c.encode(abnormalSessions, forKey: .abnormalSessions)
        try c.encode(erroredSessions, forKey: .erroredSessions)
        try c.encode(users, forKey: .users)
        try c.encode(crashedUsers, forKey: .crashedUsers)
        try c.encode(crashFreeSessions, forKey: .crashFreeSessions)
        try c.encode(crashFreeUsers, forKey: .crashFreeUsers)
    }
}

struct DayOut: Codable {
    var day: String
    var health: SliceOut
    init(_ d: DailyHealth) {
        day = d.day.description
        health = SliceOut(d.health)
    }
}

struct HealthOut: ResponseEncodable {
    var project: String
    var release: String?
    var days: [DayOut]
    /// Sessions over the window (users are per day only: a user of two days is one user).
    var total: SliceOut
    var previous: SliceOut
    /// The project's crash-free targets, which the rates are judged against.
    var targets: TargetsOut
}

/// A project's crash-free targets in percent: `{"crash_free_users": 99.5, "crash_free_sessions": 99.9}`.
struct TargetsOut: Codable {
    var crashFreeUsers: Double
    var crashFreeSessions: Double
    enum CodingKeys: String, CodingKey {
        case crashFreeUsers = "crash_free_users", crashFreeSessions = "crash_free_sessions"
    }
    init(_ targets: CrashFreeTargets) {
        crashFreeUsers = targets.users
        crashFreeSessions = targets.sessions
    }
}

struct ReleaseOut: Codable {
    var release: String
    var firstSeen: String
    var lastSeen: String
    var health: SliceOut
    var adoption: Double?
    var recentSessions: Int
    var newIssues: Int
    enum CodingKeys: String, CodingKey {
        case release, firstSeen = "first_seen", lastSeen = "last_seen", health, adoption, recentSessions = "sessions_7d"
        case newIssues = "new_issues"
    }
    init(_ r: ReleaseRow) {
        release = r.release
        firstSeen = Timestamps.formatISO8601(r.firstSeen)
        lastSeen = Timestamps.formatISO8601(r.lastSeen)
        health = SliceOut(r.health)
        adoption = r.adoption
        recentSessions = r.recentSessions
        newIssues = r.newIssues
    }
}

struct ReleasesOut: ResponseEncodable {
    var releases: [ReleaseOut]
    /// The project's crash-free targets, which each release's rates are judged against.
    var targets: TargetsOut
}

struct TopOut: ResponseEncodable {
    struct Row: Codable {
        var issue: IssueOut
        var users: Int
        var events: Int
        /// The same counts in the window of the same length before (absent for a release).
        var previousUsers: Int?
        var previousEvents: Int?
    }
    var window: String
    /// The kind ranked (`crash`, `hang`, `nonfatal`); absent when every kind is ranked together.
    var kind: String?
    var issues: [Row]
}

struct AlertOut: Codable {
    var id: Int64
    var kind: String
    var title: String
    var issueID: Int64?
    var release: String?
    var reason: [String: Double]
    var createdAt: String
    var delivery: String?
    var deliveryAttempts: Int?
    /// The last attempt's HTTP status, when the target answered.
    var deliveryStatus: Int?
    /// The last attempt's failure: `HTTP <status>` or a fixed class (`refused_target`, `timeout`…), never the
    /// target's answer.
    var deliveryError: String?
    enum CodingKeys: String, CodingKey {
        case id, kind, title, issueID = "issue_id", release, reason, createdAt = "created_at", delivery
        case deliveryAttempts = "delivery_attempts", deliveryStatus = "delivery_status", deliveryError =
            "delivery_error"
    }
    init(_ a: Alert, delivery: DeliveryStatus?) {
        id = a.id
        kind = a.kind.rawValue
        title = a.title
        issueID = a.issue?.rawValue
        release = a.release
        reason = a.reason
        createdAt = Timestamps.formatISO8601(a.createdAt)
        self.delivery = delivery?.state
        deliveryAttempts = delivery?.attempts
        deliveryStatus = delivery?.lastStatus
        deliveryError = delivery?.lastError
    }
}

struct AlertsOut: ResponseEncodable {
    var alerts: [AlertOut]
}

struct SettingsOut: ResponseEncodable {
    var settings: AlertSettings
}
