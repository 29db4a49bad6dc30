import HTTPTypes
import Hummingbird

/// Refuses a request whose declared `Content-Length` is over the route's limit before any body byte is read:
/// `413` with the API's JSON error at once, with `Connection: close` (the connection is then closed for
/// sending, so the client is not left sending a body nobody will read, nor the server waiting for it).
enum DeclaredLength {
    static func check(_ request: Request, limit: UInt64) throws {
        guard let value = request.headers[.contentLength] else { return }
        // NIO's parser has refused malformed and conflicting values already; anything not a number here
        // (say, past UInt64) is over every limit.
        let declared = UInt64(value.utf8.count <= 20 ? value : "")
        if let declared, declared <= limit { return }
        throw APIError(
            status: .contentTooLarge, code: "too_large",
            message:
                "the body (Content-Length \(value.prefix(24))) is larger than this route's limit of \(limit) bytes",
            headers: [.connection: "close"])
    }

    static func check(_ request: Request, limit: Int) throws {
        try check(request, limit: UInt64(max(0, limit)))
    }
}

/// ``DeclaredLength`` for every route of a group (routes that stream their body themselves).
struct DeclaredLengthMiddleware<Context: RequestContext>: RouterMiddleware {
    let limit: UInt64

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        try DeclaredLength.check(request, limit: limit)
        return try await next(request, context)
    }
}
