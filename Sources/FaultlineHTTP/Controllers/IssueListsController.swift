import FaultlineCore
import Hummingbird
import Pipeline

/// `GET /{slug}/list?status=&kind=&sort=&release=&page=`: one page of one of the project's issue lists, rendered
/// live (the static `issues.html` is the first page of the default list; every other list, filter and page is
/// answered here). Behind the dashboard guard like the site's files; `Cache-Control: no-store`, since the page holds
/// the login session's CSRF token in its row forms and changes with every event.
///
/// A bad query value is a 400 naming the parameter (`status`, `kind`, `sort`, `release`, `page`); an unknown project
/// a 404; a page past the end of the list an empty page that says so (a bookmark of a list that has shrunk).
struct IssueListsController {
    /// Renders the page (the Dashboard module's `SiteRenderer.issueListPage`, wired by the composition root).
    let render: IssueListRendering
    let projects: ProjectService

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self).get("{slug}/list", use: list)
    }

    @Sendable func list(_ request: Request, context: AppRequestContext) async throws -> Response {
        let rawSlug = try context.parameters.require("slug")
        guard let slug = ProjectSlug(rawSlug), let project = try await projects.project(slug: slug) else {
            throw APIError.notFound("no project \"\(rawSlug)\"")
        }
        let parameters = try Self.queryParameters(request.uri.query ?? "")
        let listRequest: IssueListRequest
        do {
            listRequest = try IssueListRequest(parameters: parameters)
        } catch {
            throw APIError.badRequest(error.message, field: error.field)
        }
        // A reader who may not change issues (a viewer, a public dashboard) gets the list without its row forms.
        let allowed = ActionForms.allowed(context, project: project.id)
        let token = allowed ? context.adminSession.map { CSRFToken.token(for: $0) } : nil
        let html = try await render(project, listRequest, token)
        return Response.dynamicPage(allowed ? html : ActionForms.removed(from: html))
    }

    /// The fields of a query string as a browser's GET form sends them (`application/x-www-form-urlencoded`: `+` is
    /// a space, `%XX` a byte); the first of repeated names wins.
    ///
    /// - Throws: 400 when a name or value is not valid percent-encoded UTF-8.
    static func queryParameters(_ query: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = LoginController.percentDecode(String(kv[0])) else {
                throw APIError.badRequest("the query is not valid percent-encoded UTF-8")
            }
            let raw = kv.count > 1 ? String(kv[1]) : ""
            guard let value = LoginController.percentDecode(raw) else {
                throw APIError.badRequest("not valid percent-encoded UTF-8", field: name)
            }
            if out[name] == nil { out[name] = value }
        }
        return out
    }
}

/// Renders one page of an issue list for a project, with the session's CSRF token (nil: no login session).
public typealias IssueListRendering =
    @Sendable (_ project: Project, _ request: IssueListRequest, _ csrfToken: String?) async throws -> String
