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
/// A report filed before moves (late symbols changed its fingerprint) or migrates (a new grouping version) in the same
/// plan: its contribution is taken off its old issue by negative deltas (`IssueRollupDeltas.remove`: a row reaching 0
/// is deleted when written), an issue left with no events is deleted (`FilingPlan.Deletion`: its alert history follows
/// a migration), an issue of an older grouping version is rekeyed, and an issue split by a migration keeps its status.
/// A fingerprint whose issue the batch emptied has no issue for the batch's later reports: they create it again,
/// after the deletion. The same report is given once per plan (an engine writes the plan before a report repeats).
///
/// Merged issues (`IssueMerge`): a fingerprint with no issue of its own files into the issue it was merged into
/// (`State.aliases`), as if it were that issue's. A report migrating to a new grouping version out of an issue others
/// were merged into (`State.survivors`) stays in it: the first rekeys it as usual, and every other new fingerprint
/// becomes one more alias of it (`FilingPlan.newAliases`) instead of splitting it, so a merge outlives a grouping
/// change.
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
        /// Whether it is a hang (``IssueCategory/isHang(_:)``): an issue it creates, or migrates to a new grouping
        /// version, is stored with this mark.
        public var hang: Bool

        public init(
            id: Int64, project: ProjectID, kind: String, occurredAt: Int64, release: String?, user: String?,
            sessionID: String?,
            issueID: Int64?, early: Bool?, groupingVersion: Int, grouping: GroupingResult, groupingJSON: String,
            tags: [(key: String, value: String)], hang: Bool = false
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
            self.hang = hang
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
        /// The events of its rows of the batch's releases, where the engine read them (closed issues, and the issues
        /// reports move out of): a move that takes a row's last event leaves the issue unseen in that release (a later
        /// report of it regresses a closed issue) and restarts the row's first and last event, as filing one report at
        /// a time deletes the row and makes it again. A release absent here is not counted.
        public var releaseEvents: [String: Int64] = [:]
        /// Its events: a report moving out of an issue of one event deletes the issue.
        public var events: Int64
        /// Marked regressed, and when and by whom its status last changed: what an issue split from it keeps with its
        /// status (`IssueFiling.Action.createIssue(statusFrom:)`).
        public var regressed = false
        public var statusChangedAt: Int64?
        public var statusChangedBy: String?
        /// When it was created (nil: unknown): deleting an issue created in the current window gives its project
        /// one more new issue in it.
        public var createdAt: Int64?
        /// The title, culprit and grouping to give the issue (a more specific title came).
        public var retitle: Retitle?
        /// The fingerprint, grouping, title and kind to give the issue (migrated to the current grouping version).
        public var rekey: Rekey?
        /// A closed issue regressed: open it, marked regressed.
        public var reopened = false

        public init(
            state: IssueFiling.IssueState, title: String, span: IssueSpan, releases: Set<String> = [],
            events: Int64 = 0
        ) {
            self.state = state
            self.title = title
            self.span = span
            self.releases = releases
            self.events = events
        }

        /// Counts one more event: its first and last events, releases and events.
        mutating func count(_ c: IssueContribution) {
            span.add(occurredAt: c.occurredAt, release: c.release)
            releases.insert(c.release)
            releaseEvents[c.release]? += 1
            events += 1
        }

        /// Takes one event of `release` off its counted row; whether that emptied the row (the issue is no longer seen
        /// in the release).
        mutating func uncount(release: String) -> Bool {
            guard let events = releaseEvents[release] else { return false }
            releaseEvents[release] = max(events - 1, 0)
            guard events <= 1 else { return false }
            releases.remove(release)
            return true
        }
    }

    /// An issue migrated to the current grouping version keeps its id, counts, status and history under a new key.
    public struct Rekey: Sendable, Equatable {
        public var fingerprint: String
        public var grouping: String
        public var title: String
        public var culprit: String?
        public var rank: Int
        public var kind: String
        /// The hang mark, decided from the report like `kind`.
        public var hang: Bool
    }

    public struct Retitle: Sendable, Equatable {
        public var grouping: String
        public var title: String
        public var culprit: String?
        public var rank: Int
        public init(grouping: String, title: String, culprit: String?, rank: Int) {
            (self.grouping, self.title, self.culprit, self.rank) = (grouping, title, culprit, rank)
        }
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
        /// The batch's fingerprints that have no issue of their own but were merged into one (`issue_aliases`): the
        /// id of that issue, which `issues` holds.
        public var aliases: [IssueKey: Int64]
        /// Of the issues reports filed before are under (`Needs.current`), those others were merged into.
        public var survivors: Set<Int64>

        public init(
            issues: [IssueKey: Issue] = [:], settings: [Int64: AlertSettings] = [:],
            budgets: [Int64: IssueFiling.NewIssueBudget] = [:], sessions: [SessionKey: Int64] = [:],
            aliases: [IssueKey: Int64] = [:], survivors: Set<Int64> = []
        ) {
            self.issues = issues
            self.settings = settings
            self.budgets = budgets
            self.sessions = sessions
            self.aliases = aliases
            self.survivors = survivors
        }
    }

    /// What an engine reads for `reports`: the issues of `keys` and of `current` (by id), the releases of `releases`
    /// closed ones were seen in, the settings of `projects`, the budget of each project in `creating` (with how many
    /// fingerprints of the batch may create an issue), the start of `sessions`.
    public struct Needs: Sendable, Equatable {
        public var keys: [IssueKey]
        /// The issues the batch's reports filed before are under (they move or migrate out of them), in order.
        public var current: [Int64]
        public var releases: [String]
        public var projects: [Int64]
        public var sessions: [SessionKey]
        /// How many of `current` each project has: each may empty and go, and its fingerprint be created again, so
        /// an engine counts this many issues past the cap in the window (`IssueFiling.NewIssueBudget.createdInWindow`).
        public var moving: [Int64: Int]

        public init(_ reports: [Report]) {
            var keys: [IssueKey] = []
            var seen: Set<IssueKey> = []
            var current: [Int64] = []
            var seenCurrent: Set<Int64> = []
            var moving: [Int64: Int] = [:]
            for report in reports {
                if seen.insert(report.key).inserted { keys.append(report.key) }
                if let issue = report.issueID, seenCurrent.insert(issue).inserted {
                    current.append(issue)
                    moving[report.project.rawValue, default: 0] += 1
                }
            }
            self.keys = keys
            self.current = current
            self.moving = moving
            releases = Set(reports.compactMap(\.release)).sorted()
            projects = Set(keys.map(\.project)).sorted()
            sessions = Set(
                reports.compactMap { r in r.sessionID.map { SessionKey(project: r.project.rawValue, session: $0) } }
            )
            .sorted { ($0.project, $0.session) < ($1.project, $1.session) }
        }

        /// How many issues the batch may create, by project: one for each of its fingerprints with no issue in
        /// `issues` (nor an alias in `aliases`), and one for each issue a report moves out of (it may empty, go, and
        /// be created again).
        public func creating(given issues: [IssueKey: Issue], aliases: [IssueKey: Int64] = [:]) -> [Int64: Int] {
            var creating = moving
            for key in keys where issues[key] == nil && aliases[key] == nil { creating[key.project, default: 0] += 1 }
            return creating
        }
    }

    /// The plan of `reports`, decided in their order against `state`. Throws when the issue a report was filed under
    /// was not read, and when a decision leaves a report without an issue.
    public static func plan(_ reports: [Report], state: State, now: Int64) throws -> FilingPlan {
        var planning = Planning(state: state, now: now)
        for report in reports { try planning.decide(report) }
        return planning.finish()
    }

    public struct Refusal: Error, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The issues as the batch's reports so far left them, by id and by key, and the plan so far.
    private struct Planning {
        var issues: [Int64: Issue] = [:]
        var ids: [IssueKey: Int64] = [:]
        var keys: [Int64: IssueKey] = [:]
        var settings: [Int64: AlertSettings]
        var budgets: [Int64: IssueFiling.NewIssueBudget]
        var sessions: [SessionKey: Int64]
        var aliases: [IssueKey: Int64]
        var survivors: Set<Int64>
        var plan: FilingPlan
        /// Ids of the issues the plan changes, in the order first changed.
        var changed: [Int64] = []
        var changedSet: Set<Int64> = []

        init(state: State, now: Int64) {
            (settings, budgets, sessions) = (state.settings, state.budgets, state.sessions)
            (aliases, survivors) = (state.aliases, state.survivors)
            for (key, issue) in state.issues {
                issues[issue.state.id] = issue
                ids[key] = issue.state.id
                keys[issue.state.id] = key
            }
            plan = FilingPlan(now: now)
        }

        mutating func decide(_ report: Report) throws {
            let g = report.grouping
            let project = report.project.rawValue
            let settings = self.settings[project] ?? AlertSettings()
            let current = try report.issueID.map { id in
                guard let issue = issues[id] else {
                    throw Refusal(description: "the issue \(id) of report \(report.id) was not read")
                }
                return issue
            }
            let targetID = fileTarget(of: report, current: current)
            let target = targetID.flatMap { issues[$0] }
            let seenInRelease =
                target.map { target in report.release.map { target.releases.contains($0) } ?? true } ?? false
            var budget = target == nil ? budgets[project] : nil
            budget?.overflow = ids[.overflow(project: project)].flatMap { issues[$0]?.state }
            let actions = IssueFiling.decide(
                IssueFiling.Input(
                    grouping: g, current: current?.state, reportGroupingVersion: report.groupingVersion,
                    target: target?.state, targetSeenInRelease: seenInRelease, release: report.release,
                    alertOnNewIssue: settings.alertOnNewIssue,
                    alertOnRegression: settings.alertOnRegression, newIssues: budget))
            var issueID = targetID ?? report.issueID
            var contribution = IssueContribution(
                release: report.release, occurredAt: report.occurredAt, user: report.user, tags: report.tags,
                early: report.early)
            var muted = target?.state.status == .muted
            for action in actions {
                switch action {
                case .createIssue(let statusFrom):
                    let from = statusFrom.flatMap { issues[$0] }
                    issueID = create(
                        report.key, grouping: g, groupingJSON: report.groupingJSON, report: report, status: from)
                    muted = from?.state.status == .muted
                case .holdInOverflow(let existing):
                    if let existing {
                        issueID = existing
                        muted = budget?.overflow?.status == .muted
                        break
                    }
                    let overflow = IssueFiling.overflowGrouping
                    issueID = create(
                        .overflow(project: project), grouping: overflow, groupingJSON: StoredJSON.encode(overflow),
                        report: report, status: nil)
                    muted = false
                case .rekey(let issue):
                    rekey(issue, to: report.key, report: report)
                    issueID = issue
                case .retitle:
                    guard let targetID else { break }
                    issues[targetID]?.retitle = Retitle(
                        grouping: report.groupingJSON, title: g.title, culprit: g.culprit, rank: g.titleRank)
                    issues[targetID]?.title = g.title
                    issues[targetID]?.state.titleRank = g.titleRank
                    change(targetID)
                case .move(let from, let carryHistory):
                    guard let to = issueID else { break }
                    if let from {
                        remove(contribution, from: from, alertsTo: carryHistory ? to : nil)
                    } else if let session = report.sessionID {
                        contribution.early = sessions[SessionKey(project: project, session: session)].map {
                            IssueSignals.isEarly(occurredAt: report.occurredAt, sessionStartedAt: $0)
                        }
                    }
                    add(contribution, to: to)
                case .reopenRegressed:
                    guard let to = issueID, issues.index(forKey: to) != nil else { break }
                    issues[to]?.state.status = .open
                    issues[to]?.reopened = true
                    issues[to]?.regressed = true
                    issues[to]?.statusChangedAt = plan.now
                    issues[to]?.statusChangedBy = nil
                    change(to)
                case .alertNewIssue, .alertNewIssuesHeld, .alertRegression:
                    guard let to = issueID, let title = issues[to]?.title, !muted else { break }
                    plan.alerts.append(
                        FilingPlan.Alert(
                            action: action, project: report.project, issue: to, release: report.release,
                            title: title, occurredAt: report.occurredAt, settings: settings))
                }
            }
            guard let issueID, issues.index(forKey: issueID) != nil else {
                throw Refusal(description: "grouping decided no issue for report \(report.id)")
            }
            plan.filed[report.id] = FilingPlan.Filed(issue: issueID, early: contribution.early)
        }

        /// The id of the issue `report`'s fingerprint files into: its own, else the one it was merged into; a report
        /// migrating out of an issue others were merged into (`survivors`, already of the current grouping version)
        /// gives it its new fingerprint as one more alias and stays.
        mutating func fileTarget(of report: Report, current: Issue?) -> Int64? {
            if let id = ids[report.key] { return id }
            if let id = aliases[report.key], issues.index(forKey: id) != nil { return id }
            guard let current, survivors.contains(current.state.id), !current.state.isOverflow,
                report.groupingVersion < Grouping.version, current.state.groupingVersion >= Grouping.version
            else { return nil }
            let id = current.state.id
            aliases[report.key] = id
            plan.newAliases.append(FilingPlan.NewAlias(key: report.key, issue: id))
            return id
        }

        mutating func change(_ issue: Int64) {
            if changedSet.insert(issue).inserted { changed.append(issue) }
        }

        /// Counts one report on `issue`: its rollup rows, first and last events, releases.
        mutating func add(_ c: IssueContribution, to issue: Int64) {
            // One lookup that changes the issue in place (the issue is large: a copy costs more than the rest).
            guard issues[issue]?.count(c) != nil else { return }
            plan.deltas.add(c, to: issue)
            change(issue)
        }

        /// Takes one report off `issue` (its first and last events stay as they were, as both engines' rollups leave
        /// them); a release row it empties restarts (`Issue.releaseEvents`), and an issue left with no events is
        /// deleted, its alert history first moved to `alertsTo` when given.
        mutating func remove(_ c: IssueContribution, from issue: Int64, alertsTo: Int64?) {
            guard let events = issues[issue]?.events else { return }
            plan.deltas.remove(c, from: issue)
            issues[issue]?.events = max(events - 1, 0)
            if issues[issue]?.uncount(release: c.release) == true {
                plan.deltas.restart(IssueRollupDeltas.ReleaseKey(issue: issue, release: ExactText(c.release)))
            }
            change(issue)
            if events <= 1 { delete(issue, alertsTo: alertsTo) }
        }

        /// Deletes `issue` (its rollup rows go with it) after the new issues planned so far; a later report of its
        /// fingerprint finds no issue, and may create one again.
        mutating func delete(_ issue: Int64, alertsTo: Int64?) {
            guard let deleted = issues.removeValue(forKey: issue) else { return }
            if let key = keys.removeValue(forKey: issue) {
                if ids[key] == issue { ids[key] = nil }
                // Deleting an issue created in the window gives its project that creation back.
                let window =
                    settings[key.project].map {
                        IssueFiling.window(containing: plan.now, minutes: $0.newIssueWindowMinutes)
                    } ?? IssueFiling.window(containing: plan.now, minutes: AlertSettings().newIssueWindowMinutes)
                if let created = deleted.createdAt, window.contains(created) {
                    budgets[key.project]?.createdInWindow -= 1
                }
            }
            plan.deltas.drop(issue: issue)
            // Its aliases go with it (ON DELETE CASCADE); none is written for it.
            plan.newAliases.removeAll { $0.issue == issue }
            plan.deletions.append(
                FilingPlan.Deletion(issue: issue, alertsTo: alertsTo, afterNewIssues: plan.newIssues.count))
        }

        /// Gives `issue` the report's fingerprint, grouping, title, kind and hang mark (migrated to the current grouping
        /// version).
        mutating func rekey(_ issue: Int64, to key: IssueKey, report: Report) {
            guard issues[issue] != nil else { return }
            let g = report.grouping
            if let old = keys[issue], ids[old] == issue { ids[old] = nil }
            ids[key] = issue
            keys[issue] = key
            issues[issue]?.rekey = Rekey(
                fingerprint: key.fingerprint, grouping: report.groupingJSON, title: g.title, culprit: g.culprit,
                rank: g.titleRank, kind: report.kind, hang: report.hang && key != .overflow(project: key.project))
            issues[issue]?.retitle = nil
            issues[issue]?.title = g.title
            issues[issue]?.state.titleRank = g.titleRank
            issues[issue]?.state.groupingVersion = g.fingerprint.version
            issues[issue]?.state.isOverflow = key.fingerprint == IssueFiling.overflowFingerprint.rawValue
            change(issue)
        }

        /// Plans a new issue of `key` with `grouping`, its first event the report's: open, or with the status of
        /// `status` (an issue split from it).
        mutating func create(
            _ key: IssueKey, grouping g: GroupingResult, groupingJSON: String, report: Report, status from: Issue?
        ) -> Int64 {
            let id = FilingPlan.newIssueID(at: plan.newIssues.count)
            var new = FilingPlan.NewIssue(
                key: key, kind: report.kind, grouping: groupingJSON, title: g.title, culprit: g.culprit,
                titleRank: g.titleRank, occurredAt: report.occurredAt, release: report.release,
                // The overflow issue holds reports of every sort: never a hang.
                hang: report.hang && key != .overflow(project: key.project))
            var issue = Issue(
                state: IssueFiling.IssueState(
                    id: id, status: .open, groupingVersion: g.fingerprint.version, titleRank: g.titleRank,
                    isOverflow: key.fingerprint == IssueFiling.overflowFingerprint.rawValue),
                title: g.title,
                span: IssueSpan(
                    firstSeen: report.occurredAt, lastSeen: report.occurredAt, firstRelease: report.release,
                    lastRelease: report.release))
            issue.createdAt = plan.now
            if let from {
                (new.status, new.regressed) = (from.state.status, from.regressed)
                (new.statusChangedAt, new.statusChangedBy) = (from.statusChangedAt, from.statusChangedBy)
                issue.state.status = from.state.status
                (issue.regressed, issue.statusChangedAt, issue.statusChangedBy) = (
                    from.regressed, from.statusChangedAt, from.statusChangedBy
                )
            }
            plan.newIssues.append(new)
            issues[id] = issue
            if let old = ids[key] { keys[old] = nil }
            ids[key] = id
            keys[id] = key
            budgets[key.project]?.createdInWindow += 1
            return id
        }

        /// The plan, with every issue it changes as the batch leaves it.
        mutating func finish() -> FilingPlan {
            for id in changed {
                guard let issue = issues[id], let key = keys[id] else { continue }
                plan.issuesByKey[key] = issue
            }
            return plan
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
        /// Whether it is a hang (``IssueCategory``), as its first report was: stored with it, never re-derived.
        public var hang: Bool
        /// Open, or the status of the issue it split from (a grouping-version migration), with its marks.
        public var status: IssueStatus = .open
        public var regressed = false
        public var statusChangedAt: Int64?
        public var statusChangedBy: String?
    }

    /// An issue left with no events: deleted (its rollup rows with it) once the first `afterNewIssues` new issues are
    /// inserted and before the rest (a later one may have its fingerprint), its alerts first moved to `alertsTo` (the
    /// history follows the events of a migration; otherwise they keep no issue).
    public struct Deletion: Sendable, Equatable {
        public var issue: Int64
        /// A plan id.
        public var alertsTo: Int64?
        public var afterNewIssues: Int
        public init(issue: Int64, alertsTo: Int64?, afterNewIssues: Int) {
            (self.issue, self.alertsTo, self.afterNewIssues) = (issue, alertsTo, afterNewIssues)
        }
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

    /// A fingerprint to file into `issue` (a plan id) from now on: a migrating report's new fingerprint, out of an
    /// issue others were merged into (`issue_aliases`).
    public struct NewAlias: Sendable, Equatable {
        public var key: FilingPlanner.IssueKey
        public var issue: Int64
        public init(key: FilingPlanner.IssueKey, issue: Int64) {
            (self.key, self.issue) = (key, issue)
        }
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
    /// The issues to delete, in order (`Deletion`); none of them has a delta, an alert or a report in the plan.
    public var deletions: [Deletion] = []
    /// The rollup deltas, issues by plan id.
    public var deltas = IssueRollupDeltas()
    public var alerts: [Alert] = []
    /// Each report's issue, by report id.
    public var filed: [Int64: Filed] = [:]
    /// The aliases to write (after the deletions), in order.
    public var newAliases: [NewAlias] = []
    /// Every issue the plan changes (counts, rekey, retitle, reopening) and does not delete, as the batch leaves it, by
    /// its key then.
    public var issuesByKey: [FilingPlanner.IssueKey: FilingPlanner.Issue] = [:]

    public init(now: Int64) { self.now = now }

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
