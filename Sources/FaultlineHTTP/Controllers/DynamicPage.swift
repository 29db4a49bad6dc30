import Hummingbird

extension Response {
    /// A dashboard page made for this request (login form, live lists, search, an issue page with the session's
    /// CSRF token): HTML, never cached, since it shows live data or belongs to one session.
    static func dynamicPage(_ html: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: html)))
    }
}
