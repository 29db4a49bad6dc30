import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension SiteRenderer {
    /// Reports shown per page of search results.
    public static let searchPageSize = 25

    /// The last page number a search answers (paging stops where counting stops, ``SearchResults/countLimit``).
    public static var searchMaxPage: Int { SearchPage.maxPage(pageSize: searchPageSize) }

    /// The search page of `project` (served at `/<slug>/search`): the form, and the results when there are some.
    ///
    /// - Parameters:
    ///   - query: what the user typed (shown escaped in the box and the title).
    ///   - results: nil shows only the form (an empty query, or one refused with `error`).
    ///   - page: the 1-based page of reports shown.
    ///   - error: why the query was refused, shown above the form.
    /// - Throws: `DashboardError` when the template fails.
    public func searchPage(project: Project, query: String, results: SearchResults?, page: Int, error: String? = nil)
        throws
        -> String
    {
        try templates.render(
            SearchPage(
                project: project, query: query, results: results, page: max(1, page), pageSize: Self.searchPageSize,
                error: error),
            as: "search")
    }

    /// The page of one stored report of `project` (served at `/<slug>/events/<event id>`), rendered like an issue's
    /// latest event; `event == nil` gives the page saying it is not stored (the server answers it with 404).
    ///
    /// In-app frames are marked, system frames folded, and the source lines around in-app frames shown when
    /// `sourceContext` holds their files (as on an issue's page). `neighbours` gives the links through the issue's
    /// other events (newest, newer, older, oldest).
    ///
    /// - Throws: `DashboardError` when the template fails.
    public func eventPage(
        project: Project, eventID: String,
        event: (report: Report, symbols: SymbolicatedReport?, issue: IssueID?)?,
        sourceContext: (any SourceContextReading)? = nil, neighbours: IssueEventNeighbours? = nil
    ) async throws -> String {
        var excerpts: [CodeLocation: SourceExcerpt] = [:]
        if let event {
            excerpts = await SampleEventView.sourceExcerpts(
                report: event.report, symbols: event.symbols, inApp: project.inApp, project: project.id,
                reader: sourceContext)
        }
        return try templates.render(
            EventPage(project: project, eventID: eventID, event: event, sources: excerpts, neighbours: neighbours),
            as: "event_page")
    }
}
