import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One page of an issue list: the site's static `<slug>/issues.html` (the first page of every issue, most recently
/// seen first) or a list served live at `<slug>/list?…` (``SiteRenderer/issueListPage(project:request:insights:csrfToken:now:)``).
/// Both sit in the project's folder, so their relative links are the same. Above the table, a plain GET form to
/// `list` picks status, kind, release and order; each row has close / reopen / mute buttons posting to the issue's
/// status route with a `back` field naming the list to come back to; below, links to the other pages.
struct IssueListPage {
    /// One `<option>` of a filter `<select>`.
    struct Option {
        var value: String
        var label: String
        var selected: Bool
    }

    /// One `<select>` of the filter form.
    struct Select {
        var name: String
        var selectID: String
        var label: String
        var options: [Option]
    }

    /// A status button of a row.
    struct RowAction {
        var actionStatus: String
        var actionLabel: String
        /// "Close issue 12" (each row's buttons say which issue they act on).
        var actionName: String
    }

    /// One row: the issue, its buttons and its checkbox of the merge form.
    struct Row {
        var issue: IssueRowView
        var statusActionHref: String
        var actions: [RowAction]
        /// The issue's number, the value of its checkbox in the merge form.
        var issueNumber: String
    }

    /// The rows of one kind (``IssueCategory``): a list of every kind shows crashes, hangs and non-fatal errors in
    /// sections of their own, in that order, each in the list's order and linked to the list of that kind alone; a
    /// list of one kind is one section without a heading. Every section's table has the list's caption (the
    /// section's heading names the kind).
    struct KindSection {
        var sectionID: String
        var sectionHeading: String?
        /// The live list of this kind alone (every page of it), for a section of a list of every kind.
        var onlyHref: String?
        var onlyLabel: String?
        var rows: [Row]
    }

    /// The links below a list of more than one page.
    struct Paging {
        var firstHref: String?
        var previousHref: String?
        var nextHref: String?
        var lastHref: String?
        var text: String
    }

    var chrome: PageChrome
    var projectName: String
    /// The filter form's action and the pages' links: the live list, relative to this page.
    var listHref: String
    var caption: String
    var selects: [Select]
    /// This page's rows by kind (``KindSection``).
    var sections: [KindSection]
    var hasRows: Bool
    var emptyText: String
    var totalText: String
    var paging: Paging?
    /// Links to the release's page when the list is one release's and the release has a page.
    var releaseHref: String?
    var releaseName: String?
    /// The CSRF token, or ``DashboardForms/csrfPlaceholder`` in a page the server fills for each session.
    var csrfValue: String
    /// Where a row's form sends the browser back to (`/<slug>/list?…`).
    var backPath: String
    /// The merge form's action (``SitePaths/issueMergeAction(_:)``), relative to this page; nil on a page of fewer
    /// than two issues. The rows' checkboxes belong to it (`form="merge-issues"`), and sit in the rows' own forms,
    /// so a reader without the forms loses both.
    var mergeActionHref: String?

    /// - Parameters:
    ///   - path: the page's own site path (`<slug>/issues.html` or `<slug>/list`).
    ///   - request: the list and page.
    ///   - issues: this page's issues, in order.
    ///   - position: where the page falls in the list.
    ///   - releaseChoices: releases offered by the form's release select (newest first).
    ///   - renderedReleases: releases that have a page (linked from rows).
    ///   - csrfValue: the session's token, or the placeholder for a static page.
    ///   - now: the render time for a static page; nil for a page served live.
    ///   - trending: the project's trending issues, whose rows carry the mark.
    init(
        slug: ProjectSlug, path: String, request: IssueListRequest, issues: [IssueSummary],
        paging position: IssueListPaging,
        releaseChoices: [String], renderedReleases: Set<String>, csrfValue: String, now: Date?,
        trending: TrendingMarks = TrendingMarks()
    ) {
        let filter = request.filter
        chrome = PageChrome(
            path: path, title: request.page > 1 ? "Issues, page \(request.page)" : "Issues", project: slug, now: now)
        projectName = slug.rawValue
        caption = filter.caption
        self.csrfValue = csrfValue
        let listPath = SitePaths.issueList(slug)
        listHref = SitePaths.relative(from: path, to: listPath)
        func href(_ page: Int) -> String {
            let query = filter.queryString(page: page)
            let target = SitePaths.relative(from: path, to: listPath)
            return query.isEmpty ? target : target + "?" + query
        }
        let ownQuery = filter.queryString(page: request.page)
        // Back to the live list even from the static issues.html: it shows the change at once (the static page is
        // rewritten by the next render, a moment later).
        backPath = "/" + listPath + (ownQuery.isEmpty ? "" : "?" + ownQuery)

        func options<T: RawRepresentable<String>>(_ all: [T], _ current: T, _ label: (T) -> String) -> [Option] {
            all.map { Option(value: $0.rawValue, label: label($0), selected: $0 == current) }
        }
        var releaseOptions = [Option(value: "", label: "All releases", selected: filter.release == nil)]
        var choices = releaseChoices
        if let release = filter.release, !choices.contains(release) { choices.insert(release, at: 0) }
        releaseOptions += choices.map { Option(value: $0, label: $0, selected: $0 == filter.release) }
        selects = [
            Select(
                name: "status", selectID: "filter-status", label: "Status",
                options: options(IssueListFilter.Status.allCases, filter.status) {
                    switch $0 {
                    case .all: "All statuses"
                    case .open: "Open"
                    case .closed: "Closed"
                    case .muted: "Muted"
                    case .regressed: "Regressed"
                    }
                }),
            Select(
                name: "kind", selectID: "filter-kind", label: "Kind",
                options: options(IssueListFilter.Kind.allCases, filter.kind) {
                    switch $0 {
                    case .all: "Every kind"
                    case .crash: "Crashes"
                    case .hang: "Hangs and ANRs"
                    case .nonFatal: "Non-fatal"
                    }
                }),
            Select(name: "release", selectID: "filter-release", label: "Release", options: releaseOptions),
            Select(
                name: "sort", selectID: "filter-sort", label: "Sort by",
                options: options(IssueOrder.allCases, filter.sort) {
                    switch $0 {
                    case .lastSeen: "Last seen"
                    case .users: "Users affected"
                    case .events: "Events"
                    }
                }),
        ]

        let rows = issues.map { issue in
            let view = IssueRowView(issue, slug: slug, from: path, releases: renderedReleases, trending: trending)
            let actions = DashboardForms.settableStatuses.filter { $0 != issue.status }.map { status -> RowAction in
                let label =
                    switch status {
                    case .open: "Reopen"
                    case .closed: "Close"
                    case .muted: "Mute"
                    }
                return RowAction(
                    actionStatus: status.rawValue, actionLabel: label, actionName: "\(label) issue \(issue.id.rawValue)"
                )
            }
            return Row(
                issue: view,
                statusActionHref: SitePaths.relative(from: path, to: SitePaths.issueStatusAction(slug, issue.id)),
                actions: actions, issueNumber: String(issue.id.rawValue))
        }
        mergeActionHref =
            rows.count >= 2 ? SitePaths.relative(from: path, to: SitePaths.issueMergeAction(slug)) : nil
        let target = listHref
        sections = Self.sections(rows, issues: issues, filter: filter) { kind in
            var only = filter
            only.kind = kind
            let query = only.queryString()
            return target + (query.isEmpty ? "" : "?" + query)
        }
        hasRows = !rows.isEmpty
        if let offset = position.offset, !issues.isEmpty {
            totalText = "Issues \(offset + 1)–\(offset + issues.count) of \(position.total)"
        } else {
            totalText = position.total == 1 ? "1 issue" : "\(position.total) issues"
        }
        if position.isPastEnd {
            emptyText =
                "Page \(position.page) is past the end of this list (\(position.pageCount) "
                + (position.pageCount == 1 ? "page" : "pages") + ")."
        } else {
            emptyText = filter.isDefault ? "No issues yet." : "No issues in this list."
        }
        if position.pageCount > 1 || position.isPastEnd {
            let page = position.page
            self.paging = Paging(
                firstHref: page > 1 ? href(1) : nil,
                previousHref: page > 1 ? href(min(page - 1, position.pageCount)) : nil,
                nextHref: page < position.pageCount ? href(page + 1) : nil,
                lastHref: page < position.pageCount ? href(position.pageCount) : nil,
                text: position.isPastEnd
                    ? "The list has \(position.pageCount) "
                        + (position.pageCount == 1 ? "page" : "pages") : "Page \(page) of \(position.pageCount)")
        } else {
            self.paging = nil
        }
        releaseName = filter.release
        if let release = filter.release, renderedReleases.contains(release) {
            releaseHref = SitePaths.relative(from: path, to: SitePaths.release(slug, release))
        } else {
            releaseHref = nil
        }
    }

    /// `rows` (made from `issues`, in the same order) in sections by kind: for a list of every kind, one section per
    /// kind present (crashes, hangs, non-fatal errors, by the category stored with each issue), each linked through
    /// `onlyHref` to its kind's own list; for a list of one kind, one section.
    static func sections(
        _ rows: [Row], issues: [IssueSummary], filter: IssueListFilter, onlyHref: (IssueListFilter.Kind) -> String
    ) -> [KindSection] {
        guard filter.kind == .all else {
            return [KindSection(sectionID: "issues", rows: rows)]
        }
        let categories = issues.map(\.category)
        return IssueCategory.allCases.compactMap { category in
            let kept = zip(rows, categories).filter { $0.1 == category }.map(\.0)
            guard !kept.isEmpty else { return nil }
            let label =
                switch category {
                case .crash: "Every crash of this list"
                case .hang: "Every hang and ANR of this list"
                case .nonFatal: "Every non-fatal error of this list"
                }
            return KindSection(
                sectionID: category.rawValue, sectionHeading: category.heading,
                onlyHref: onlyHref(IssueListFilter.Kind(category)), onlyLabel: label, rows: kept)
        }
    }
}
