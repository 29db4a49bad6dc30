/// Plans the filing of a batch of reports in memory, once for both storage engines: from the reports' facts and the
/// state an engine read for them (`FilingPlanner.State`), the new issues, the issue updates (retitle, reopen, first and
/// last event), the rollup deltas per row, the alerts and each report's issue and early flag (`FilingPlan`). An engine
/// reads the state, asks `plan`, and writes the plan in its transaction; it decides nothing.
///
/// The decisions are `IssueFiling.decide`'s, taken for each report in the batch's order against the issues as the
/// batch's earlier reports left them, so a plan equals filing the reports one at a time:
/// - an issue the batch creates has a negative plan id (`FilingPlan.newIssueID(at:)`) until the engine inserts it;
/// - the new-issue budget moves by the batch's own creations, as a read before each report would find it;
/// - first and last events and their releases move as one event at a time moves them (`IssueSpan`);
/// - counters move by deltas per row (`IssueRollupDeltas`). A distinct-user counter moves by `CounterDeltas` applied
///   to its per-user row's count before and after the batch's delta, which the engine learns when it writes the row:
///   what the single steps add up to (each step's crossing of 0 or 1 telescopes).
///
/// Only reports never filed before are planned (every new crash): one moving between issues, or migrating to a new
/// grouping version, is filed one at a time by its engine, and `plan` refuses it.
public enum FilingPlanner {
    /// The facts of one report that filing it depends on.
    public struct Report: Sendable {
        public var id: Int64
        public var project: ProjectID
        public var kind: String
        public var occurredAt: Int64
        /// nil: the report had none.
        public var release: String?
        /// The user's rollup key (`RollupUser.key`), never the user id; nil: no user.
        public var user: String?
        public var sessionID: String?
        /// The issue the report is filed under now (nil: never filed).
        public var issueID: Int64?
        /// Whether it came early in its session, as stored (nil: unknown).
        public var early: Bool?
        public var groupingVersion: Int
        public var grouping: GroupingResult
        /// `grouping` as stored (`StoredJSON.encode`).
        public var groupingJSON: String
        public var tags: [(key: String, value: String)]

        public init(
            id: Int64, project: ProjectID, kind: String, occurredAt: Int64, release: String?, user: String?,
            sessionID: String?,
            issueID: Int64?, early: Bool?, groupingVersion: Int, grouping: GroupingResult, groupingJSON: String,
            tags: [(key: String, value: String)]
        ) {
            self.id = id
            self.project = project
            self.kind = kind
            self.occurredAt = occurredAt
            self.release = release
            self.user = user
            self.sessionID = sessionID
            self.issueID = issueID
            self.early = early
            self.groupingVersion = groupingVersion
            self.grouping = grouping
            self.groupingJSON = groupingJSON
            self.tags = tags
        }

        var key: IssueKey { IssueKey(project: project.rawValue, fingerprint: grouping.fingerprint.rawValue) }
    }

    /// An issue by its project and fingerprint.
    public struct IssueKey: Hashable, Sendable {
        public var project: Int64
        public var fingerprint: String
        public init(project: Int64, fingerprint: String) {
            self.project = project
            self.fingerprint = fingerprint
        }

        /// The project's overflow issue (`IssueFiling.overflowFingerprint`).
        public static func overflow(project: Int64) -> IssueKey {
            IssueKey(project: project, fingerprint: IssueFiling.overflowFingerprint.rawValue)
        }
    }

    public struct SessionKey: Hashable, Sendable {
        public var project: Int64
        public var session: String
        public init(project: Int64, session: String) {
            self.project = project
            self.session = session
        }
    }

    /// An issue as filing finds it, and what the plan changed on it.
    public struct Issue: Sendable, Equatable {
        public var state: IssueFiling.IssueState
        public var title: String
        public var span: IssueSpan
        /// Releases the issue has been seen in, of those the batch's reports carry (an engine may read them for
        /// closed issues only: only they can regress).
        public var releases: Set<String>
        /// The title, culprit and grouping to give the issue (a more specific title came).
        public var retitle: Retitle?
        /// A closed issue regressed: open it, marked regressed.
        public var reopened = false

        public init(state: IssueFiling.IssueState, title: String, span: IssueSpan, releases: Set<String> = []) {
            self.state = state
            self.title = title
            self.span = span
            self.releases = releases
        }
    }

    public struct Retitle: Sendable, Equatable {
        public var grouping: String
        public var title: String
        public var culprit: String?
        public var rank: Int
    }

    /// What an engine read for a batch (`needs` says what to read).
    public struct State: Sendable {
        /// The issues that have the batch's fingerprints, and each overflow issue of a project that may reach its cap.
        public var issues: [IssueKey: Issue]
        /// Alert settings by project (absent: the defaults).
        public var settings: [Int64: AlertSettings]
        /// The new-issue budget of each project with a fingerprint that has no issue yet (absent: a cap reached).
        public var budgets: [Int64: IssueFiling.NewIssueBudget]
        /// When each of the batch's sessions started (absent: unknown).
        public var sessions: [SessionKey: Int64]

        public init(
            issues: [IssueKey: Issue] = [:], settings: [Int64: AlertSettings] = [:],
            budgets: [Int64: IssueFiling.NewIssueBudget] = [:], sessions: [SessionKey: Int64] = [:]
        ) {
            self.issues = issues
            self.settings = settings
            self.budgets = budgets
            self.sessions = sessions
        }
    }

    /// What an engine reads for `reports`: the issues of `keys`, the releases of `releases` closed ones were seen
    /// in, the settings of `projects`, the budget of each project in `creating` (with how many fingerprints of the
    /// batch may create an issue), the start of `sessions`.
    public struct Needs: Sendable, Equatable {
        public var keys: [IssueKey]
        public var releases: [String]
        public var projects: [Int64]
        public var sessions: [SessionKey]

        public init(_ reports: [Report]) {
            var keys: [IssueKey] = []
            var seen: Set<IssueKey> = []
            for report in reports where seen.insert(report.key).inserted { keys.append(report.key) }
            self.keys = keys
            releases = Set(reports.compactMap(\.release)).sorted()
            projects = Set(keys.map(\.project)).sorted()
            sessions = Set(
                reports.compactMap { r in r.sessionID.map { SessionKey(project: r.project.rawValue, session: $0) } }
            )
            .sorted { ($0.project, $0.session) < ($1.project, $1.session) }
        }

        /// How many of the batch's fingerprints have no issue in `issues`, by project: each may create one.
        public func creating(given issues: [IssueKey: Issue]) -> [Int64: Int] {
            var creating: [Int64: Int] = [:]
            for key in keys where issues[key] == nil { creating[key.project, default: 0] += 1 }
            return creating
        }
    }

    /// The plan of `reports`, decided in their order against `state`. Throws for a report filed before (its engine
    /// files it one at a time) and when a decision leaves a report without an issue.
    public static func plan(_ reports: [Report], state: State, now: Int64) throws -> FilingPlan {
        var planning = Planning(state: state, now: now)
        for report in reports { try planning.decide(report) }
        return planning.plan
    }

    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    private struct Planning {
        var issues: [IssueKey: Issue]
        var settings: [Int64: AlertSettings]
        var budgets: [Int64: IssueFiling.NewIssueBudget]
        var sessions: [SessionKey: Int64]
        var plan: FilingPlan

        init(state: State, now: Int64) {
            (issues, settings, budgets, sessions) = (state.issues, state.settings, state.budgets, state.sessions)
            plan = FilingPlan(now: now)
        }

        mutating func decide(_ report: Report) throws {
            guard report.issueID == nil else {
                throw Refusal(description: "report \(report.id) was filed before: it is filed one at a time")
            }
            let g = report.grouping
            var key = report.key
            let settings = self.settings[key.project] ?? AlertSettings()
            let target = issues[key]
            let seenInRelease =
                target.map { target in report.release.map { target.releases.contains($0) } ?? true } ?? false
            var budget = target == nil ? budgets[key.project] : nil
            budget?.overflow = issues[.overflow(project: key.project)]?.state
            let actions = IssueFiling.decide(
                IssueFiling.Input(
                    grouping: g, current: nil, reportGroupingVersion: report.groupingVersion, target: target?.state,
                    targetSeenInRelease: seenInRelease, release: report.release,
                    alertOnNewIssue: settings.alertOnNewIssue,
                    alertOnRegression: settings.alertOnRegression, newIssues: budget))
            var contribution = IssueContribution(
                release: report.release, occurredAt: report.occurredAt, user: report.user, tags: report.tags,
                early: report.early)
            var muted = target?.state.status == .muted
            for action in actions {
                switch action {
                case .createIssue(statusFrom: nil):
                    create(key, grouping: g, groupingJSON: report.groupingJSON, report: report)
                    muted = false
                case .holdInOverflow(let existing):
                    key = .overflow(project: key.project)
                    if existing != nil {
                        muted = issues[key]?.state.status == .muted
                        break
                    }
                    let overflow = IssueFiling.overflowGrouping
                    create(key, grouping: overflow, groupingJSON: StoredJSON.encode(overflow), report: report)
                    muted = false
                case .retitle:
                    issues[key]?.retitle = Retitle(
                        grouping: report.groupingJSON, title: g.title, culprit: g.culprit, rank: g.titleRank)
                    issues[key]?.title = g.title
                    issues[key]?.state.titleRank = g.titleRank
                case .move(from: nil, _):
                    guard let issue = issues[key]?.state.id else { break }
                    if let session = report.sessionID {
                        contribution.early = sessions[SessionKey(project: key.project, session: session)].map {
                            IssueSignals.isEarly(occurredAt: report.occurredAt, sessionStartedAt: $0)
                        }
                    }
                    plan.deltas.add(contribution, to: issue)
                    issues[key]?.span.add(occurredAt: report.occurredAt, release: report.release)
                    issues[key]?.releases.insert(contribution.release)
                    plan.touch(issue)
                case .reopenRegressed:
                    issues[key]?.state.status = .open
                    issues[key]?.reopened = true
                case .alertNewIssue, .alertNewIssuesHeld, .alertRegression:
                    guard let issue = issues[key], !muted else { break }
                    plan.alerts.append(
                        FilingPlan.Alert(
                            action: action, project: report.project, issue: issue.state.id, release: report.release,
                            title: issue.title,
                            occurredAt: report.occurredAt, settings: settings))
                case .createIssue, .rekey, .move:
                    throw Refusal(description: "report \(report.id) was filed before: it is filed one at a time")
                }
            }
            guard let issue = issues[key] else {
                throw Refusal(description: "grouping decided no issue for report \(report.id)")
            }
            plan.filed[report.id] = FilingPlan.Filed(issue: issue.state.id, early: contribution.early)
            plan.issuesByKey[key] = issue
        }

        /// Plans a new issue of `key` with `grouping`, open, its first event the report's.
        mutating func create(_ key: IssueKey, grouping g: GroupingResult, groupingJSON: String, report: Report) {
            let id = FilingPlan.newIssueID(at: plan.newIssues.count)
            plan.newIssues.append(
                FilingPlan.NewIssue(
                    key: key, kind: report.kind, grouping: groupingJSON, title: g.title, culprit: g.culprit,
                    titleRank: g.titleRank,
                    occurredAt: report.occurredAt, release: report.release))
            issues[key] = Issue(
                state: IssueFiling.IssueState(
                    id: id, status: .open, groupingVersion: g.fingerprint.version, titleRank: g.titleRank,
                    isOverflow: key.fingerprint == IssueFiling.overflowFingerprint.rawValue),
                title: g.title,
                span: IssueSpan(
                    firstSeen: report.occurredAt, lastSeen: report.occurredAt, firstRelease: report.release,
                    lastRelease: report.release))
            budgets[key.project]?.createdInWindow += 1
        }
    }
}

/// A batch's filing as `FilingPlanner.plan` decided it, for an engine to write: nothing in it is decided again.
public struct FilingPlan: Sendable {
    public struct NewIssue: Sendable, Equatable {
        public var key: FilingPlanner.IssueKey
        public var kind: String
        /// The grouping as stored.
        public var grouping: String
        public var title: String
        public var culprit: String?
        public var titleRank: Int
        /// Its first (and last) event, whose release it has.
        public var occurredAt: Int64
        public var release: String?
    }

    /// An alert to record (`drafts` makes it with `IssueAlerts.draft` once the issue's id is known).
    public struct Alert: Sendable, Equatable {
        public var action: IssueFiling.Action
        public var project: ProjectID
        /// The plan id of the issue.
        public var issue: Int64
        public var release: String?
        public var title: String
        public var occurredAt: Int64
        public var settings: AlertSettings
    }

    /// The issue a report was filed under (a plan id), and whether it came early in its session (nil: unknown).
    public struct Filed: Sendable, Equatable {
        public var issue: Int64
        public var early: Bool?
        public init(issue: Int64, early: Bool?) {
            self.issue = issue
            self.early = early
        }
    }

    /// The plan id of the new issue at `index` of `newIssues`: -1, -2, …
    public static func newIssueID(at index: Int) -> Int64 { -Int64(index) - 1 }

    /// When the plan was made (`created_at`, `updated_at`, alerts, reopenings).
    public var now: Int64
    /// The issues to insert, in order; the first has plan id -1.
    public var newIssues: [NewIssue] = []
    /// The rollup deltas, issues by plan id.
    public var deltas = IssueRollupDeltas()
    public var alerts: [Alert] = []
    /// Each report's issue, by report id.
    public var filed: [Int64: Filed] = [:]
    /// Every issue the plan counts an event for, as the batch leaves it (span, retitle, reopening), by its key.
    public var issuesByKey: [FilingPlanner.IssueKey: FilingPlanner.Issue] = [:]
    /// Plan ids of the issues counted, in the order first counted.
    public private(set) var touched: [Int64] = []
    private var touchedSet: Set<Int64> = []

    public init(now: Int64) { self.now = now }

    mutating func touch(_ issue: Int64) {
        if touchedSet.insert(issue).inserted { touched.append(issue) }
    }

    /// The counted issues by plan id.
    public var issues: [Int64: FilingPlanner.Issue] {
        var byID: [Int64: FilingPlanner.Issue] = [:]
        for issue in issuesByKey.values { byID[issue.state.id] = issue }
        return byID
    }

    /// The alerts to record, in order, each issue's plan id resolved by `id` (`IssueAlerts.draft`: the dedupe keys are
    /// the core's).
    public func drafts(resolving id: (Int64) throws -> Int64) rethrows -> [AlertDraft] {
        try alerts.compactMap { alert in
            IssueAlerts.draft(
                alert.action,
                IssueAlerts.Context(
                    project: alert.project, issue: try id(alert.issue), title: alert.title, release: alert.release,
                    occurredAt: alert.occurredAt, now: now),
                settings: alert.settings)
        }
    }
}

/// An issue's first and last event and their releases, moved by one more event exactly as both engines' issue rollups
/// move them in SQL (every right-hand side sees the values before the event).
public struct IssueSpan: Sendable, Equatable {
    public var firstSeen: Int64
    public var lastSeen: Int64
    public var firstRelease: String?
    public var lastRelease: String?

    public init(firstSeen: Int64, lastSeen: Int64, firstRelease: String?, lastRelease: String?) {
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.firstRelease = firstRelease
        self.lastRelease = lastRelease
    }

    /// `release` nil: the report had none ('' counts as none).
    public mutating func add(occurredAt: Int64, release: String?) {
        let release = release?.isEmpty == true ? nil : release
        if occurredAt < firstSeen || firstRelease == nil { firstRelease = release ?? firstRelease }
        if occurredAt >= lastSeen || lastRelease == nil { lastRelease = release ?? lastRelease }
        firstSeen = min(firstSeen, occurredAt)
        lastSeen = max(lastSeen, occurredAt)
    }
}

/// Text compared byte for byte, as the databases compare keys: Swift's `String` equality is canonical equivalence, so
/// `"café"` with a precomposed `é` and with `e` + a combining accent are one key to a `Dictionary` and two rows to
/// the database. Keys summed or looked up in memory before they are written use this.
public struct ExactText: Hashable, Comparable, Sendable {
    public let text: String
    public init(_ text: String) { self.text = text }
    public static func == (a: Self, b: Self) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }
    public func hash(into hasher: inout Hasher) {
        for byte in text.utf8 { hasher.combine(byte) }
        hasher.combine(text.utf8.count)
    }
    public static func < (a: Self, b: Self) -> Bool { a.text.utf8.lexicographicallyPrecedes(b.text.utf8) }
}
