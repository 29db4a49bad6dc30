/// What the gate reads about a release: its sessions, the issues it brought or brought back, and a baseline.
public struct ReleaseGateEvidence: Sendable, Equatable {
    public var release: String
    /// Every session of the release so far (users distinct over its life).
    public var health: ReleaseHealth
    /// Days the release has been out: its first day through today, at least 1 (1 when it has no sessions).
    public var daysOut: Int
    /// Crash issues first seen in the release, not muted.
    public var newFatalIssues: [GateIssue]
    /// Crash issues marked regressed that the release's reports hit (first seen in an earlier release), not muted.
    public var regressedIssues: [GateIssue]
    public var baseline: Baseline?

    /// The baseline release and its daily sessions from its first day on.
    public struct Baseline: Sendable, Equatable {
        public var release: String
        public var firstDay: DayNumber
        /// Its days with sessions, from `firstDay` on (days before it are ignored).
        public var days: [DailyHealth]
        public init(release: String, firstDay: DayNumber, days: [DailyHealth]) {
            self.release = release
            self.firstDay = firstDay
            self.days = days
        }

        /// The baseline's sessions over the window `match` picks, and the window's length in days.
        public func window(_ match: BaselineWindow, releaseDays: Int, releaseSessions: Int) -> (ReleaseHealth, Int) {
            let ordered = days.filter { $0.day >= firstDay }.sorted { $0.day < $1.day }
            var total = ReleaseHealth()
            switch match {
            case .days:
                let length = max(1, releaseDays)
                let last = firstDay.adding(length - 1)
                for day in ordered where day.day <= last { total = total + sessionsOnly(day.health) }
                return (total, length)
            case .sessions:
                var length = 1
                for day in ordered {
                    if total.sessions >= releaseSessions && total.sessions > 0 { break }
                    total = total + sessionsOnly(day.health)
                    length = day.day.rawValue - firstDay.rawValue + 1
                }
                return (total, length)
            }
        }

        /// Daily users are not distinct across days: the baseline is compared on sessions alone.
        func sessionsOnly(_ health: ReleaseHealth) -> ReleaseHealth {
            var sessions = health
            sessions.users = 0
            sessions.crashedUsers = 0
            return sessions
        }
    }

    public init(
        release: String, health: ReleaseHealth, daysOut: Int, newFatalIssues: [GateIssue] = [],
        regressedIssues: [GateIssue] = [], baseline: Baseline? = nil
    ) {
        self.release = release
        self.health = health
        self.daysOut = daysOut
        self.newFatalIssues = newFatalIssues
        self.regressedIssues = regressedIssues
        self.baseline = baseline
    }
}

/// An issue that counts against a release at the gate.
public struct GateIssue: Sendable, Equatable {
    public var id: IssueID
    public var title: String
    /// Events and users in the release.
    public var events: Int
    public var users: Int
    public init(id: IssueID, title: String, events: Int, users: Int) {
        self.id = id
        self.title = title
        self.events = events
        self.users = users
    }
}
