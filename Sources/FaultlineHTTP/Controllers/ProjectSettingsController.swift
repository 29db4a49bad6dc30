import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A project's settings page (issue #37), behind the dashboard guard and rendered live for each request:
///
/// - `GET /{slug}/settings[?before=ID]`: the project's members and roles, alert settings, crash-free targets, privacy
///   and in-app rules, and the latest 50 entries of its audit trail (older ones paged with `before`, read from the
///   same reader and parsed by the same rule as `GET /api/v1/audit`);
/// - `POST /{slug}/settings/members/invite` (`login`, `role`): invites a person, answering the page with the link
///   shown this once;
/// - `POST /{slug}/settings/members/{id}/role` (`role`) and `…/{id}/remove`: changes a member's role or takes them out
///   of the project;
/// - `POST /{slug}/settings/alerts`, `…/targets`, `…/privacy`, `…/in-app`: the settings of each section (a list is a
///   text area, one entry a line).
/// - `POST /{slug}/settings/keys/ingest` (`keep_old_days`) and `…/keys/upload` (`confirm`): replace the project's ingest key or
///   upload token (``ProjectService/rotate(_:slug:keepOldDays:by:)``), answering the page with the new secret shown
///   this once and when the old ingest key stops being accepted.
///
/// Who sees what (``Access``): anyone who may read the project sees its settings; only a login session whose reader
/// may change settings (the project's admins, server owners, the admin token's session) gets the forms and the
/// trail (which names people and their addresses, as the API's does). A post is checked in this order, before its
/// body is read: a session, the project (404 when the reader has nothing to do with it), the role (403), then the
/// form's CSRF token (403). Each change goes through the service the CLI and API use (``PeopleService``,
/// ``ProjectService``, ``AlertSettingsChange``), which records it in the audit trail as the signed-in reader.
struct ProjectSettingsController {
    let projects: ProjectService
    let people: PeopleService
    let alerts: AlertSettingsChange
    let alertStore: any AlertStore
    let audit: (any AuditTrail)?
    let clock: any WallClock
    /// The server's public URL, which invite links start with; nil: the link is a path on this server.
    let publicURL: String?
    let render: @Sendable (ProjectSettingsOverview) -> String

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("{slug}/settings", use: show)
            .post("{slug}/settings/members/invite", use: invite)
            .post("{slug}/settings/members/{id}/role", use: changeRole)
            .post("{slug}/settings/members/{id}/remove", use: remove)
            .post("{slug}/settings/alerts", use: saveAlerts)
            .post("{slug}/settings/targets", use: saveTargets)
            .post("{slug}/settings/privacy", use: savePrivacy)
            .post("{slug}/settings/in-app", use: saveInApp)
            .post("{slug}/settings/keys/ingest", use: rotateIngestKey)
            .post("{slug}/settings/keys/upload", use: rotateUploadToken)
    }

    // MARK: The page

    /// The project of the request's `{slug}`, when its reader may do `action` there: 404 for an unknown project or
    /// one the reader has nothing to do with, 403 when their role is too low.
    func project(_ context: AppRequestContext, for action: AccessAction) async throws -> Project {
        let raw = try context.parameters.require("slug")
        guard let slug = ProjectSlug(raw), let project = try await projects.project(slug: slug) else {
            throw APIError.notFound("no project \"\(raw)\"")
        }
        switch Access.decide(context.requester ?? .publicReader, action, project: project.id) {
        case .allowed: return project
        case .hidden: throw APIError.notFound("no project \"\(raw)\"")
        case .forbidden:
            throw APIError.forbidden("changing a project's settings needs its admin role (or a server owner)")
        }
    }

    /// The page of `project` for the request's reader, with what was just done.
    func page(
        _ context: AppRequestContext, project: Project, before: Int64? = nil,
        invite: ProjectSettingsOverview.Invite? = nil, rotated: ProjectSettingsOverview.Rotated? = nil,
        notice: String? = nil, error: String? = nil
    ) async throws -> String {
        let requester = context.requester ?? .publicReader
        let settingsLevel = Access.decide(requester, .changeSettings, project: project.id) == .allowed
        let csrf = settingsLevel ? context.adminSession.map { CSRFToken.token(for: $0) } : nil
        var trail: ProjectSettingsOverview.Trail?
        if settingsLevel, let audit {
            let query = AuditQuery(project: project.id, before: before, limit: Self.trailPage)
            let records = try await audit.entries(query)
            trail = .init(
                records: records, nextBefore: records.count == query.limit ? records.last?.id : nil,
                older: before != nil)
        }
        let members = try await people.all().compactMap { person -> ProjectSettingsOverview.Member? in
            guard let role = person.role(in: project.id) else { return nil }
            return .init(
                id: person.id, login: person.login.rawValue, name: person.name, role: role,
                active: person.passwordHash != nil)
        }
        return render(
            ProjectSettingsOverview(
                project: project, members: members, alerts: try await alertStore.settings(project: project.id),
                csrf: csrf, trail: trail, invite: invite, notice: notice, error: error, now: clock.now(),
                rotated: rotated))
    }

    /// Entries of the trail on one page, as `GET /api/v1/audit` answers by default.
    static let trailPage = 50

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await project(context, for: .read)
        let query = try AuditController.query(request.uri.queryParameters, project: project.id)
        return Response.dynamicPage(try await page(context, project: project, before: query.before))
    }

    // MARK: Forms

    /// A checked form: the project (the reader's role allows changing its settings), its fields, and who changes it.
    struct Form {
        var project: Project
        var fields: [String: String]
        var origin: AuditOrigin

        func text(_ name: String) -> String { fields[name]?.trimmingCharacters(in: .whitespaces) ?? "" }
        func checked(_ name: String) -> Bool { fields[name] != nil }
        /// A text area's lines, trimmed, without the empty ones.
        func lines(_ name: String) -> [String] {
            (fields[name] ?? "").split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
    }

    func form(_ request: Request, context: AppRequestContext) async throws -> Form {
        guard let session = context.adminSession else {
            throw APIError.forbidden("changing settings needs a login session: log in at /login")
        }
        let project = try await project(context, for: .changeSettings)
        let body = String(buffer: try await request.body.collect(upTo: 16 * 1024))
        var fields: [String: String] = [:]
        for (key, value) in AccountController.pairs(body) { fields[key] = value }
        guard CSRFToken.verify(fields[DashboardForms.csrfName], session: session) else {
            throw APIError.forbidden(
                "the form's CSRF token is missing or not this session's: reload the page and try again")
        }
        return Form(project: project, fields: fields, origin: try context.changeOrigin())
    }

    /// The page again with `message` at its top, answered 400 (nothing changed).
    func refused(_ context: AppRequestContext, _ form: Form, _ message: String) async throws -> Response {
        Response.dynamicPage(
            try await page(context, project: form.project, error: message), status: .badRequest)
    }

    /// Back to the page after a change (303: a reload does not post again).
    func done(_ project: Project) -> Response {
        Response(
            status: .seeOther,
            headers: [.location: "/\(project.slug.rawValue)/settings", .cacheControl: "no-store"])
    }

    @Sendable func invite(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        guard let login = PersonLogin(form.text("login")) else {
            return try await refused(
                context, form,
                "The login must be an e-mail address or user name of 1 to 254 bytes, without spaces, quotes, <, > or /."
            )
        }
        guard let role = ProjectRole(rawValue: form.text("role")) else {
            return try await refused(context, form, "The role must be viewer, member or admin.")
        }
        let invitation = try await people.invite(
            login: login, role: role, project: form.project.id, owner: false, by: form.origin)
        let base = publicURL.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 } ?? ""
        return Response.dynamicPage(
            try await page(
                context, project: form.project,
                invite: .init(
                    login: login.rawValue, link: base + "/invite/" + invitation.secret,
                    expiresAt: invitation.expiresAt)))
    }

    /// The member the path's `{id}` names: 400 for a bad id, 404 for a person without a role in the project.
    func member(_ context: AppRequestContext, _ form: Form) async throws -> PersonID {
        let raw = try context.parameters.require("id")
        guard let value = Int64(raw), value > 0 else { throw APIError.badRequest("must be a person id", field: "id") }
        let id = PersonID(value)
        guard try await people.person(id: id)?.role(in: form.project.id) != nil else {
            throw APIError.notFound("person \(value) has no role in \(form.project.slug.rawValue)")
        }
        return id
    }

    @Sendable func changeRole(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let id = try await member(context, form)
        guard let role = ProjectRole(rawValue: form.text("role")) else {
            return try await refused(context, form, "The role must be viewer, member or admin.")
        }
        _ = try await people.setRole(role, person: id, project: form.project.id, by: form.origin)
        return done(form.project)
    }

    /// Takes a person out of the project. Their next request is checked against the roles as the database holds them
    /// then, so they lose the project at once (their session goes on for other projects they belong to).
    @Sendable func remove(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let id = try await member(context, form)
        _ = try await people.setRole(nil, person: id, project: form.project.id, by: form.origin)
        return done(form.project)
    }

    @Sendable func saveAlerts(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        var settings = try await alertStore.settings(project: form.project.id)
        do {
            try Self.apply(form, to: &settings)
            try await alerts.apply(settings, project: form.project, by: form.origin)
        } catch let refusal as AlertSettingsRefusal {
            return try await refused(context, form, "\(Self.label(refusal.field)) \(refusal.message).")
        } catch let problem as WebhookTargetProblem {
            return try await refused(context, form, "Webhook URL: \(problem.message).")
        }
        return done(form.project)
    }

    /// The alert form's fields over `settings`: an empty webhook field keeps the webhook, `webhook_clear` removes it.
    ///
    /// - Throws: ``AlertSettingsRefusal`` for a field that is not a number.
    static func apply(_ form: Form, to settings: inout AlertSettings) throws {
        if form.checked("webhook_clear") {
            settings.webhookURL = nil
        } else if !form.text("webhook_url").isEmpty {
            settings.webhookURL = form.text("webhook_url")
        }
        settings.alertOnNewIssue = form.checked("alert_on_new_issue")
        settings.alertOnRegression = form.checked("alert_on_regression")
        settings.velocityPercent = try decimal(form, "velocity_percent")
        settings.velocityMinUsers = try whole(form, "velocity_min_users")
        settings.velocityMinReleaseUsers = try whole(form, "velocity_min_release_users")
        settings.velocityWindowMinutes = try whole(form, "velocity_window_minutes")
        settings.crashFreeTarget = form.text("crash_free_target").isEmpty ? nil : try decimal(form, "crash_free_target")
        settings.crashFreeMinSessions = try whole(form, "crash_free_min_sessions")
    }

    static func decimal(_ form: Form, _ name: String) throws -> Double {
        guard let value = Double(form.text(name)), value.isFinite else {
            throw AlertSettingsRefusal(field: name, message: "must be a number")
        }
        return value
    }

    static func whole(_ form: Form, _ name: String) throws -> Int {
        guard let value = Int(form.text(name)) else {
            throw AlertSettingsRefusal(field: name, message: "must be a whole number")
        }
        return value
    }

    /// How the page names a setting in a message.
    static func label(_ field: String) -> String {
        switch field {
        case "webhook_url": "Webhook URL:"
        case "velocity_percent": "Velocity share:"
        case "velocity_min_users": "Velocity users:"
        case "velocity_min_release_users": "Velocity release users:"
        case "velocity_window_minutes": "Velocity window:"
        case "crash_free_target": "Crash-free alert target:"
        case "crash_free_min_sessions": "Crash-free alert sessions:"
        case "users": "Crash-free users target:"
        case "sessions": "Crash-free sessions target:"
        default: field + ":"
        }
    }

    @Sendable func saveTargets(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        var values: [String: Double] = [:]
        for name in ["users", "sessions"] {
            guard let value = Double(form.text(name)), value.isFinite else {
                return try await refused(context, form, "\(Self.label(name)) must be a number.")
            }
            values[name] = value
        }
        do {
            _ = try await projects.configureTargets(slug: form.project.slug, by: form.origin) { targets in
                targets.users = values["users"] ?? targets.users
                targets.sessions = values["sessions"] ?? targets.sessions
            }
        } catch let error as ProjectError {
            return try await refused(context, form, "Crash-free targets: \(error.message).")
        }
        return done(form.project)
    }

    @Sendable func savePrivacy(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let (safe, sensitive) = (form.lines("safe_fields"), form.lines("sensitive_fields"))
        if let problem = PrivacySettings.fieldProblem(safe + sensitive) {
            return try await refused(context, form, "Privacy: \(problem).")
        }
        _ = try await projects.configurePrivacy(slug: form.project.slug, by: form.origin) { settings in
            settings.scrubbing = form.checked("scrubbing")
            settings.maskEmailsAndPhones = form.checked("mask_emails_and_phones")
            settings.keepIPAddresses = form.checked("keep_ip_addresses")
            settings.safeFields = safe
            settings.sensitiveFields = sensitive
        }
        return done(form.project)
    }

    @Sendable func saveInApp(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let (include, exclude) = (form.lines("include"), form.lines("exclude"))
        if let problem = InAppRules.problem(include) ?? InAppRules.problem(exclude) {
            return try await refused(context, form, "In-app rules: \(problem).")
        }
        _ = try await projects.configureInApp(slug: form.project.slug, by: form.origin) { rules in
            rules = InAppRules(include: include, exclude: exclude)
        }
        return done(form.project)
    }

    // MARK: Project keys

    @Sendable func rotateIngestKey(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let raw = form.text("keep_old_days")
        guard let days = raw.isEmpty ? KeyRotation.defaultKeepOldDays : Int(raw),
            (0...KeyRotation.maxKeepOldDays).contains(days)
        else {
            return try await refused(
                context, form, "Days the old key is kept: a whole number from 0 to \(KeyRotation.maxKeepOldDays).")
        }
        return try await rotate(.ingest, keepOldDays: days, request, context, form)
    }

    @Sendable func rotateUploadToken(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        // CI's uploads fail from this moment on: the box says so, and an unticked box changes nothing.
        guard form.checked("confirm") else {
            return try await refused(
                context, form, "Upload token: tick the box to confirm that the old token stops working at once.")
        }
        return try await rotate(.upload, keepOldDays: 0, request, context, form)
    }

    /// Replaces the secret and answers the page with it (200, not a redirect: the secret is shown on this answer
    /// only). The DSN is made from the server's public URL, else from the address this request reached.
    func rotate(
        _ kind: CredentialKind, keepOldDays: Int, _ request: Request, _ context: AppRequestContext, _ form: Form
    ) async throws -> Response {
        guard
            let rotation = try await projects.rotate(
                kind, slug: form.project.slug, keepOldDays: keepOldDays, by: form.origin)
        else { throw APIError.notFound("no project \"\(form.project.slug.rawValue)\"") }
        let base = publicURL ?? "http://" + (request.head.authority ?? "127.0.0.1")
        let dsn =
            kind == .ingest ? SentryDSN.string(base: base, key: rotation.secret, project: rotation.project.id) : nil
        return Response.dynamicPage(
            try await page(
                context, project: rotation.project,
                rotated: .init(
                    kind: kind, secret: rotation.secret, dsn: dsn, oldAcceptedUntil: rotation.oldAcceptedUntil)))
    }
}
