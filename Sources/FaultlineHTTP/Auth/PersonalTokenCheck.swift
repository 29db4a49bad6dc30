import FaultlineCore
import Hummingbird
import Pipeline

/// The edge's check of a personal API token on one group of routes: the token is live, its person may see the
/// request's project, its scopes cover the use, and the person's role there (lowered to the scopes) allows it.
///
/// The project a token acts in is named by the request, in this order: `?project=SLUG`; sentry-cli's path
/// (`/api/0/projects/{org}/{project}/…`, or `/api/0/organizations/{org}/…` when `{org}` is a project's slug); else the
/// person's only project. A person of several projects who names none gets 400.
///
/// | case | answer |
/// |---|---|
/// | unknown, revoked, expired token; person removed | 401 (counts toward the address's failed logins) |
/// | a project the person has no role in, or none such | 404, as if it did not exist |
/// | the scopes do not cover the use | 403 naming the scope |
/// | the role (lowered to the scopes) does not allow it | 403 |
struct PersonalTokenCheck: Sendable {
    enum Routes: Sendable {
        /// The read and write API: `GET`/`HEAD` read, any other method writes issues.
        case api
        /// Debug-file uploads (symupload, sentry-cli).
        case upload
    }
    let tokens: AccountService
    let routes: Routes

    /// The use `request` makes of a token on these routes.
    func use(_ request: Request) -> TokenUse {
        switch routes {
        case .upload: return .uploadSymbols
        case .api:
            if request.method == .get || request.method == .head { return .read }
            // The rules' dry run changes nothing: a read, as on the rules page (decision 0075).
            return request.method == .post && request.uri.path == Self.dryRunPath ? .read : .writeIssues
        }
    }

    /// `POST /api/v1/grouping/try`: the one post of the API that reads only.
    static let dryRunPath = "/api/v1/grouping/try"

    /// The grant of `secret` for `request`; nil when the token is not live. Throws the 400/403/404 of the table.
    func grant(_ secret: String, request: Request, projects: ProjectService) async throws
        -> PersonalTokenGrantInProject?
    {
        guard let (token, person) = try await tokens.authenticate(secret) else { return nil }
        let project = try await self.project(of: request, person: person, projects: projects)
        guard Access.canRead(.person(person), project: project.id) else {
            throw APIError.notFound("no project \"\(project.slug)\"")
        }
        let use = use(request)
        guard use.allowed(by: token.scopes) else {
            throw APIError.forbidden(
                "this token's scopes (\(TokenScope.encode(token.scopes))) do not include \(use.scope.rawValue)")
        }
        let narrowed = PersonalTokenGrant.narrowed(person, scopes: token.scopes, project: project.id)
        switch Access.decide(.person(narrowed), use.action, project: project.id) {
        case .allowed:
            return PersonalTokenGrantInProject(
                token: token.id, tokenName: token.name, person: narrowed, project: project)
        case .hidden: throw APIError.notFound("no project \"\(project.slug)\"")
        case .forbidden:
            throw APIError.forbidden(
                "\(person.displayName)'s role in \(project.slug) does not allow this (a viewer reads only)")
        }
    }

    /// The project the request names (see the type's comment).
    func project(of request: Request, person: Person, projects: ProjectService) async throws -> Project {
        if let raw = request.uri.queryParameters["project"].map(String.init) {
            guard let slug = ProjectSlug(raw), let found = try await projects.project(slug: slug) else {
                throw APIError.notFound("no project \"\(raw.prefix(64))\"")
            }
            return found
        }
        let segments = request.uri.path.split(separator: "/").map(String.init)
        if segments.count >= 5, segments[0] == "api", segments[1] == "0", segments[2] == "projects" {
            guard let slug = ProjectSlug(segments[4]), let found = try await projects.project(slug: slug) else {
                throw APIError.notFound("no project \"\(segments[4].prefix(64))\"")
            }
            return found
        }
        if segments.count >= 4, segments[0] == "api", segments[1] == "0", segments[2] == "organizations",
            let slug = ProjectSlug(segments[3]), let found = try await projects.project(slug: slug)
        {
            return found
        }
        if !person.owner, person.memberships.count == 1, let only = person.memberships.first,
            let found = try await projects.all().first(where: { $0.id == only.project })
        {
            return found
        }
        throw APIError.badRequest(
            "a personal token acts in one project at a time: name it with ?project=SLUG", field: "project")
    }
}
