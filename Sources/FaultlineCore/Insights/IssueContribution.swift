/// What one report adds to its issue's counters (either engine's issue rollups add and remove exactly this).
public struct IssueContribution: Sendable {
    /// '' when the report had no release.
    public var release: String
    public var day: DayNumber
    public var occurredAt: Int64
    public var user: String?
    public var tags: [(key: String, value: String)]
    /// Whether it came within the first seconds of its session; nil when the session start is unknown.
    public var early: Bool?

    public init(
        release: String, day: DayNumber, occurredAt: Int64, user: String?, tags: [(key: String, value: String)],
        early: Bool?
    ) {
        self.release = release
        self.day = day
        self.occurredAt = occurredAt
        self.user = user
        self.tags = tags
        self.early = early
    }

    /// A report's contribution: its release ('' for none), the day of `occurredAt`, its tags in key order. What both
    /// engines add and remove, made here only (`FilingPlanner`, and the filing of a report moving between issues).
    public init(
        release: String?, occurredAt: Int64, user: String?, tags: some Sequence<(key: String, value: String)>,
        early: Bool?
    ) {
        self.init(
            release: release ?? "", day: DayNumber(Millis.date(occurredAt)), occurredAt: occurredAt, user: user,
            tags: tags.sorted { $0.key < $1.key }, early: early)
    }
}
