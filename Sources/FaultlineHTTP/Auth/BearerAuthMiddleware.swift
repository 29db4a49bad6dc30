import FaultlineCore
import Hummingbird
import Pipeline

/// Resolves `Authorization: Bearer <secret>` to a `Principal` of one of the accepted kinds.
///
/// A request without the header passes through unauthenticated (the child context answers 401); a
/// request with a secret that matches nothing is refused here with 401 at once.
struct BearerAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let projects: ProjectService
    let accepts: [CredentialKind]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let secret = Self.bearer(request.headers[.authorization]) else {
            return try await next(request, context)
        }
        var context = context
        for kind in accepts {
            switch kind {
            case .admin:
                if try await projects.isAdmin(secret) { context.principal = .admin }
            case .ingest:
                if let project = try await projects.authenticate(secret, as: .ingest) { context.principal = .ingest(project) }
            case .upload:
                if let project = try await projects.authenticate(secret, as: .upload) { context.principal = .upload(project) }
            }
            if context.principal != nil { break }
        }
        guard context.principal != nil else { throw APIError.unauthorized("the key or token is not valid here") }
        return try await next(request, context)
    }

    static func bearer(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }
}
