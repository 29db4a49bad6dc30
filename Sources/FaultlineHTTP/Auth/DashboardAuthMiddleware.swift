import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Guards the dashboard (every path outside the routes that authenticate by themselves, see ``DashboardPaths``)
/// with the admin token: a session cookie set by the login form (``AdminSessionService``), HTTP basic auth with the
/// token as password (any user name), or `Authorization: Bearer <admin token>`.
///
/// A browser without credentials is sent to `/login`; other clients get 401 with a Basic challenge. A wrong token
/// in a Basic or Bearer header counts toward the same per-address limit as failed logins (429 past it).
struct DashboardAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let projects: ProjectService
    let sessions: AdminSessionService
    /// People's sessions and roles; nil: only the admin token signs in.
    let people: PeopleService?

    /// The session cookie: a random secret naming a server-side session (never the admin token).
    static let cookieName = "faultline_session"
    /// The cookie of earlier versions, which held the admin token itself: cleared at login and logout.
    static let legacyCookieName = "faultline_admin"

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let path = request.uri.path
        if DashboardPaths.isOpenRoute(path) || DashboardPaths.publicFiles.contains(path) {
            return try await next(request, context)
        }
        if let cookie = Self.cookie(request.headers[.cookie]), let session = try await sessions.session(cookie: cookie),
            let requester = try await requester(of: session)
        {
            var context = context
            context.adminSession = session
            context.requester = requester
            try await checkProjectAccess(path, requester: requester)
            return try await next(request, context)
        }
        let header = request.headers[.authorization]
        let presented = [Self.basicPassword(header), BearerAuthMiddleware.bearer(header)].compactMap { $0 }
        if !presented.isEmpty {
            if let wait = sessions.throttled(context.clientAddress) { throw APIError.tooManyAttempts(retryAfter: wait) }
            for secret in presented {
                if try await projects.isAdmin(secret) {
                    var context = context
                    context.requester = .adminToken
                    return try await next(request, context)
                }
            }
            sessions.recordFailure(context.clientAddress)
        }
        let accept = request.headers[.accept] ?? ""
        if header == nil, request.method == .get || request.method == .head, accept.contains("text/html") {
            // Back to the page asked for, query included (a filtered list); only ever a path on this server.
            let target = LoginController.safeNext(request.uri.query.map { path + "?" + $0 } ?? path)
            return Response(
                status: .seeOther,
                headers: [.location: "/login?next=\(LoginController.percentEncode(target))", .cacheControl: "no-store"])
        }
        var response = try APIError.unauthorized(
            "the dashboard needs the admin token: log in at /login or use basic auth"
        )
        .response(from: request, context: context)
        response.headers[.wwwAuthenticate] = "Basic realm=\"Faultline dashboard\", charset=\"UTF-8\""
        return response
    }

    /// Who a live session acts for: the admin token, or its person as the database holds them now (nil when the
    /// person is gone: removing a person deletes their sessions, this covers a session read in the same instant).
    func requester(of session: AdminSession) async throws -> Requester? {
        guard session.person != nil else { return .adminToken }
        guard let people, let person = try await people.person(of: session) else { return nil }
        return .person(person)
    }

    /// 404 for a page of a project the requester has no role in (``Access``): a person of one project cannot read
    /// another's pages, nor learn from a 403 that it exists. Paths that name no project pass (the site's front page,
    /// the stylesheet); an unknown project is the file middleware's 404.
    func checkProjectAccess(_ path: String, requester: Requester) async throws {
        guard case .person(let person) = requester, !person.owner,
            let decoded = DashboardPaths.percentDecoded(path),
            let slug = ProjectSlug(String(DashboardPaths.firstSegment(decoded))),
            let project = try await projects.project(slug: slug)
        else { return }
        if !Access.canRead(requester, project: project.id) {
            throw APIError.notFound("no project \"\(slug)\"")
        }
    }

    /// The session cookie's value from a `Cookie` header.
    static func cookie(_ header: String?) -> String? { cookie(header, named: cookieName) }

    /// The value of the cookie `name` from a `Cookie` header.
    static func cookie(_ header: String?, named name: String) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == name, !pair[1].isEmpty { return pair[1] }
        }
        return nil
    }

    /// The password of `Authorization: Basic base64(user:password)`.
    static func basicPassword(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", let data = Data(base64Encoded: String(parts[1]))
        else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let password = String(text[text.index(after: colon)...])
        return password.isEmpty ? nil : password
    }
}

/// `GET /login` (the form), `POST /login` (checks a person's login and password, or the admin token; starts a
/// session) and `POST /logout` (ends it, when the form carries the session's CSRF token; without it, `GET /logout`'s
/// page asks once more with a form that has it).
struct LoginController {
    let sessions: AdminSessionService
    /// Password logins; nil: only the admin token signs in.
    let people: PeopleService?
    /// Mark the cookie `Secure` (the server is reached over https, per `--public-url`).
    let secureCookie: Bool
    let page: @Sendable (_ error: String?, _ next: String) -> String
    /// The second factor's code step (its page and the account service); nil: logins never ask for a code.
    var secondFactor: AccountPages? = nil

    /// The cookie naming a login that waits for its code: `SameSite=Strict`, scoped to `/login`, for the ticket's life.
    static let ticketCookie = "faultline_login_ticket"

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("login", use: form)
            .post("login", use: login)
            .get("logout", use: confirmLogout)
            .post("logout", use: logout)
    }

    @Sendable func form(_ request: Request, context: AppRequestContext) async throws -> Response {
        Response.dynamicPage(
            page(nil, Self.safeNext(request.uri.queryParameters["next"].map(String.init))), status: .ok)
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 8 * 1024)
        let fields = Self.formFields(String(buffer: body))
        let next = Self.safeNext(fields["next"])
        let token = fields["token"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let login = fields["login"]?.trimmingCharacters(in: .whitespaces) ?? ""
        if let people, let secondFactor, let code = fields["code"] {
            return try await secondStep(request, context, code: code, next: next, people: people, pages: secondFactor)
        }
        let byPassword = token.isEmpty && !login.isEmpty && people != nil
        let outcome =
            if let people, byPassword {
                try await people.login(
                    login: login, password: fields["password"] ?? "", client: context.clientAddress,
                    secondFactor: secondFactor?.accounts)
            } else {
                try await sessions.login(token: token, client: context.clientAddress)
            }
        switch outcome {
        case .throttled(let wait):
            var response = Response.dynamicPage(
                page("Too many failed attempts. Try again in \(wait) seconds.", next), status: .tooManyRequests)
            response.headers[.retryAfter] = String(wait)
            return response
        case .refused:
            let message = byPassword ? "That login and password do not match." : "That is not the admin token."
            return Response.dynamicPage(page(message, next), status: .unauthorized)
        case .secondFactorNeeded(let ticket):
            var response = Response.dynamicPage(secondFactor?.codePage(nil, next) ?? page(nil, next), status: .ok)
            response.headers.append(HTTPField(name: .setCookie, value: ticketCookie(ticket, maxAge: 300)))
            return response
        case .loggedIn(let cookie, let session):
            var headers: HTTPFields = [.location: next, .cacheControl: "no-store"]
            headers.append(HTTPField(name: .setCookie, value: sessionCookie(cookie, maxAge: Int(sessions.lifetime))))
            headers.append(HTTPField(name: .setCookie, value: clearing(DashboardAuthMiddleware.legacyCookieName)))
            context.logger.info(
                "dashboard login",
                metadata: [
                    Telemetry.LogKey.session: "\(session.id)",
                    Telemetry.LogKey.person: "\(session.person.map(\.description) ?? "admin token")",
                ])
            return Response(status: .seeOther, headers: headers)
        }
    }

    /// `GET /logout`: for a live session, a page with the sign-out button carrying its CSRF token; else the login form.
    @Sendable func confirmLogout(_ request: Request, context: AppRequestContext) async throws -> Response {
        guard let cookie = DashboardAuthMiddleware.cookie(request.headers[.cookie]),
            let session = try await sessions.session(cookie: cookie)
        else { return Response(status: .seeOther, headers: [.location: "/login", .cacheControl: "no-store"]) }
        return Response.dynamicPage(Self.signOutPage(csrf: CSRFToken.token(for: session)))
    }

    /// Ends the session when the form carries its CSRF token. The sign-out button of a page rendered once for every
    /// reader cannot carry one (and neither can another site's forged post): it gets the page that asks once more,
    /// and nothing ends.
    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        if let cookie = DashboardAuthMiddleware.cookie(request.headers[.cookie]),
            let session = try await sessions.session(cookie: cookie)
        {
            let fields = Self.formFields(String(buffer: try await request.body.collect(upTo: 8 * 1024)))
            guard CSRFToken.verify(fields[DashboardForms.csrfName], session: session) else {
                return Response.dynamicPage(Self.signOutPage(csrf: CSRFToken.token(for: session)))
            }
            try await sessions.logout(cookie: cookie)
        }
        var headers: HTTPFields = [.location: "/login", .cacheControl: "no-store"]
        headers.append(HTTPField(name: .setCookie, value: clearing(DashboardAuthMiddleware.cookieName)))
        headers.append(HTTPField(name: .setCookie, value: clearing(DashboardAuthMiddleware.legacyCookieName)))
        return Response(status: .seeOther, headers: headers)
    }

    /// The page that asks to sign out, its form carrying the session's CSRF token (hex: nothing to escape).
    static func signOutPage(csrf: String) -> String {
        """
        <!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign out · Faultline</title>
        <link rel="stylesheet" href="/style.css"></head><body><main id="main"><h1>Sign out</h1>
        <p>Sign out of Faultline in this browser?</p>
        <form class="login" method="post" action="/logout"><input type="hidden" name="\(DashboardForms.csrfName)" value="\(csrf)">
        <button type="submit">Sign out</button></form>
        <p><a href="/">Back to the dashboard</a></p></main></body></html>
        """
    }

    /// `HttpOnly` (no script reads it), `SameSite=Lax` (not sent on cross-site posts), `Path=/`, `Secure` over https.
    func sessionCookie(_ value: String, maxAge: Int) -> String {
        Self.sessionCookie(value, maxAge: maxAge, secure: secureCookie)
    }

    static func sessionCookie(_ value: String, maxAge: Int, secure: Bool) -> String {
        "\(DashboardAuthMiddleware.cookieName)=\(value); Path=/; HttpOnly; SameSite=Lax; Max-Age=\(maxAge)"
            + (secure ? "; Secure" : "")
    }

    func clearing(_ name: String) -> String {
        "\(name)=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0" + (secureCookie ? "; Secure" : "")
    }

    /// A local path to return to after logging in; anything else (other hosts, `//evil`, `/\evil`, schemes) becomes `/`.
    static func safeNext(_ next: String?) -> String {
        guard let next, DashboardPaths.isLocalRedirect(next) else { return "/" }
        return next
    }

    /// `application/x-www-form-urlencoded` fields.
    static func formFields(_ body: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard let key = kv.first.flatMap(percentDecode) else { continue }
            out[key] = kv.count > 1 ? percentDecode(kv[1]) ?? "" : ""
        }
        return out
    }

    static func percentDecode(_ text: String) -> String? {
        DashboardPaths.percentDecoded(text.replacingOccurrences(of: "+", with: " "))
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            let c = Character(Unicode.Scalar(byte))
            if c.isASCII && (c.isLetter || c.isNumber || "-._~/".contains(c)) {
                out.append(c)
            } else {
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }
}
