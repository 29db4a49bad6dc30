import FaultlineCore
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Serves the rendered site (Hummingbird's `FileMiddleware` over ``SitePageFiles``: one open a request, so a page
/// replaced while it is served is never sent cut short), with these rules in front of it:
///
/// - never under an open route or a reserved name (`/api/…`, `/metrics`…): those paths skip the dashboard guard,
///   so a site folder there would be public;
/// - a path with empty segments (`//beta`, `/%2F%2Fbeta`) is redirected to its collapsed form (`/beta`): the file
///   middleware would answer a folder's `//beta` with `Location: //beta/`, which a browser reads as the host `beta`;
/// - a path with a backslash or a control character is not a site path (404);
/// - an issue page (`/{slug}/issues/{n}.html`) or issue list (`/{slug}/issues.html`) served to a login session gets
///   that session's CSRF token in its forms (``DashboardForms``), and is not cached; served to a reader who may not
///   change issues (a viewer, a public dashboard, a Basic-auth reader without a session) it has no forms
///   (``ActionForms``);
/// - an issue page is made current before it is served (`currentIssuePage`: rendered when its issue changed since
///   the page was rendered), so a reader never waits for the render cycle to see an issue's new events. When that
///   render fails (a full disk), the page there is served. An issue with no page and no issue (a link opened before
///   its reports were grouped) answers 404 with an HTML page that says it does not exist (yet).
struct SiteFilesMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let files: FileMiddleware<Context, SitePageFiles>
    let folder: String
    let currentIssuePage: (@Sendable (ProjectSlug, IssueID) async throws -> String?)?
    /// Finds the project of a page, to ask whether a person's role may use its forms (nil: only the admin token's
    /// sessions see forms).
    let projects: ProjectService?

    init(
        folder: String, currentIssuePage: (@Sendable (ProjectSlug, IssueID) async throws -> String?)? = nil,
        projects: ProjectService? = nil
    ) {
        self.projects = projects
        self.folder = folder
        self.currentIssuePage = currentIssuePage
        files = FileMiddleware(fileProvider: SitePageFiles(root: folder), searchForIndexHtml: true)
    }

    /// The project and issue when `decoded` is exactly an issue page's path (`/{slug}/issues/{n}.html`, n > 0).
    static func issuePageTarget(_ decoded: String) -> (ProjectSlug, IssueID)? {
        let parts = decoded.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0].isEmpty, let slug = ProjectSlug(String(parts[1])), parts[2] == "issues",
            parts[3].hasSuffix(".html")
        else { return nil }
        let number = parts[3].dropLast(5)
        // Digits only (no sign, no spaces), and no overflow: `Int64` answers nil for anything larger.
        guard !number.isEmpty, number.count <= 19, number.allSatisfy({ $0.isASCII && $0.isNumber }),
            let value = Int64(number), value > 0
        else { return nil }
        return (slug, IssueID(value))
    }

    /// `slug/issues/n.html` when `decoded` is exactly an issue page's path, `slug/issues.html` when it is a project's
    /// issue list (whose rows have status forms too), else nil.
    static func issuePage(_ decoded: String) -> String? {
        let parts = decoded.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 3, parts[0].isEmpty, ProjectSlug(String(parts[1])) != nil, parts[2] == "issues.html" {
            return "\(parts[1])/issues.html"
        }
        guard parts.count == 4, parts[0].isEmpty, ProjectSlug(String(parts[1])) != nil, parts[2] == "issues",
            parts[3].hasSuffix(".html")
        else { return nil }
        let number = parts[3].dropLast(5)
        guard !number.isEmpty, number.count <= 19, number.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return "\(parts[1])/issues/\(number).html"
    }

    /// Whether the request's reader may use the forms of a page of `slug` (``ActionForms``).
    func formsAllowed(_ context: Context, slug: Substring) async -> Bool {
        guard context.adminSession != nil, let requester = context.requester else { return false }
        // The admin token may use every project's forms: no lookup.
        if case .adminToken = requester { return true }
        guard let slug = ProjectSlug(String(slug)), let project = try? await projects?.project(slug: slug) else {
            return false
        }
        return ActionForms.allowed(context, project: project.id)
    }

    /// The page without the forms its reader may not use; nil when the file is not there.
    func readOnlyPage(_ relative: String) -> Response? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + relative) else { return nil }
        return Response.dynamicPage(ActionForms.removed(from: String(decoding: data, as: UTF8.self)))
    }

    /// The issue page with `session`'s CSRF token in its forms; nil when the file is not there.
    func issuePage(_ relative: String, session: AdminSession) -> Response? {
        guard let data = FileManager.default.contents(atPath: folder + "/" + relative) else { return nil }
        let page = String(decoding: data, as: UTF8.self)
        let filled = page.replacingOccurrences(
            of: DashboardForms.csrfField,
            with:
                "<input type=\"hidden\" name=\"\(DashboardForms.csrfName)\" value=\"\(CSRFToken.token(for: session))\">"
        )
        return Response.dynamicPage(filled)
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.method == .get || request.method == .head else { return try await next(request, context) }
        let raw = request.uri.path
        if DashboardPaths.isOpenRoute(raw) { return try await next(request, context) }
        guard let decoded = DashboardPaths.percentDecoded(raw), decoded.hasPrefix("/") else {
            return try await next(request, context)
        }
        if ProjectSlug.reserved.contains(String(DashboardPaths.firstSegment(decoded))) {
            return try await next(request, context)
        }
        if decoded.unicodeScalars.contains(where: { $0 == "\\" || $0.value < 0x20 || $0.value == 0x7f }) {
            return try await next(request, context)
        }
        if decoded.contains("//") {
            var collapsed = ""
            for segment in raw.split(separator: "/", omittingEmptySubsequences: true) {
                collapsed += "/" + segment
            }
            // Segments that decode to "/" (`%2F`) are dropped: no site path has them.
            let target = collapsed.isEmpty ? "/" : collapsed
            guard DashboardPaths.isLocalRedirect(target), DashboardPaths.percentDecoded(target)?.contains("//") == false
            else {
                return try await next(request, context)
            }
            return Response(status: .movedPermanently, headers: [.location: target])
        }
        if let currentIssuePage, let (slug, issue) = Self.issuePageTarget(decoded),
            let missing = (try? await currentIssuePage(slug, issue)) ?? nil
        {
            // No such issue (yet), and no page of it: an HTML page that says so, not the API's JSON 404.
            return Response.dynamicPage(missing, status: .notFound)
        }
        if let relative = Self.issuePage(decoded) {
            let allowed = await formsAllowed(context, slug: DashboardPaths.firstSegment(decoded))
            let page =
                if allowed, let session = context.adminSession {
                    issuePage(relative, session: session)
                } else {
                    readOnlyPage(relative)
                }
            if let page { return page }
        }
        return try await files.handle(request, context: context, next: next)
    }
}
