import FaultlineCore
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Guards the dashboard (every path outside the API, health, metrics, debuginfod and login routes) with the
/// admin token: a `faultline_admin` cookie set by the login form, HTTP basic auth with the token as password
/// (any user name), or `Authorization: Bearer <admin token>`.
///
/// A browser without credentials is sent to `/login`; other clients get 401 with a Basic challenge.
struct DashboardAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let projects: ProjectService

    static let cookieName = "faultline_admin"
    static let openPrefixes = ["/api/", "/healthz", "/metrics", "/buildid/", "/login", "/logout"]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if Self.openPrefixes.contains(where: { path.hasPrefix($0) }) { return try await next(request, context) }
        let header = request.headers[.authorization]
        for secret in [Self.cookie(request.headers[.cookie]), Self.basicPassword(header), BearerAuthMiddleware.bearer(header)] {
            if let secret, try await projects.isAdmin(secret) { return try await next(request, context) }
        }
        let accept = request.headers[.accept] ?? ""
        if header == nil, request.method == .get || request.method == .head, accept.contains("text/html") {
            let target = LoginController.safeNext(path)
            return Response(
                status: .seeOther,
                headers: [.location: "/login?next=\(LoginController.percentEncode(target))", .cacheControl: "no-store"])
        }
        var response = try APIError.unauthorized("the dashboard needs the admin token: log in at /login or use basic auth")
            .response(from: request, context: context)
        response.headers[.wwwAuthenticate] = "Basic realm=\"Faultline dashboard\", charset=\"UTF-8\""
        return response
    }

    /// The admin token from a `Cookie` header.
    static func cookie(_ header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == cookieName, !pair[1].isEmpty { return pair[1] }
        }
        return nil
    }

    /// The password of `Authorization: Basic base64(user:password)`.
    static func basicPassword(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "basic", let data = Data(base64Encoded: String(parts[1])) else { return nil }
        let text = String(decoding: data, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let password = String(text[text.index(after: colon)...])
        return password.isEmpty ? nil : password
    }
}

/// `GET /login` (the form), `POST /login` (checks the admin token, sets the cookie) and `POST /logout`.
struct LoginController {
    let projects: ProjectService
    let page: @Sendable (_ error: String?, _ next: String) -> String

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("login", use: form)
            .post("login", use: login)
            .post("logout", use: logout)
    }

    @Sendable func form(_ request: Request, context: AppRequestContext) async throws -> Response {
        html(page(nil, Self.safeNext(request.uri.queryParameters["next"].map(String.init))), status: .ok)
    }

    @Sendable func login(_ request: Request, context: AppRequestContext) async throws -> Response {
        let body = try await request.body.collect(upTo: 8 * 1024)
        let fields = Self.formFields(String(buffer: body))
        let next = Self.safeNext(fields["next"])
        guard let token = fields["token"]?.trimmingCharacters(in: .whitespaces), !token.isEmpty,
              try await projects.isAdmin(token) else {
            return html(page("That is not the admin token.", next), status: .unauthorized)
        }
        return Response(
            status: .seeOther,
            headers: [
                .location: next, .cacheControl: "no-store",
                .setCookie: "\(DashboardAuthMiddleware.cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict; Max-Age=2592000",
            ])
    }

    @Sendable func logout(_ request: Request, context: AppRequestContext) async throws -> Response {
        Response(
            status: .seeOther,
            headers: [
                .location: "/login", .cacheControl: "no-store",
                .setCookie: "\(DashboardAuthMiddleware.cookieName)=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0",
            ])
    }

    func html(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A local path to return to after logging in; anything else (other hosts, `//evil`) becomes `/`.
    static func safeNext(_ next: String?) -> String {
        guard let next, next.hasPrefix("/"), !next.hasPrefix("//"), !next.contains("\\"),
              next.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f }) else { return "/" }
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
        var bytes: [UInt8] = []
        var utf8 = Array(text.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "+") {
                bytes.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%") {
                guard utf8.count >= 2, let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
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
