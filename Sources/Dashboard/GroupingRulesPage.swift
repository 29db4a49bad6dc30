import FaultlineCore

/// A project's fingerprint rules page (`<slug>/settings/grouping`, rendered live for each request, issue #36): the
/// rules in force and the versions before them with who set each and when, the regroup's progress, and the form whose
/// "Dry run" answers on the page what the text would merge, split and move (with links to the issues and example
/// events), and whose "Apply" (admins) stores the text as the next version. Every form carries the session's CSRF
/// token.
struct GroupingRulesPage {
    struct VersionRow {
        var version: Int
        var by: String
        var at: TimeView
        var rules: String
        var empty: Bool
    }
    struct AuditRow {
        var at: TimeView
        var actor: String
        var address: String?
        var change: String
    }
    struct IssueLink {
        var number: Int64
        var href: String
    }
    struct EventLink {
        var id: String
        var href: String?
    }
    /// Where reports would go: an issue of today, or a new issue with this fingerprint.
    /// (Named apart from the issue fields around it: a Mustache section looks a missing name up in the enclosing ones.)
    struct Destination {
        var toIssue: IssueLink?
        var newFingerprint: String?
    }
    struct PartView {
        var dest: Destination
        var counts: String
        var examples: [EventLink]
        var hasExamples: Bool
    }
    struct MergeView {
        var issues: [IssueLink]
        var into: Destination
        var counts: String
        var examples: [EventLink]
        var hasExamples: Bool
    }
    struct SplitView {
        var issue: IssueLink
        var parts: [PartView]
    }
    struct MoveView {
        var issue: IssueLink
        var to: PartView
    }
    /// A dry run's answer as the page shows it.
    struct DryRunView {
        var summary: String
        var notJudged: String?
        var issues: String
        var merges: [MergeView]
        var mergeCount: Int
        var splits: [SplitView]
        var splitCount: Int
        var moves: [MoveView]
        var moveCount: Int
        var matched: String?
    }

    var chrome: PageChrome
    var project: String
    var settingsHref: String
    var current: VersionRow?
    var older: [VersionRow]
    var hasOlder: Bool
    var audit: [AuditRow]
    var hasAudit: Bool
    var progress: String?
    var hasForm: Bool
    var csrf: String
    var mayApply: Bool
    var text: String
    var days: String
    var maxDays: Int
    var errorMessage: String?
    var mistake: Bool
    var notice: String?
    var dryRun: DryRunView?

    init(_ overview: GroupingRulesOverview) {
        let path = SitePaths.groupingSettings(overview.project)
        var title = "Fingerprint rules"
        if case .dryRun = overview.outcome { title = "Dry run of fingerprint rules" }
        chrome = PageChrome(path: path, title: title, project: overview.project, now: nil)
        project = overview.project.rawValue
        settingsHref = SitePaths.relative(from: path, to: SitePaths.settings(overview.project))
        let rows = overview.versions.map {
            VersionRow(
                version: $0.version, by: $0.createdBy.map(StatusChanger.shown) ?? "unknown", at: TimeView($0.createdAt),
                rules: $0.rules,
                empty: $0.rules.allSatisfy(\.isWhitespace))
        }
        current = rows.first
        older = Array(rows.dropFirst())
        hasOlder = !older.isEmpty
        audit = overview.audit.map {
            AuditRow(
                at: TimeView($0.entry.at), actor: $0.entry.origin.actor.shown, address: $0.entry.origin.address,
                change: [$0.entry.before, $0.entry.after].compactMap { $0 }.joined(separator: " → "))
        }
        hasAudit = !audit.isEmpty
        progress = overview.progress?.summary
        hasForm = overview.csrf != nil
        csrf = overview.csrf ?? ""
        mayApply = overview.mayApply
        text = overview.text
        days = overview.days
        maxDays = GroupingDryRun.maxDays
        notice = overview.notice
        mistake = false
        switch overview.outcome {
        case .none: break
        case .mistake(let error):
            errorMessage = "Line \(error.line), column \(error.column): \(error.message). Nothing was run or stored."
            mistake = true
        case .refused(let message): errorMessage = message
        case .dryRun(let answer, let rules, let days):
            dryRun = Self.view(answer, rules: rules, days: days, slug: overview.project, from: path)
        }
    }

    static func view(_ answer: GroupingDryRunAnswer, rules: Int, days: Int, slug: ProjectSlug, from path: String)
        -> DryRunView
    {
        func issue(_ id: IssueID) -> IssueLink {
            IssueLink(number: id.rawValue, href: SitePaths.relative(from: path, to: SitePaths.issue(slug, id)))
        }
        func destination(_ to: GroupingDryRunAnswer.Destination) -> Destination {
            Destination(toIssue: to.issue.map(issue), newFingerprint: to.issue == nil ? to.fingerprint ?? "?" : nil)
        }
        func examples(_ ids: [String]) -> [EventLink] {
            ids.map { raw in
                EventLink(
                    id: raw,
                    href: EventID(raw).map { SitePaths.relative(from: path, to: SitePaths.event(slug, $0)) })
            }
        }
        func counts(_ events: Int, _ users: Int) -> String {
            Format.count(events, "event") + ", " + Format.count(users, "user")
        }
        func part(_ part: GroupingDryRunAnswer.Part) -> PartView {
            PartView(
                dest: destination(part.to), counts: counts(part.events, part.users), examples: examples(part.examples),
                hasExamples: !part.examples.isEmpty)
        }
        return DryRunView(
            summary: "Dry run of \(Format.count(rules, "rule")) over \(Format.count(answer.reports, "report")) of the "
                + "last \(Format.count(days, "day")). Nothing was changed.",
            notJudged: answer.withoutFacts > 0
                ? Format.count(answer.withoutFacts, "report") + " were filed before grouping facts were stored and "
                    + "are not judged (applying the rules regroups them too)."
                : nil,
            issues: "Issues: \(answer.issuesBefore) → \(answer.issuesAfter); "
                + "\(Format.count(answer.moved, "report")) would move, \(answer.unchanged) stay.",
            merges: answer.merges.map {
                MergeView(
                    issues: $0.issues.map(issue), into: destination($0.into), counts: counts($0.events, $0.users),
                    examples: examples($0.examples), hasExamples: !$0.examples.isEmpty)
            },
            mergeCount: answer.merges.count,
            splits: answer.splits.map { SplitView(issue: issue($0.issue), parts: $0.parts.map(part)) },
            splitCount: answer.splits.count,
            moves: answer.moves.map { MoveView(issue: issue($0.issue), to: part($0.to)) },
            moveCount: answer.moves.count,
            matched: answer.matchedByRule.isEmpty
                ? nil
                : "Reports matched: "
                    + answer.matchedByRule.map { "line \($0.line): \($0.reports)" }.joined(separator: ", ") + ".")
    }
}

extension SiteRenderer {
    /// The fingerprint rules page of `overview`'s project.
    ///
    /// - Throws: `DashboardError` when the template fails.
    public func groupingRulesPage(_ overview: GroupingRulesOverview) throws -> String {
        try templates.render(GroupingRulesPage(overview), as: "grouping_rules")
    }
}
