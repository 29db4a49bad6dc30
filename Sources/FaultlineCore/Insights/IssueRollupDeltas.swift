/// What a batch of reports adds to the issue rollups, summed per row in memory (`FilingPlan.deltas`): the counters on
/// `issues` and the rows of `issue_releases`, `issue_days`, `issue_users`, `issue_release_users`, `issue_day_users`,
/// `issue_tags` and `issue_tag_users`. Issues are keyed by id, or by a negative plan id for an issue the batch creates.
/// The distinct-user counters (`Counts.users`, `repeatUsers`, `ReleaseCounts.users`, the days' `users`, the tags'
/// `users`) are 0 here: they move by how each per-user row's count crosses 0 and 1 (`CounterDeltas`), which only the
/// engine that writes the row learns.
public struct IssueRollupDeltas: Sendable {
    public struct Counts: Sendable, Equatable {
        public var events: Int64 = 0
        public var early: Int64 = 0
        public var timed: Int64 = 0
        public var users: Int64 = 0
        public var repeatUsers: Int64 = 0
        public init(events: Int64 = 0, early: Int64 = 0, timed: Int64 = 0, users: Int64 = 0, repeatUsers: Int64 = 0) {
            (self.events, self.early, self.timed, self.users, self.repeatUsers) = (
                events, early, timed, users, repeatUsers
            )
        }
    }

    public struct ReleaseKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        /// Byte for byte, as the database tells releases apart (`ExactText`).
        public var release: ExactText
        public init(issue: Int64, release: ExactText) { (self.issue, self.release) = (issue, release) }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.release) < (b.issue, b.release) }
    }

    public struct ReleaseCounts: Sendable, Equatable {
        public var events: Int64
        public var users: Int64 = 0
        public var firstSeen: Int64
        public var lastSeen: Int64
        /// A move took the row's last event within the batch (`restart(_:)`): `firstSeen` and `lastSeen` are those of
        /// the events added after it, to be written in place of the stored row's.
        public var restarted = false
        public init(events: Int64, users: Int64 = 0, firstSeen: Int64, lastSeen: Int64, restarted: Bool = false) {
            (self.events, self.users, self.firstSeen, self.lastSeen) = (events, users, firstSeen, lastSeen)
            self.restarted = restarted
        }

        /// The row's first and last event replace the stored ones: it emptied, then gained events, within the batch.
        /// (Emptied and not refilled, it is deleted: its stored events plus `events` are 0.)
        public var replacesBounds: Bool { restarted && firstSeen <= lastSeen }
    }

    public struct DayKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var day: Int64
        public init(issue: Int64, day: Int64) { (self.issue, self.day) = (issue, day) }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.day) < (b.issue, b.day) }
    }

    public struct DayCounts: Sendable, Equatable {
        public var events: Int64
        public var users: Int64
        public init(events: Int64, users: Int64 = 0) { (self.events, self.users) = (events, users) }
    }

    /// A row of `issue_users`.
    public struct UserKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var user: ExactText
        public init(issue: Int64, user: ExactText) { (self.issue, self.user) = (issue, user) }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.user) < (b.issue, b.user) }
    }

    /// A row of `issue_release_users`.
    public struct ReleaseUserKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var release: ExactText
        public var user: ExactText
        public init(issue: Int64, release: ExactText, user: ExactText) {
            (self.issue, self.release, self.user) = (issue, release, user)
        }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.release, a.user) < (b.issue, b.release, b.user) }
    }

    /// A row of `issue_day_users`.
    public struct DayUserKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var day: Int64
        public var user: ExactText
        public init(issue: Int64, day: Int64, user: ExactText) {
            (self.issue, self.day, self.user) = (issue, day, user)
        }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.day, a.user) < (b.issue, b.day, b.user) }
    }

    /// A row of `issue_tags`.
    public struct TagKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var key: ExactText
        public var value: ExactText
        public init(issue: Int64, key: ExactText, value: ExactText) {
            (self.issue, self.key, self.value) = (issue, key, value)
        }
        public static func < (a: Self, b: Self) -> Bool { (a.issue, a.key, a.value) < (b.issue, b.key, b.value) }
    }

    /// A row of `issue_tag_users`: a user among the events of one breakdown value (a device model, an OS version, an
    /// environment, a build), whose rows give `issue_tags.users`.
    public struct TagUserKey: Hashable, Comparable, Sendable {
        public var issue: Int64
        public var key: ExactText
        public var value: ExactText
        public var user: ExactText
        public init(issue: Int64, key: ExactText, value: ExactText, user: ExactText) {
            (self.issue, self.key, self.value, self.user) = (issue, key, value, user)
        }
        /// The `issue_tags` row whose distinct users this row counts.
        public var tag: TagKey { TagKey(issue: issue, key: key, value: value) }
        public static func < (a: Self, b: Self) -> Bool {
            (a.issue, a.key, a.value, a.user) < (b.issue, b.key, b.value, b.user)
        }
    }

    public var issues: [Int64: Counts] = [:]
    public var releases: [ReleaseKey: ReleaseCounts] = [:]
    public var days: [DayKey: DayCounts] = [:]
    public var users: [UserKey: Int64] = [:]
    public var releaseUsers: [ReleaseUserKey: Int64] = [:]
    public var dayUsers: [DayUserKey: Int64] = [:]
    public var tags: [TagKey: Int64] = [:]
    public var tagUsers: [TagUserKey: Int64] = [:]

    public init() {}

    /// Takes one report's contribution off `issue`: every counter and row down by one (a row whose count reaches 0 is
    /// deleted when written). First and last events stay as they are: a release row only losing events moves its
    /// bounds by nothing (`ReleaseCounts.firstSeen` `Int64.max`, `lastSeen` `Int64.min`).
    public mutating func remove(_ c: IssueContribution, from issue: Int64) {
        issues[issue, default: Counts()].events &-= 1
        if c.early == true { issues[issue, default: Counts()].early &-= 1 }
        if c.early != nil { issues[issue, default: Counts()].timed &-= 1 }
        let release = ReleaseKey(issue: issue, release: ExactText(c.release))
        releases[release, default: ReleaseCounts(events: 0, firstSeen: .max, lastSeen: .min)].events &-= 1
        let day = Int64(c.day.rawValue)
        days[DayKey(issue: issue, day: day), default: DayCounts(events: 0)].events &-= 1
        if let user = c.user.map(ExactText.init) {
            users[UserKey(issue: issue, user: user), default: 0] &-= 1
            releaseUsers[ReleaseUserKey(issue: issue, release: ExactText(c.release), user: user), default: 0] &-= 1
            dayUsers[DayUserKey(issue: issue, day: day, user: user), default: 0] &-= 1
        }
        for tag in c.tags {
            tags[TagKey(issue: issue, key: ExactText(tag.key), value: ExactText(tag.value)), default: 0] &-= 1
            if let user = c.user.map(ExactText.init) {
                let key = TagUserKey(issue: issue, key: ExactText(tag.key), value: ExactText(tag.value), user: user)
                tagUsers[key, default: 0] &-= 1
            }
        }
    }

    /// A move took the last event of the row `key` (the planner counted its events): the events added after this
    /// give its first and last event, as filing one report at a time deletes the row and makes it again. The counts
    /// stay deltas.
    public mutating func restart(_ key: ReleaseKey) {
        guard var counts = releases[key] else { return }
        (counts.firstSeen, counts.lastSeen, counts.restarted) = (.max, .min, true)
        releases[key] = counts
    }

    /// Forgets every delta of `issue` (deleted: its rows go with it).
    public mutating func drop(issue: Int64) {
        issues[issue] = nil
        releases = releases.filter { $0.key.issue != issue }
        days = days.filter { $0.key.issue != issue }
        users = users.filter { $0.key.issue != issue }
        releaseUsers = releaseUsers.filter { $0.key.issue != issue }
        dayUsers = dayUsers.filter { $0.key.issue != issue }
        tags = tags.filter { $0.key.issue != issue }
        tagUsers = tagUsers.filter { $0.key.issue != issue }
    }

    /// Adds one report's contribution to `issue`.
    public mutating func add(_ c: IssueContribution, to issue: Int64) {
        issues[issue, default: Counts()].events &+= 1
        if c.early == true { issues[issue, default: Counts()].early &+= 1 }
        if c.early != nil { issues[issue, default: Counts()].timed &+= 1 }
        let release = ReleaseKey(issue: issue, release: ExactText(c.release))
        if var counts = releases[release] {
            counts.events &+= 1
            counts.firstSeen = min(counts.firstSeen, c.occurredAt)
            counts.lastSeen = max(counts.lastSeen, c.occurredAt)
            releases[release] = counts
        } else {
            releases[release] = ReleaseCounts(events: 1, firstSeen: c.occurredAt, lastSeen: c.occurredAt)
        }
        let day = Int64(c.day.rawValue)
        days[DayKey(issue: issue, day: day), default: DayCounts(events: 0)].events &+= 1
        if let user = c.user.map(ExactText.init) {
            users[UserKey(issue: issue, user: user), default: 0] &+= 1
            releaseUsers[ReleaseUserKey(issue: issue, release: ExactText(c.release), user: user), default: 0] &+= 1
            dayUsers[DayUserKey(issue: issue, day: day, user: user), default: 0] &+= 1
        }
        for tag in c.tags {
            tags[TagKey(issue: issue, key: ExactText(tag.key), value: ExactText(tag.value)), default: 0] &+= 1
            if let user = c.user.map(ExactText.init) {
                let key = TagUserKey(issue: issue, key: ExactText(tag.key), value: ExactText(tag.value), user: user)
                tagUsers[key, default: 0] &+= 1
            }
        }
    }
}
