/// The decisions about issues when a report is grouped — create an issue, move the report, reopen a closed issue
/// that regressed, raise new-issue and regression alerts, migrate issues to a new grouping version — as a pure
/// function from the report's grouping and the issues' current state to actions. A storage engine applies the
/// actions in the order given, in one write transaction with the report's symbolication result.
public enum IssueFiling {
    /// What the store knows about an issue when a report is filed.
    public struct IssueState: Sendable, Equatable {
        public var id: Int64
        public var status: IssueStatus
        /// The grouping version of the issue's fingerprint.
        public var groupingVersion: Int
        /// How specific its title is (`Grouping.TitleRank`).
        public var titleRank: Int
        public init(id: Int64, status: IssueStatus, groupingVersion: Int, titleRank: Int) {
            self.id = id
            self.status = status
            self.groupingVersion = groupingVersion
            self.titleRank = titleRank
        }
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
        public init(grouping: GroupingResult, current: IssueState?, reportGroupingVersion: Int, target: IssueState?,
                    targetSeenInRelease: Bool, release: String?, alertOnNewIssue: Bool, alertOnRegression: Bool) {
            self.grouping = grouping
            self.current = current
            self.reportGroupingVersion = reportGroupingVersion
            self.target = target
            self.targetSeenInRelease = targetSeenInRelease
            self.release = release
            self.alertOnNewIssue = alertOnNewIssue
            self.alertOnRegression = alertOnRegression
        }

        /// The report is being grouped again because the grouping rules changed (not because its symbols did).
        public var isMigration: Bool { current != nil && reportGroupingVersion < Grouping.version }
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
        case alertNewIssue
        case alertRegression
    }

    public static func decide(_ input: Input) -> [Action] {
        let grouping = input.grouping
        if let target = input.target {
            var actions: [Action] = []
            if grouping.titleRank > target.titleRank { actions.append(.retitle) }
            if let current = input.current, current.id == target.id { return actions }
            actions.append(.move(from: input.current?.id, carryHistory: input.isMigration))
            // Moving events between versions of the same issues is bookkeeping, not news.
            guard !input.isMigration else { return actions }
            let regressed = AlertRules.regresses(status: target.status, release: input.release, seenInRelease: input.targetSeenInRelease)
            if regressed {
                actions.append(.reopenRegressed)
                if input.alertOnRegression { actions.append(.alertRegression) }
            }
            return actions
        }
        // No issue has the fingerprint yet.
        if input.isMigration, let current = input.current {
            if current.groupingVersion < Grouping.version {
                return [.rekey(issue: current.id)]
            }
            // The current issue was already carried over by another of its reports, which grouped differently:
            // the old issue splits, and this part keeps its status.
            return [.createIssue(statusFrom: current.id), .move(from: current.id, carryHistory: false)]
        }
        var actions: [Action] = [.createIssue(statusFrom: nil), .move(from: input.current?.id, carryHistory: false)]
        // A report that moves (its symbols arrived) does not announce a new issue: its first one was announced.
        if input.current == nil && input.alertOnNewIssue { actions.append(.alertNewIssue) }
        return actions
    }
}
