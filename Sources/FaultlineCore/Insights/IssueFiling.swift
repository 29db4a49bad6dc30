/// The decisions about issues when a report is grouped — create an issue, move the report, reopen a closed issue
/// that regressed, raise new-issue and regression alerts, migrate issues to a new grouping version, hold new issues
/// past the project's cap — as a pure function from the report's grouping and the issues' current state to actions. A
/// storage engine applies the actions in the order given, in one write transaction with the report's symbolication
/// result.
///
/// **The new-issue cap.** A fingerprint is the client's to choose (and a crash nobody can symbolicate is grouped by
/// addresses the client sent), so without a bound one request could mint a thousand permanent issues, pages and
/// new-issue alerts. A project makes at most `AlertSettings.newIssueCap` issues per window of
/// `newIssueWindowMinutes` (fixed windows from the epoch, `window(containing:minutes:)`); past it, a report whose
/// fingerprint has no issue is filed into the project's one overflow issue (`overflowFingerprint`), which keeps its
/// events, and the window raises one folded alert instead of one per issue. The engines read the window's count
/// from an index (`issues (project_id, created_at)`, at most `cap` entries) in the filing's transaction.
public enum IssueFiling {
    /// What the store knows about an issue when a report is filed.
    public struct IssueState: Sendable, Equatable {
        public var id: Int64
        public var status: IssueStatus
        /// The grouping version of the issue's fingerprint.
        public var groupingVersion: Int
        /// How specific its title is (`Grouping.TitleRank`).
        public var titleRank: Int
        /// The project's overflow issue (its fingerprint is `overflowFingerprint`).
        public var isOverflow: Bool
        public init(id: Int64, status: IssueStatus, groupingVersion: Int, titleRank: Int, isOverflow: Bool = false) {
            self.id = id
            self.status = status
            self.groupingVersion = groupingVersion
            self.titleRank = titleRank
            self.isOverflow = isOverflow
        }

        /// The state of a stored issue from its columns: the grouping version and whether it is the overflow issue
        /// come from its fingerprint.
        public init(id: Int64, status: String, fingerprint: String, titleRank: Int) {
            self.init(
                id: id, status: IssueStatus(rawValue: status) ?? .open,
                groupingVersion: Fingerprint(fingerprint)?.version ?? 0,
                titleRank: titleRank, isOverflow: fingerprint == IssueFiling.overflowFingerprint.rawValue)
        }
    }

    /// How many more issues the report's project may create in the current window.
    public struct NewIssueBudget: Sendable, Equatable {
        /// At most this many issues a window (`AlertSettings.newIssueCap`).
        public var cap: Int
        /// Issues the project created in the current window (an engine may stop counting at `cap`).
        public var createdInWindow: Int
        /// The project's overflow issue, when it has one (read when the cap is reached).
        public var overflow: IssueState?
        public init(cap: Int, createdInWindow: Int, overflow: IssueState?) {
            self.cap = cap
            self.createdInWindow = createdInWindow
            self.overflow = overflow
        }

        /// No new issue may be created in this window.
        public var isReached: Bool { createdInWindow >= cap }
    }

    /// Everything a decision depends on.
    public struct Input: Sendable, Equatable {
        /// The grouping just computed for the report.
        public var grouping: GroupingResult
        /// The issue the report is filed under now; nil when it was never grouped.
        public var current: IssueState?
        /// The grouping version the report was filed with (meaningful when `current` is set).
        public var reportGroupingVersion: Int
        /// The issue that already has the new fingerprint, if any.
        public var target: IssueState?
        /// Whether the target issue has seen the report's release before (regressions).
        public var targetSeenInRelease: Bool
        /// The report's release (nil: none).
        public var release: String?
        public var alertOnNewIssue: Bool
        public var alertOnRegression: Bool
        /// The project's new-issue budget in the current window. Read only when `target` is nil (the decision looks
        /// at it only then); nil there counts as a cap already reached, so an engine that forgets to read it holds
        /// new issues rather than letting them through.
        public var newIssues: NewIssueBudget?
        public init(
            grouping: GroupingResult, current: IssueState?, reportGroupingVersion: Int, target: IssueState?,
            targetSeenInRelease: Bool, release: String?, alertOnNewIssue: Bool, alertOnRegression: Bool,
            newIssues: NewIssueBudget?
        ) {
            self.grouping = grouping
            self.current = current
            self.reportGroupingVersion = reportGroupingVersion
            self.target = target
            self.targetSeenInRelease = targetSeenInRelease
            self.release = release
            self.alertOnNewIssue = alertOnNewIssue
            self.alertOnRegression = alertOnRegression
            self.newIssues = newIssues
        }

        /// The report is being grouped again because the grouping rules changed (not because its symbols did). A
        /// report held in the overflow issue is not migrated with it: it is filed again like a new report.
        public var isMigration: Bool {
            current != nil && current?.isOverflow != true && reportGroupingVersion < Grouping.version
        }
    }

    /// One effect, applied in order. "The issue" is the report's issue after the decision (the target).
    public enum Action: Sendable, Equatable {
        /// Create the issue with the grouping's fingerprint, title and culprit, open — or, when migrating a
        /// report out of an issue that is being split, with that issue's status.
        case createIssue(statusFrom: Int64?)
        /// Give the report's current issue (of an older grouping version) the new fingerprint, title, culprit and
        /// grouping: the issue keeps its id, counts, status, notes and alert history.
        case rekey(issue: Int64)
        /// Replace the issue's title, culprit and grouping with the report's (a more specific title).
        case retitle
        /// Remove the report's counts from `from` (deleting it when empty; with `carryHistory`, its alerts
        /// first move to the issue) and add them to the issue; the report now belongs to the issue.
        case move(from: Int64?, carryHistory: Bool)
        /// A closed issue got an event from a release it had not been seen in: open it, marked regressed.
        case reopenRegressed
        /// The new-issue cap is reached: the issue is the project's overflow issue — `existing`, or, when the
        /// project has none yet, one created now (`overflowFingerprint`, `overflowGrouping`), open.
        case holdInOverflow(existing: Int64?)
        case alertNewIssue
        /// The window's one folded alert (`IssueAlerts.held`): new issues past the cap are held in the overflow issue.
        case alertNewIssuesHeld
        case alertRegression
    }

    /// The fingerprint of a project's overflow issue. Version 0 is no grouping version, so no report's fingerprint
    /// can equal it, and it does not change when the grouping rules do.
    public static let overflowFingerprint = Fingerprint(
        version: 0, hash: FNV1a.hex64("faultline-overflow:new-issue-cap"))

    /// The grouping stored with the overflow issue (its title says why its events are there).
    public static let overflowGrouping = GroupingResult(
        fingerprint: overflowFingerprint, source: .overflow, components: ["overflow:new-issue-cap"],
        title: "New issues past the project's new-issue cap", culprit: nil, titleRank: Grouping.TitleRank.cause)

    /// The fixed window of `minutes` (counted from 1970) that holds `now` (milliseconds): `start..<end`. Minutes
    /// outside 1...10,080 count as 60 (settings are validated; this keeps the arithmetic bounded whatever is stored).
    public static func window(containing now: Int64, minutes: Int) -> Range<Int64> {
        let length = Int64((1...10_080).contains(minutes) ? minutes : 60) * 60_000
        let offset = ((now % length) + length) % length
        let (start, below) = now.subtractingReportingOverflow(offset)
        if below { return Int64.min..<(Int64.min + length) }
        let (end, above) = start.addingReportingOverflow(length)
        return start..<(above ? Int64.max : end)
    }

    /// The actions for one report, in order.
    public static func decide(_ input: Input) -> [Action] {
        let grouping = input.grouping
        if let target = input.target {
            var actions: [Action] = []
            if grouping.titleRank > target.titleRank { actions.append(.retitle) }
            if let current = input.current, current.id == target.id { return actions }
            actions.append(.move(from: input.current?.id, carryHistory: input.isMigration))
            // Moving events between versions of the same issues is bookkeeping, not news.
            guard !input.isMigration else { return actions }
            let regressed = AlertRules.regresses(
                status: target.status, release: input.release, seenInRelease: input.targetSeenInRelease)
            if regressed {
                actions.append(.reopenRegressed)
                if input.alertOnRegression { actions.append(.alertRegression) }
            }
            return actions
        }
        // No issue has the fingerprint yet.
        let current = input.current
        if input.isMigration, let current {
            if current.groupingVersion < Grouping.version {
                return [.rekey(issue: current.id)]
            }
            // The current issue was already carried over by another of its reports, which grouped differently:
            // the old issue splits, and this part keeps its status.
            return [.createIssue(statusFrom: current.id), .move(from: current.id, carryHistory: false)]
        }
        guard let budget = input.newIssues, !budget.isReached else {
            // Past the cap: held, never dropped. A report already held stays where it is.
            if current?.isOverflow == true { return [] }
            var actions: [Action] = [
                .holdInOverflow(existing: input.newIssues?.overflow?.id), .move(from: current?.id, carryHistory: false),
            ]
            if current == nil && input.alertOnNewIssue { actions.append(.alertNewIssuesHeld) }
            return actions
        }
        var actions: [Action] = [.createIssue(statusFrom: nil), .move(from: current?.id, carryHistory: false)]
        // A report that moves (its symbols arrived) does not announce a new issue: its first one was announced.
        if current == nil && input.alertOnNewIssue { actions.append(.alertNewIssue) }
        return actions
    }
}
