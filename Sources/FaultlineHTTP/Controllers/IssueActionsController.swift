import FaultlineCore
import Hummingbird
import Pipeline

/// The dashboard's issue forms, answered with a 303 back to the issue's page:
///
/// - `POST /{slug}/issues/{id}/status` with `status=open|closed|muted`, and optionally `back=` the issue list the
///   form was on (`/{slug}/list?…` or `/{slug}/issues.html`, see ``DashboardForms/returnPath(_:project:)``): the
///   answer then goes back there; any other `back` is ignored (the issue's page);
/// - `POST /{slug}/issues/{id}/note` with `note=…` (at most 2 KB; empty clears it);
/// - `POST /{slug}/issues/{id}/tracker` with `tracker_url=…` (the tracker issue opened for it; empty clears it);
/// - `POST /{slug}/issues/{id}/merge` with `issues=12, 15`: merges them into the issue (`IssueMerge`);
/// - `POST /{slug}/issues/{id}/unmerge` with `fingerprint=v2:…`: splits a merged fingerprint back out;
/// - `POST /{slug}/issues/merge` with `issues=12&issues=15…` (an issue list's checkboxes) and `back=`: merges the
///   selected issues into the oldest of them (``mergeSelected(_:context:)``).
///
/// The issue's page is rendered again before the answer, so the browser comes back to a page that shows the
/// change. Each form carries the login session's CSRF token (``CSRFToken``); without it, or with another one, 403. The
/// session's person must have a role that may change issues here (``Access``, `changeIssues`: member or admin; an
/// owner or the admin token): a viewer gets 403, a person of another project 404, and nothing changes. A person's
/// change is recorded with their id and name (``StatusChanger``), which the issue's page shows. Changes
/// go through ``IssueService`` like `PATCH /api/v1/issues/{id}`, so the site re-renders the same way. Behind the
/// dashboard guard: only a logged-in session has a token, so basic-auth and public dashboards get pages without the
/// forms, and a post without a session is 403 (which says to log in).
struct IssueActionsController {
    let issues: IssueService
    let projects: ProjectService
    /// Renders the issue's page before the answer sends the browser back to it.
    let refreshPage: @Sendable (Project, IssueID) async throws -> Void

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .post("{slug}/issues/{id}/status", use: setStatus)
            .post("{slug}/issues/{id}/note", use: setNote)
            .post("{slug}/issues/{id}/tracker", use: setTrackerURL)
            .post("{slug}/issues/{id}/merge", use: merge)
            .post("{slug}/issues/{id}/unmerge", use: unmerge)
            .post("{slug}/issues/merge", use: mergeSelected)
    }

    /// A checked form: its fields, its session, and the issue it names.
    struct Target {
        var fields: [String: String]
        var session: AdminSession
        /// Who the session acts for: the admin token or a person whose role allows changing issues here.
        var requester: Requester
        var slug: ProjectSlug
        var project: Project
        var issue: IssueID
        /// The issue's page, where the answer sends the browser back.
        var page: String { "/\(slug)/issues/\(issue.rawValue).html" }
        /// Who made the change, as `issues.status_changed_by` records it: the person (``StatusChanger``), or the
        /// admin token's session.
        var changer: String {
            if case .person(let person) = requester { return StatusChanger.person(person) }
            return "the admin token (dashboard session \(session.id))"
        }
    }

    func target(_ request: Request, context: AppRequestContext, maxBytes: Int) async throws -> Target {
        let body = try await request.body.collect(upTo: maxBytes)
        return try await target(String(buffer: body), context: context) { _ in
            let rawID = try context.parameters.require("id")
            guard let value = Int64(rawID), value > 0 else {
                throw APIError.badRequest("must be an issue number", field: "id")
            }
            return IssueID(value)
        }
    }

    /// The form `body` checked (session, CSRF token, project, role) before `issue` picks the issue it acts on from
    /// the body: nothing of a form is read before its sender is known to be allowed.
    func target(_ body: String, context: AppRequestContext, issue: (String) throws -> IssueID) async throws -> Target {
        let fields = LoginController.formFields(body)
        guard let session = context.adminSession else {
            throw APIError.forbidden("changing an issue from the dashboard needs a login session: log in at /login")
        }
        guard CSRFToken.verify(fields[DashboardForms.csrfName], session: session) else {
            throw APIError.forbidden(
                "the form's CSRF token is missing or not this session's: reload the page and try again")
        }
        let rawSlug = try context.parameters.require("slug")
        guard let slug = ProjectSlug(rawSlug), let project = try await projects.project(slug: slug) else {
            throw APIError.notFound("no project \"\(rawSlug)\"")
        }
        let requester = context.requester ?? .publicReader
        switch Access.decide(requester, .changeIssues, project: project.id) {
        case .allowed: break
        case .hidden: throw APIError.notFound("no project \"\(rawSlug)\"")
        case .forbidden:
            throw APIError.forbidden(
                "a viewer reads this project's issues; closing, muting and notes need the member role")
        }
        return Target(
            fields: fields, session: session, requester: requester, slug: slug, project: project,
            issue: try issue(body))
    }

    /// The 303 back to `location` (the issue's page, or the list the form was on), once the issue's page shows
    /// the change. A page that cannot be rendered now (a full disk) is not an error of the change, which is
    /// stored: the render cycle retries it. The live lists read the database, so they show it anyway.
    func back(to target: Target, location: String? = nil) async -> Response {
        try? await refreshPage(target.project, target.issue)
        return Response(status: .seeOther, headers: [.location: location ?? target.page, .cacheControl: "no-store"])
    }

    @Sendable func setStatus(_ request: Request, context: AppRequestContext) async throws -> Response {
        // The CSRF token, the status and a `back` of at most 16 KB (a list's query, percent-encoded).
        let target = try await target(request, context: context, maxBytes: DashboardForms.maxBackBytes + 4096)
        guard let status = target.fields["status"].flatMap(IssueStatus.init(rawValue:)),
            DashboardForms.settableStatuses.contains(status)
        else { throw APIError.badRequest("must be open, closed or muted", field: "status") }
        guard
            try await issues.setStatus(
                status, issue: target.issue, project: target.project.id, by: target.changer,
                origin: context.changeOrigin())
                != nil
        else {
            throw APIError.notFound("no issue \(target.issue) in project \(target.slug)")
        }
        return await back(
            to: target,
            location: DashboardForms.returnPath(target.fields[DashboardForms.backName], project: target.slug))
    }

    @Sendable func setNote(_ request: Request, context: AppRequestContext) async throws -> Response {
        // A 2 KB note percent-encoded is at most 6 KB.
        let target = try await target(request, context: context, maxBytes: 16 * 1024)
        guard let text = target.fields["note"] else {
            throw APIError.badRequest("send the note as the field note", field: "note")
        }
        do {
            guard
                try await issues.setNote(
                    text, issue: target.issue, project: target.project.id, origin: context.changeOrigin())
            else {
                throw APIError.notFound("no issue \(target.issue) in project \(target.slug)")
            }
        } catch let error as IssueNoteError {
            throw APIError.badRequest(error.description, field: "note")
        }
        return await back(to: target)
    }

    /// `POST /{slug}/issues/{id}/tracker` with `tracker_url=…`: the tracker issue opened for this one (http or https,
    /// at most 2 KB; empty clears it).
    @Sendable func setTrackerURL(_ request: Request, context: AppRequestContext) async throws -> Response {
        // A 2 KB URL percent-encoded is at most 6 KB.
        let target = try await target(request, context: context, maxBytes: 16 * 1024)
        guard let text = target.fields["tracker_url"] else {
            throw APIError.badRequest("send the tracker issue's URL as the field tracker_url", field: "tracker_url")
        }
        // A refused URL is a `TrackerURLError`, a 400 naming `tracker_url` (`APIError.from`).
        guard
            try await issues.setTrackerURL(
                text, issue: target.issue, project: target.project.id, origin: context.changeOrigin())
        else {
            throw APIError.notFound("no issue \(target.issue) in project \(target.slug)")
        }
        return await back(to: target)
    }
}
