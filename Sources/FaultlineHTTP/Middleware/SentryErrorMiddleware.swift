import Hummingbird
import Logging
import Pipeline

/// Answers errors of the Sentry-compatible routes (`/api/0/…`) as Sentry does, `{"detail": "…"}`, with the
/// status `APIError` chooses. Sits inside `ErrorMiddleware`, which still counts the request.
struct SentryErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// The storage-pressure state: a disk-full error enters it and is answered as the storage middleware does
    /// (429 + `X-Sentry-Rate-Limits` on the event routes, 507 on sentry-cli's upload routes). Nil: no such state.
    var storage: DiskGuard? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        do {
            return try await next(request, context)
        } catch {
            let apiError = ErrorMiddleware<Context>.apiError(
                for: error, request: request, context: context, storage: storage)
            return try apiError.sentryResponse(from: request, context: context)
        }
    }
}
