import FaultlineCore

extension IssuePage {
    /// An issue page's tracker part: a prefilled new issue in the project's tracker (`TrackerLink`), and the tracker
    /// issue the team recorded for it, with the form that records it.
    struct TrackerView {
        /// The new-issue URL in the project's tracker; nil when the project names none.
        var newIssueHref: String?
        /// The tracker's name as the link says it: GitHub, GitLab, Gitea or Jira.
        var trackerName: String
        /// The tracker issue opened for this one (checked http/https when it was stored); nil when none.
        var issueURL: String?
        /// Where the form posts, relative to this page (`<id>/tracker`).
        var actionHref: String
        var maxBytes: Int

        init(tracker: IssueTracker?, detail: IssueDetail, page path: String, publicURL: String?) {
            let issue = detail.summary
            let link = publicURL.flatMap { base -> String? in
                guard !base.isEmpty else { return nil }
                return (base.hasSuffix("/") ? base : base + "/") + path
            }
            newIssueHref = tracker.map {
                TrackerLink.newIssueURL(
                    $0,
                    TrackerIssueDraft(
                        title: issue.title.isEmpty ? "Issue \(issue.id.rawValue)" : issue.title, culprit: issue.culprit,
                        events: issue.events, users: issue.users, firstRelease: issue.firstRelease, link: link))
            }
            trackerName =
                switch tracker?.kind {
                case .github: "GitHub"
                case .gitlab: "GitLab"
                case .gitea: "Gitea"
                case .jira: "Jira"
                case nil: "tracker"
                }
            issueURL = detail.trackerURL
            actionHref = "\(issue.id.rawValue)/tracker"
            maxBytes = TrackerURL.maxBytes
        }
    }
}
