import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

/// `GET /login/sso` (sends the browser to the OpenID provider) and `GET /login/sso/callback` (where the provider sends
/// it back): single sign-on (``SingleSignOnService``). Outside the dashboard guard; the callback's credential is the
/// authorization code together with this browser's login cookie.
///
/// The login cookie is `HttpOnly`, scoped to `/login/sso`, and `SameSite=Lax`: the provider's redirect back is a
/// top-level GET from another site, which Lax cookies accompany and cross-site posts and embeds do not. It lives ten
/// minutes and is cleared when the callback is taken, refused or not.
struct SingleSignOnController {
    let service: SingleSignOnService
    let sessions: AdminSessionService
    let secureCookie: Bool
    let page: @Sendable (_ error: String?, _ next: String) -> String

    static let cookieName = "faultline_sso"
    /// The route that redirects to the provider: the only answer whose `Location` may name another host
    /// (``SecurityHeadersMiddleware``).
    static let startPath = "/login/sso"

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("login/sso", use: start)
            .get("login/sso/callback", use: callback)
    }

    func cookie(_ value: String, maxAge: Int) -> String {
        "\(Self.cookieName)=\(value); Path=/login/sso; HttpOnly; SameSite=Lax; Max-Age=\(maxAge)"
            + (secureCookie ? "; Secure" : "")
    }

    @Sendable func start(_ request: Request, context: AppRequestContext) async throws -> Response {
        let next = LoginController.safeNext(request.uri.queryParameters["next"].map(String.init))
        let started: SingleSignOnService.Start
        do {
            started = try await service.start(next: next)
        } catch let error as SingleSignOnError {
            context.logger.warning("single sign-on unavailable", metadata: [Telemetry.LogKey.error: "\(error)"])
            return Response.dynamicPage(
                page("Single sign-on is unavailable: \(error.message).", next), status: .badGateway)
        }
        var headers: HTTPFields = [.location: started.location, .cacheControl: "no-store"]
        headers.append(
            HTTPField(name: .setCookie, value: cookie(started.cookie, maxAge: Int(service.pendingLifetime))))
        return Response(status: .seeOther, headers: headers)
    }

    @Sendable func callback(_ request: Request, context: AppRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let callback = SingleSignOnService.Callback(
            code: query["code"].map(String.init), state: query["state"].map(String.init),
            error: query["error"].map(String.init))
        let pending = DashboardAuthMiddleware.cookie(request.headers[.cookie], named: Self.cookieName)
        let cleared = HTTPField(name: .setCookie, value: cookie("", maxAge: 0))
        do {
            let (outcome, next) = try await service.finish(callback, cookie: pending)
            guard case .loggedIn(let value, let session) = outcome else {
                throw SingleSignOnError(.noAccount, "the account was removed")
            }
            var headers: HTTPFields = [.location: LoginController.safeNext(next), .cacheControl: "no-store"]
            headers.append(
                HTTPField(
                    name: .setCookie,
                    value: LoginController.sessionCookie(value, maxAge: Int(sessions.lifetime), secure: secureCookie)))
            headers.append(cleared)
            context.logger.info(
                "single sign-on login",
                metadata: [
                    Telemetry.LogKey.session: "\(session.id)",
                    Telemetry.LogKey.person: "\(session.person.map(\.description) ?? "")",
                ])
            return Response(status: .seeOther, headers: headers)
        } catch let error as SingleSignOnError {
            context.logger.notice(
                "single sign-on refused", metadata: [Telemetry.LogKey.error: "\(error.code.rawValue): \(error.message)"]
            )
            let status: HTTPResponse.Status =
                switch error.code {
                case .discovery, .keySet, .tokenEndpoint, .notConfigured: .badGateway
                case .noAccount, .noEmail: .forbidden
                default: .unauthorized
                }
            var response = Response.dynamicPage(page("Single sign-on failed: \(error.message).", "/"), status: status)
            response.headers.append(cleared)
            return response
        }
    }
}
