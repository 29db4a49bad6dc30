import FaultlineCore
import Hummingbird
import Pipeline

/// What the fingerprint rules page needs (issue #36): the rules service the API and the CLI use, the projects, the
/// audit trail (who set each version, from where), and the page (rendered by the Dashboard module, wired by the
/// composition root).
public struct GroupingRulesPages: Sendable {
    public var service: GroupingRulesService
    public var projects: ProjectService
    public var audit: (any AuditTrail)?
    /// Renders the page; throws when the template fails (a 500).
    public var render: @Sendable (GroupingRulesOverview) throws -> String

    public init(
        service: GroupingRulesService, projects: ProjectService, audit: (any AuditTrail)?,
        render: @escaping @Sendable (GroupingRulesOverview) throws -> String
    ) {
        self.service = service
        self.projects = projects
        self.audit = audit
        self.render = render
    }
}

/// A project's fingerprint rules page, behind the dashboard guard (docs/grouping.md, "The rules page"):
///
/// - `GET /{slug}/settings/grouping`: the rules in force with their version, who set them and when, the earlier
///   versions, the regroup's progress (as `faultline grouping progress` prints it), and the form;
/// - `POST /{slug}/settings/grouping` with `rules`, `days` and `do=try`: the dry run (``GroupingRulesService/dryRun``,
///   as `POST /api/v1/grouping/try`) answered on the page; it changes nothing, so every role that reads the project
///   may run it (decision 0075), as an upload token may on the API;
/// - the same with `do=apply`: stores the text as the next version (``GroupingRulesService/set``, as
///   `PUT /api/v1/grouping/rules`, audited as the person) and the background regroup starts; a 303 back to the page,
///   which shows the progress. Project admins, owners and the admin token only: anyone else gets 403 before anything
///   of the project is read, and nothing is stored.
///
/// Both posts carry the session's CSRF token (``CSRFToken``): without it, or with another session's, 403. A text that
/// does not parse answers the page with 400, the mistake's line and column, and the text kept in the form.
struct GroupingRulesPageController {
    let pages: GroupingRulesPages

    /// The form's text percent-encoded (up to three bytes per byte), the token, the days and the button.
    static let maxFormBytes = 3 * FingerprintRules.maxTextBytes + 4096
    /// The days a first view offers to try rules on (as `faultline grouping try`).
    static let defaultDays = 30

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("{slug}/settings/grouping", use: show)
            .post("{slug}/settings/grouping", use: submit)
    }

    /// The project of the request and who reads it: 404 for a project the reader has nothing to do with.
    struct Reader {
        var project: Project
        var requester: Requester
        var mayApply: Bool
    }

    func reader(_ context: AppRequestContext) async throws -> Reader {
        let rawSlug = try context.parameters.require("slug")
        guard let slug = ProjectSlug(rawSlug), let project = try await pages.projects.project(slug: slug) else {
            throw APIError.notFound("no project \"\(rawSlug)\"")
        }
        let requester = context.requester ?? .publicReader
        switch Access.decide(requester, .read, project: project.id) {
        case .allowed: break
        case .hidden: throw APIError.notFound("no project \"\(rawSlug)\"")
        case .forbidden: throw APIError.forbidden("you may not read this project")
        }
        let mayApply =
            context.adminSession != nil && Access.decide(requester, .changeSettings, project: project.id) == .allowed
        return Reader(project: project, requester: requester, mayApply: mayApply)
    }

    /// The page for `reader`, with the form holding `text` and `days` and what it answered.
    func page(
        _ reader: Reader, context: AppRequestContext, text: String?, days: String,
        outcome: GroupingRulesOverview.Outcome, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let id = reader.project.id
        let versions = try await pages.service.versions(project: id)
        // The trail names addresses: only those who may read it (admins, owners) see it here, as on the API.
        var audit: [AuditRecord] = []
        if reader.mayApply, let trail = pages.audit {
            audit = try await trail.entries(
                AuditQuery(project: id, kind: AuditKind.projectGroupingRules.rawValue, limit: 20))
        }
        let overview = GroupingRulesOverview(
            project: reader.project.slug, versions: versions, audit: audit,
            progress: try await pages.service.progress(project: id), mayApply: reader.mayApply,
            csrf: context.adminSession.map { CSRFToken.token(for: $0) }, text: text ?? versions.first?.rules ?? "",
            days: days, outcome: outcome)
        return Response.dynamicPage(try pages.render(overview), status: status)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        try await page(reader(context), context: context, text: nil, days: "\(Self.defaultDays)", outcome: .none)
    }

    @Sendable func submit(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = String(buffer: try await request.body.collect(upTo: Self.maxFormBytes))
        let fields = LoginController.formFields(body)
        guard let session = context.adminSession else {
            throw APIError.forbidden(
                "trying fingerprint rules from the dashboard needs a login session: log in at /login")
        }
        guard CSRFToken.verify(fields[DashboardForms.csrfName], session: session) else {
            throw APIError.forbidden(
                "the form's CSRF token is missing or not this session's: reload the page and try again")
        }
        let reader = try await reader(context)
        let text = fields["rules"] ?? ""
        switch fields["do"] ?? "try" {
        case "apply":
            guard reader.mayApply else {
                throw APIError.forbidden(
                    "applying fingerprint rules needs the project's admin role (a dry run is open to every role)")
            }
            return try await apply(text, reader: reader, session: session, context: context, days: fields["days"])
        case "try":
            return try await dryRun(text, reader: reader, context: context, days: fields["days"] ?? "")
        default:
            throw APIError.badRequest("must be try or apply", field: "do")
        }
    }

    func dryRun(_ text: String, reader: Reader, context: AppRequestContext, days raw: String) async throws -> Response {
        let shownDays = raw.trimmingCharacters(in: .whitespaces)
        guard let days = Int(shownDays), (1...GroupingDryRun.maxDays).contains(days) else {
            return try await page(
                reader, context: context, text: text, days: shownDays,
                outcome: .refused("The days must be a whole number from 1 to \(GroupingDryRun.maxDays)."),
                status: .badRequest)
        }
        do {
            let answer = try await pages.service.dryRun(text, project: reader.project.id, days: days)
            let rules = try FingerprintRules.parse(text).rules.count
            return try await page(
                reader, context: context, text: text, days: shownDays,
                outcome: .dryRun(answer, rules: rules, days: days))
        } catch let error as FingerprintRulesError {
            return try await page(
                reader, context: context, text: text, days: shownDays, outcome: .mistake(error), status: .badRequest)
        }
    }

    func apply(
        _ text: String, reader: Reader, session: AdminSession, context: AppRequestContext, days: String?
    ) async throws -> Response {
        let by: String
        if case .person(let person) = reader.requester {
            by = StatusChanger.person(person)
        } else {
            by = "the dashboard (admin token)"
        }
        do {
            let version = try await pages.service.set(
                text, project: reader.project.id, by: by, origin: context.changeOrigin())
            context.logger.info(
                "fingerprint rules set from the dashboard",
                metadata: ["project": "\(reader.project.slug)", "version": "\(version)"])
        } catch let error as FingerprintRulesError {
            return try await page(
                reader, context: context, text: text, days: days ?? "\(Self.defaultDays)", outcome: .mistake(error),
                status: .badRequest)
        }
        return Response(
            status: .seeOther,
            headers: [.location: "/\(reader.project.slug.rawValue)/settings/grouping", .cacheControl: "no-store"])
    }
}
