import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

extension LoginController {
    /// `POST /login` with `code`: the second step of a password login for a person with a TOTP factor. The login
    /// waiting for it is named by the ticket cookie the first step set (``ticketCookie``; `SameSite=Strict`, so
    /// another site's form cannot post it). A right code starts the session and clears the ticket; a wrong one shows
    /// the code form again (401) and counts as a failed login; past the limits, 429.
    func secondStep(
        _ request: Request, _ context: AppRequestContext, code: String, next: String, people: PeopleService,
        pages: AccountPages
    ) async throws -> Response {
        let ticket = DashboardAuthMiddleware.cookie(request.headers[.cookie], named: Self.ticketCookie) ?? ""
        let outcome = try await people.loginSecondStep(
            ticket: ticket, code: code, client: context.clientAddress, secondFactor: pages.accounts)
        switch outcome {
        case .loggedIn(let cookie, let session):
            var headers: HTTPFields = [.location: next, .cacheControl: "no-store"]
            headers.append(HTTPField(name: .setCookie, value: sessionCookie(cookie, maxAge: Int(sessions.lifetime))))
            headers.append(HTTPField(name: .setCookie, value: ticketCookie("", maxAge: 0)))
            context.logger.info(
                "dashboard login",
                metadata: [
                    Telemetry.LogKey.session: "\(session.id)",
                    Telemetry.LogKey.person: "\(session.person.map(\.description) ?? "")",
                ])
            return Response(status: .seeOther, headers: headers)
        case .throttled(let wait):
            var response = Response.dynamicPage(
                pages.codePage("Too many failed attempts. Try again in \(wait) seconds.", next),
                status: .tooManyRequests)
            response.headers[.retryAfter] = String(wait)
            return response
        case .refused, .secondFactorNeeded:
            guard try await pages.accounts.waitingLogin(ticket) != nil else {
                var response = Response.dynamicPage(
                    page("The sign-in waited too long or took too many wrong codes. Sign in again.", next),
                    status: .unauthorized)
                response.headers.append(HTTPField(name: .setCookie, value: ticketCookie("", maxAge: 0)))
                return response
            }
            return Response.dynamicPage(
                pages.codePage("That code does not match. Try the next code from your app.", next),
                status: .unauthorized)
        }
    }

    /// The ticket cookie: `HttpOnly`, `SameSite=Strict`, only sent to `/login`.
    func ticketCookie(_ value: String, maxAge: Int) -> String {
        "\(Self.ticketCookie)=\(value); Path=/login; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)"
            + (secureCookie ? "; Secure" : "")
    }
}
