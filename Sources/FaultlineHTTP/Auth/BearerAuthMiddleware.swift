import FaultlineCore
import Hummingbird
import Pipeline

/// Resolves `Authorization: Bearer <secret>` to a `Principal` of one of the accepted kinds.
///
/// A request without the header passes through unauthenticated (the child context answers 401); a
/// request with a secret that matches nothing is refused here with 401 at once.
///
/// Where a token is accepted (upload tokens, the admin token: `accepts` holds more than ingest keys), a wrong one
/// counts toward the per-address limit of failed logins (``AdminSessionService/recordFailure(_:)``), and an address
/// past that limit is answered 429 before its token is looked at: guessing the admin token through the API or
/// `/buildid` is as slow as through `/login`. Ingest keys are public (they sit in every app's DSN): a wrong one is
/// not counted, so an app with a stale key cannot lock its office's CI out.
struct BearerAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let projects: ProjectService
    let accepts: [CredentialKind]
    /// The failed-attempt limit; nil for routes that take ingest keys only.
    let failures: AdminSessionService?
    /// Personal tokens and what these routes ask of them; nil: the routes take none.
    let personal: PersonalTokenCheck?

    init(
        projects: ProjectService, accepts: [CredentialKind], failures: AdminSessionService?,
        personal: PersonalTokenCheck? = nil
    ) {
        self.projects = projects
        self.accepts = accepts
        self.failures = accepts.allSatisfy { $0 == .ingest } ? nil : failures
        self.personal = personal
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard let secret = Self.bearer(request.headers[.authorization]) else {
            return try await next(request, context)
        }
        if let failures, let wait = failures.throttled(context.clientAddress) {
            throw APIError.tooManyAttempts(retryAfter: wait)
        }
        var context = context
        if let personal, PersonalTokenSecret.looksLikeToken(secret) {
            guard let grant = try await personal.grant(secret, request: request, projects: projects) else {
                failures?.recordFailure(context.clientAddress)
                throw APIError.unauthorized("the personal token is not valid: revoked, expired, or never made")
            }
            context.principal = .personal(grant)
            return try await next(request, context)
        }
        for kind in accepts {
            switch kind {
            case .admin:
                if try await projects.isAdmin(secret) { context.principal = .admin }
            case .ingest:
                if let project = try await projects.authenticate(secret, as: .ingest) {
                    context.principal = .ingest(project)
                }
            case .upload:
                if let project = try await projects.authenticate(secret, as: .upload) {
                    context.principal = .upload(project)
                }
            }
            if context.principal != nil { break }
        }
        guard context.principal != nil else {
            failures?.recordFailure(context.clientAddress)
            throw APIError.unauthorized("the key or token is not valid here")
        }
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
