#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the grouping-rules page (`/{slug}/settings/grouping`) shows: the rules in force and every earlier version,
/// who set each and when, the regroup's progress, and the form with what it last answered (a dry run, or a mistake
/// with its line and column, the text kept). Built by the HTTP edge for one request, rendered by the Dashboard module.
public struct GroupingRulesOverview: Sendable {
    /// What the form last answered.
    public enum Outcome: Sendable {
        /// The page as first shown, or after an apply (the progress tells the rest).
        case none
        /// The dry run of the form's text over the last `days` days.
        case dryRun(GroupingDryRunAnswer, rules: Int, days: Int)
        /// The text does not parse (nothing was run or stored).
        case mistake(FingerprintRulesError)
        /// Something else of the form was refused (a days field that is not a number), said in a sentence.
        case refused(String)
    }

    public var project: ProjectSlug
    /// Every version, newest first; the first is in force.
    public var versions: [GroupingRulesVersion]
    /// The project's `project.grouping_rules` entries of the audit trail, newest first: who set each version, from
    /// which address. Empty for a reader who may not read the trail (only admins and owners do).
    public var audit: [AuditRecord]
    /// The latest regroup, nil when the rules were never set.
    public var progress: RegroupProgress?
    /// Whether the reader may apply rules (a project admin, an owner, the admin token).
    public var mayApply: Bool
    /// The session's CSRF token for the form; nil: no login session, so no form (a public dashboard).
    public var csrf: String?
    /// The form's text and days, as sent (or the rules in force and the default, on a first view).
    public var text: String
    public var days: String
    public var outcome: Outcome
    /// A note of what was done, shown as a status.
    public var notice: String?

    public init(
        project: ProjectSlug, versions: [GroupingRulesVersion], audit: [AuditRecord], progress: RegroupProgress?,
        mayApply: Bool, csrf: String?, text: String, days: String, outcome: Outcome, notice: String? = nil
    ) {
        self.project = project
        self.versions = versions
        self.audit = audit
        self.progress = progress
        self.mayApply = mayApply
        self.csrf = csrf
        self.text = text
        self.days = days
        self.outcome = outcome
        self.notice = notice
    }
}

extension RegroupProgress {
    /// The progress as one line for people, as `faultline grouping progress` prints it and the rules page shows it.
    public var summary: String {
        let state = done ? "done" : finishedAt == nil ? "queuing" : "grouping"
        return
            "regroup for rules version \(rulesVersion): \(state); \(requeued) of \(total) reports queued, "
            + "\(waiting) waiting for the worker"
    }
}
