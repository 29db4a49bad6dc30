import FaultlineCore
import HTTPTypes
import Hummingbird
import Pipeline

/// What the HTTP edge needs for people (issue #37): the service, and the invite page (rendered by the Dashboard
/// module, wired by the composition root).
public struct PeoplePages: Sendable {
    public var people: PeopleService
    /// The invite page: the login it is for (nil: the link is not valid, was used or has expired), an error to show,
    /// and the form's CSRF value.
    public var invite: @Sendable (_ login: String?, _ error: String?, _ csrf: String) -> String

    public init(
        people: PeopleService,
        invite: @escaping @Sendable (_ login: String?, _ error: String?, _ csrf: String) -> String
    ) {
        self.people = people
        self.invite = invite
    }
}

/// `GET /invite/{secret}` (the set-your-password form) and `POST /invite/{secret}` (sets it, uses the link up,
/// signs the person in). Outside the dashboard guard: the secret in the path is the credential.
///
/// The form is guarded against cross-site posts by a double-submit value: the GET sets a random value in a
/// `SameSite=Strict` cookie scoped to `/invite` and in the form's hidden field; the POST must carry both, equal. A
/// page of another site can send neither (it cannot set our cookies), so it cannot make a browser accept an invite
/// with a password the other site chose.
struct InviteController {
    let pages: PeoplePages
    let sessions: AdminSessionService
    let secureCookie: Bool

    static let formCookie = "faultline_form"

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("invite/{secret}", use: form)
            .post("invite/{secret}", use: accept)
    }

    func cookie(_ value: String, maxAge: Int) -> String {
        "\(Self.formCookie)=\(value); Path=/invite; HttpOnly; SameSite=Strict; Max-Age=\(maxAge)"
            + (secureCookie ? "; Secure" : "")
    }

    @Sendable func form(_ request: Request, context: AppRequestContext) async throws -> Response {
        let secret = try context.parameters.require("secret")
        let person = try await pages.people.invitee(secret: secret)
        let csrf = pages.people.formSecret()
        var response = Response.dynamicPage(
            pages.invite(person?.login.rawValue, nil, csrf), status: person == nil ? .notFound : .ok)
        if person != nil { response.headers.append(HTTPField(name: .setCookie, value: cookie(csrf, maxAge: 3600))) }
        return response
    }

    @Sendable func accept(_ request: Request, context: AppRequestContext) async throws -> Response {
        let secret = try context.parameters.require("secret")
        let body = try await request.body.collect(upTo: 8 * 1024)
        let fields = LoginController.formFields(String(buffer: body))
        let presented = fields[DashboardForms.csrfName] ?? ""
        let cookie = DashboardAuthMiddleware.cookie(request.headers[.cookie], named: Self.formCookie) ?? ""
        guard AdminSessionService.looksLikeSessionSecret(cookie),
            ConstantTime.equal(Array(presented.utf8), Array(cookie.utf8))
        else {
            throw APIError.forbidden(
                "the form's CSRF value is missing or not this browser's: open the invite link again")
        }
        let password = fields["password"] ?? ""
        /// The form again, saying `message`: for the link's person while the link still works.
        func again(_ message: String, _ status: HTTPResponse.Status) async throws -> Response {
            let login = try await pages.people.invitee(secret: secret)?.login.rawValue
            return Response.dynamicPage(pages.invite(login, message, cookie), status: status)
        }
        guard password == (fields["confirm"] ?? "") else {
            return try await again("The two passwords differ.", .badRequest)
        }
        let outcome: AdminSessionService.LoginOutcome
        do {
            outcome = try await pages.people.acceptInvite(
                secret: secret, password: password, name: fields["name"] ?? "")
        } catch let error as PeopleError {
            return try await again(error.message + ".", error.code == .invalidInvite ? .notFound : .badRequest)
        }
        guard case .loggedIn(let value, let session) = outcome else {
            return try await again("This invite link is not valid, was used, or has expired.", .notFound)
        }
        var headers: HTTPFields = [.location: "/", .cacheControl: "no-store"]
        headers.append(
            HTTPField(
                name: .setCookie,
                value: LoginController.sessionCookie(value, maxAge: Int(sessions.lifetime), secure: secureCookie)))
        headers.append(HTTPField(name: .setCookie, value: self.cookie("", maxAge: 0)))
        context.logger.info(
            "invite accepted",
            metadata: [
                Telemetry.LogKey.session: "\(session.id)",
                Telemetry.LogKey.person: "\(session.person.map(\.description) ?? "")",
            ])
        return Response(status: .seeOther, headers: headers)
    }

}
