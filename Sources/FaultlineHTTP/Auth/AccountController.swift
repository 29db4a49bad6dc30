import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

/// What the account page needs (issue #37): the account service, the projects (for the reader's roles), and the page
/// (rendered by the Dashboard module, wired by the composition root).
public struct AccountPages: Sendable {
    public var accounts: AccountService
    public var projects: ProjectService
    public var clock: any WallClock
    public var render: @Sendable (AccountOverview) -> String
    /// The code step of a login with a second factor: an error to show, and where to go after.
    public var codePage: @Sendable (_ error: String?, _ next: String) -> String
    /// People's alert mail choices (the page's "Alert mail" forms); nil: the page offers no mail choices.
    public var mail: AlertMailPreferences?

    public init(
        accounts: AccountService, projects: ProjectService, clock: any WallClock,
        render: @escaping @Sendable (AccountOverview) -> String,
        codePage: @escaping @Sendable (_ error: String?, _ next: String) -> String,
        mail: AlertMailPreferences? = nil
    ) {
        self.mail = mail
        self.codePage = codePage
        self.accounts = accounts
        self.projects = projects
        self.clock = clock
        self.render = render
    }
}

/// The signed-in reader's own page, behind the dashboard guard:
///
/// - `GET /account`: who they are, their projects and roles, their tokens, the forms;
/// - `POST /account/tokens` with `name`, `scope` (repeated) and `expires_days` (empty: never): makes a token and
///   answers the page with its secret, shown this once (200, never a redirect: the secret stays out of URLs and history);
/// - `POST /account/tokens/{id}/revoke`: revokes one of the reader's own tokens (another's is 404), 303 back;
/// - `POST /account/password` with `current`, `password`, `confirm`: changes the password; their other sessions end;
/// - `POST /account/alerts` with `project` (a slug), `kind` (repeated: the alert kinds mailed, none for none) and
///   `digest` (`weekly`, `daily` or `none`): the reader's own alert mail choice for one of their projects
///   (``AlertMailPreferences``, recorded in the audit trail as them); a project they are not in is 404.
///
/// Every form carries the session's CSRF token (``CSRFToken``): without it, or with another session's, 403 and nothing
/// changes. The admin token's session sees the page without the forms (it has no account of its own); a post from it
/// is 403.
struct AccountController {
    let pages: AccountPages

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("account", use: show)
            .post("account/tokens", use: createToken)
            .post("account/tokens/{id}/revoke", use: revokeToken)
            .post("account/password", use: changePassword)
            .post("account/alerts", use: setAlertMail)
            .post("account/totp/begin", use: beginSecondFactor)
            .post("account/totp/confirm", use: confirmSecondFactor)
            .post("account/totp/remove", use: removeSecondFactor)
    }

    /// The session of the request; a page or form of the account needs one.
    func session(_ context: AppRequestContext) throws -> AdminSession {
        guard let session = context.adminSession else {
            throw APIError.forbidden("the account page needs a login session: log in at /login")
        }
        return session
    }

    /// The page for the request's reader, with what was just done.
    func page(
        _ context: AppRequestContext, session: AdminSession, newToken: AccountOverview.NewToken? = nil,
        notice: String? = nil, error: String? = nil, recoveryCodes: [String] = []
    ) async throws -> String {
        var person: Person?
        if case .person(let signedIn) = context.requester { person = signedIn }
        var lines: [AccountOverview.ProjectLine] = []
        var tokens: [PersonalToken] = []
        var mail: [AccountOverview.MailLine] = []
        if let person {
            let chosen = try await pages.mail?.preferences(of: person.id)
            for project in try await pages.projects.all() {
                if person.owner {
                    lines.append(.init(slug: project.slug, role: "owner"))
                } else if let role = person.role(in: project.id) {
                    lines.append(.init(slug: project.slug, role: role.rawValue))
                } else {
                    continue
                }
                if let chosen {
                    let choice = chosen.first { $0.project == project.id }
                    mail.append(.init(slug: project.slug, kinds: choice?.kinds ?? [], digest: choice?.digest ?? .none))
                }
            }
            tokens = try await pages.accounts.tokens(of: person.id)
        }
        var factor = AccountOverview.SecondFactorState.off
        if let person, let stored = try await pages.accounts.secondFactor(of: person.id) {
            factor =
                stored.confirmed
                ? .on(recoveryCodesLeft: stored.recoveryCodesLeft)
                : .enrolling(
                    secret: stored.secret, uri: TOTP.uri(secret: stored.secret, account: person.login.rawValue))
        }
        var overview = AccountOverview(
            person: person, projects: lines, tokens: tokens, newToken: newToken, notice: notice, error: error,
            csrf: CSRFToken.token(for: session), now: pages.clock.now(), secondFactor: factor,
            recoveryCodes: recoveryCodes)
        overview.mail = mail
        return pages.render(overview)
    }

    @Sendable func show(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let session = context.adminSession else {
            // Every page links here, signed in or not (a page rendered once for everyone): the login form, then back.
            return Response(
                status: .seeOther, headers: [.location: "/login?next=%2Faccount", .cacheControl: "no-store"])
        }
        return Response.dynamicPage(try await page(context, session: session))
    }

    /// A checked form of a person's own session: its fields (repeated ones in order), the session and the person.
    struct Form {
        var fields: [String: String]
        var all: [(String, String)]
        var session: AdminSession
        var person: Person

        /// Who makes the change, for the audit trail: the signed-in person, from the request's address.
        func origin(_ context: AppRequestContext) -> AuditOrigin {
            AuditOrigin(actor: .person(person.id, name: person.displayName), address: context.clientAddress)
        }
    }

    func form(_ request: Request, context: AppRequestContext) async throws -> Form {
        let body = String(buffer: try await request.body.collect(upTo: 16 * 1024))
        let session = try session(context)
        let all = Self.pairs(body)
        var fields: [String: String] = [:]
        for (key, value) in all { fields[key] = value }
        guard CSRFToken.verify(fields[DashboardForms.csrfName], session: session) else {
            throw APIError.forbidden(
                "the form's CSRF token is missing or not this session's: reload the page and try again")
        }
        guard case .person(let person) = context.requester else {
            throw APIError.forbidden("the admin token has no account of its own: tokens and passwords belong to people")
        }
        return Form(fields: fields, all: all, session: session, person: person)
    }

    @Sendable func createToken(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        func refused(_ message: String) async throws -> Response {
            Response.dynamicPage(try await page(context, session: form.session, error: message), status: .badRequest)
        }
        let names = form.all.filter { $0.0 == "scope" }.map(\.1)
        let scopes: Set<TokenScope>
        switch TokenScope.parse(names) {
        case .success(let parsed): scopes = parsed
        case .failure(let error): return try await refused(error.message + ".")
        }
        let rawDays = form.fields["expires_days"]?.trimmingCharacters(in: .whitespaces) ?? ""
        var days: Int?
        if !rawDays.isEmpty {
            guard let parsed = Int(rawDays) else { return try await refused("The expiry must be a number of days.") }
            days = parsed
        }
        do {
            let created = try await pages.accounts.create(
                person: form.person.id, name: form.fields["name"] ?? "", scopes: scopes, expiresInDays: days,
                by: form.origin(context))
            context.logger.info(
                "personal token created",
                metadata: [Telemetry.LogKey.person: "\(form.person.id)", "token": "\(created.token.id)"])
            return Response.dynamicPage(
                try await page(
                    context, session: form.session,
                    newToken: AccountOverview.NewToken(name: created.token.name, secret: created.secret)))
        } catch let error as PersonalTokenError {
            return try await refused(error.message + ".")
        }
    }

    @Sendable func revokeToken(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let raw = try context.parameters.require("id")
        guard let value = Int64(raw), value > 0 else { throw APIError.badRequest("must be a token id", field: "id") }
        guard try await pages.accounts.revoke(PersonalTokenID(value), of: form.person.id, by: form.origin(context))
        else {
            throw APIError.notFound("you have no token \(value)")
        }
        return Response(status: .seeOther, headers: [.location: "/account", .cacheControl: "no-store"])
    }

    @Sendable func changePassword(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let password = form.fields["password"] ?? ""
        guard password == (form.fields["confirm"] ?? "") else {
            return Response.dynamicPage(
                try await page(context, session: form.session, error: "The two new passwords differ."),
                status: .badRequest)
        }
        do {
            try await pages.accounts.changePassword(
                person: form.person.id, current: form.fields["current"] ?? "", new: password,
                keeping: form.session.id)
        } catch let error as PeopleError {
            return Response.dynamicPage(
                try await page(context, session: form.session, error: error.message + "."),
                status: error.code == .invalidLogin ? .forbidden : .badRequest)
        }
        return Response.dynamicPage(
            try await page(context, session: form.session, notice: "Password changed. Your other sessions ended."))
    }

    /// The reader's own alert mail choice for one of their projects: which kinds come by e-mail, and the digest.
    @Sendable func setAlertMail(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        guard let mail = pages.mail else { throw APIError.notFound("this server offers no alert mail choices") }
        let raw = form.fields["project"] ?? ""
        // Another project is 404, as if it did not exist (``Access``): the form never says more than the pages do.
        guard let slug = ProjectSlug(raw), let project = try await pages.projects.project(slug: slug),
            form.person.owner || form.person.role(in: project.id) != nil
        else { throw APIError.notFound("no project \"\(raw.prefix(64))\"") }
        var kinds: Set<AlertKind> = []
        for name in form.all.filter({ $0.0 == "kind" }).map(\.1) {
            guard let kind = AlertKind(rawValue: name), AlertMailPreference.choosableKinds.contains(kind) else {
                return Response.dynamicPage(
                    try await page(
                        context, session: form.session, error: "\"\(name.prefix(64))\" is not an alert kind."),
                    status: .badRequest)
            }
            kinds.insert(kind)
        }
        guard let digest = DigestCadence(rawValue: form.fields["digest"] ?? DigestCadence.none.rawValue) else {
            return Response.dynamicPage(
                try await page(context, session: form.session, error: "The digest must be weekly, daily or off."),
                status: .badRequest)
        }
        do {
            try await mail.set(
                AlertMailPreference(person: form.person.id, project: project.id, kinds: kinds, digest: digest),
                for: form.person, by: form.origin(context))
        } catch let error as PeopleError {
            return try await refused(context, form, error)
        }
        return Response.dynamicPage(
            try await page(context, session: form.session, notice: "Alert mail for \(slug) saved."))
    }

    /// The page answering a form, saying `error` (a ``PeopleError``'s message) with its status: 403 for a wrong
    /// password or code, else 400.
    func refused(_ context: AppRequestContext, _ form: Form, _ error: PeopleError) async throws -> Response {
        Response.dynamicPage(
            try await page(context, session: form.session, error: error.message + "."),
            status: error.code == .invalidLogin ? .forbidden : .badRequest)
    }

    @Sendable func beginSecondFactor(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        do {
            _ = try await pages.accounts.beginSecondFactor(person: form.person.id)
        } catch let error as PeopleError {
            return try await refused(context, form, error)
        }
        return Response.dynamicPage(
            try await page(
                context, session: form.session,
                notice: "Add the key below to your authenticator app, then type its first code to turn this on."))
    }

    @Sendable func confirmSecondFactor(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        let codes: [String]
        do {
            codes = try await pages.accounts.confirmSecondFactor(
                person: form.person.id, code: form.fields["code"] ?? "")
        } catch let error as PeopleError {
            return try await refused(context, form, error)
        }
        return Response.dynamicPage(
            try await page(
                context, session: form.session,
                notice: "Two-step sign-in is on. Keep the recovery codes below somewhere safe: each works once.",
                recoveryCodes: codes))
    }

    @Sendable func removeSecondFactor(_ request: Request, context: AppRequestContext) async throws -> Response {
        let form = try await form(request, context: context)
        do {
            _ = try await pages.accounts.removeSecondFactor(
                person: form.person.id, password: form.fields["password"] ?? "")
        } catch let error as PeopleError {
            return try await refused(context, form, error)
        }
        return Response.dynamicPage(
            try await page(context, session: form.session, notice: "Two-step sign-in is off."))
    }

    /// The `application/x-www-form-urlencoded` pairs of `body`, repeated names kept in order.
    static func pairs(_ body: String) -> [(String, String)] {
        body.split(separator: "&").compactMap { pair in
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard let key = kv.first.flatMap(LoginController.percentDecode) else { return nil }
            return (key, kv.count > 1 ? LoginController.percentDecode(kv[1]) ?? "" : "")
        }
    }
}
