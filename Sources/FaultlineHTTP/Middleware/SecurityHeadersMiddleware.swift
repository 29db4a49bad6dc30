import HTTPTypes
import Hummingbird

/// Security headers on every answer, and a last check on redirects. Sits outermost, so error answers get them too.
///
/// - `Content-Security-Policy`: the dashboard uses no JavaScript, no inline styles and no frames (charts are inline
///   SVG with presentation attributes, which CSP does not govern), so everything but same-origin stylesheets,
///   images and form posts is refused. An injected `<script>` or `<style>` would not run even if escaping failed.
/// - `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin`, `X-Frame-Options: DENY` (with the policy's
///   `frame-ancestors 'none'`): no sniffing uploads into HTML, no dashboard URLs leaking to other sites, no framing.
/// - `Cache-Control: private, no-cache` on dashboard answers that do not set their own (the pages need the admin
///   token: shared caches must not keep them, browsers must revalidate); API answers keep what their routes say.
/// - A `Location` that starts with `//` or `/\` or names a scheme is replaced by `/`: the server only redirects
///   within itself, and a protocol-relative location would send the browser to another host. The one exception is
///   `/login/sso`, which sends the browser to the configured OpenID provider's authorization endpoint (from its checked
///   discovery document, ``SingleSignOnController``).
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var contentSecurityPolicy: String {
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var response = try await next(request, context)
        let headers = response.headers
        var fields = response.headers
        if headers[.contentSecurityPolicy] == nil { fields[.contentSecurityPolicy] = Self.contentSecurityPolicy }
        fields[.xContentTypeOptions] = "nosniff"
        fields[.referrerPolicy] = "same-origin"
        fields[.xFrameOptions] = "DENY"
        if headers[.cacheControl] == nil, !DashboardPaths.isOpenRoute(request.uri.path) || request.uri.path == "/login"
        {
            fields[.cacheControl] = "private, no-cache"
        }
        if let location = headers[.location], !DashboardPaths.isLocalRedirect(location),
            request.uri.path != SingleSignOnController.startPath
        {
            fields[.location] = "/"
        }
        response.headers = fields
        return response
    }
}

extension HTTPField.Name {
    static var referrerPolicy: Self { Self("Referrer-Policy")! }
    static var xFrameOptions: Self { Self("X-Frame-Options")! }
}
