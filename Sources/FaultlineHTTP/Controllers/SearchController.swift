import FaultlineCore
import Hummingbird
import Pipeline

/// What the search and event pages need from outside the HTTP module: reading the index and the stored report,
/// and rendering HTML (the Dashboard module). Built by the composition root.
public struct SearchPages: Sendable {
    /// The search page of a project: the text as typed, the parsed search (nil: show only the form), the 1-based
    /// page, and why the text was refused (shown on the page).
    public var search:
        @Sendable (_ project: Project, _ query: String, _ text: SearchText?, _ page: Int, _ error: String?)
            async throws -> String
    /// The page of one stored report of a project; nil when the project holds no such report.
    public var event: @Sendable (_ project: Project, _ id: EventID) async throws -> String?
    /// The page saying a report is not stored (answered with 404).
    public var eventMissing: @Sendable (_ project: Project, _ id: String) async throws -> String
    /// The last page of results a search answers.
    public var maxPage: Int

    public init(
        search: @escaping @Sendable (Project, String, SearchText?, Int, String?) async throws -> String,
        event: @escaping @Sendable (Project, EventID) async throws -> String?,
        eventMissing: @escaping @Sendable (Project, String) async throws -> String,
        maxPage: Int
    ) {
        self.search = search
        self.event = event
        self.eventMissing = eventMissing
        self.maxPage = maxPage
    }
}

/// The dashboard's server-rendered search pages, behind the dashboard guard like the site files:
///
/// - `GET /{slug}/search?q=…&page=…`: the search form and, for a non-empty `q`, the matching issues and reports
///   (docs/insights.md, "Search"). A `q` longer than 256 characters or of more than 16 terms, or a `page` that is not
///   a whole number from 1 to the last page, is 400 with the page saying why.
/// - `GET /{slug}/events/{event-id}`: one stored report of the project, in full; 404 (an HTML page) when the
///   project holds no such report, whatever another project holds.
///
/// Answers are never cached (`no-store`): they show live data.
struct SearchController {
    let pages: SearchPages
    let projects: ProjectService

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("{slug}/search", use: search)
            .get("{slug}/events/{event}", use: event)
    }

    func project(_ context: AppRequestContext) async throws -> Project {
        let raw = try context.parameters.require("slug")
        guard let slug = ProjectSlug(raw), let project = try await projects.project(slug: slug) else {
            throw APIError.notFound("no project \"\(raw)\"")
        }
        return project
    }

    /// The values of `q` and `page` in a query string (`+` is a space); nil for a value that is not percent-encoded
    /// UTF-8. A name given twice keeps its first value.
    static func queryValues(_ query: String) -> (q: String??, page: String??) {
        var q: String?? = .none
        var page: String?? = .none
        for pair in query.split(separator: "&").prefix(64) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count > 1 ? LoginController.percentDecode(String(parts[1])) : ""
            switch parts[0] {
            case "q" where q == nil: q = .some(value)
            case "page" where page == nil: page = .some(value)
            default: continue
            }
        }
        return (q, page)
    }

    @Sendable func search(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await project(context)
        let values = Self.queryValues(request.uri.query ?? "")
        var page = 1
        if case .some(let raw) = values.page {
            guard let raw, let number = Int(raw), number >= 1, number <= pages.maxPage else {
                throw APIError.badRequest("must be a whole number from 1 to \(pages.maxPage)", field: "page")
            }
            page = number
        }
        guard case .some(let decoded) = values.q else {
            return Response.dynamicPage(try await pages.search(project, "", nil, 1, nil))
        }
        guard let query = decoded else {
            throw APIError.badRequest("the search text is not percent-encoded UTF-8", field: "q")
        }
        let text: SearchText
        do {
            text = try SearchText.parse(query)
        } catch {
            let shown = String(query.unicodeScalars.prefix(SearchText.maxCharacters))
            return Response.dynamicPage(
                try await pages.search(project, shown, nil, 1, error.description), status: .badRequest)
        }
        return Response.dynamicPage(try await pages.search(project, query, text.isEmpty ? nil : text, page, nil))
    }

    @Sendable func event(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await project(context)
        let raw = try context.parameters.require("event")
        if let id = EventID(raw), let page = try await pages.event(project, id) {
            return Response.dynamicPage(page)
        }
        let shown = String(raw.unicodeScalars.prefix(64))
        return Response.dynamicPage(try await pages.eventMissing(project, shown), status: .notFound)
    }
}
