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
            var apiError = APIError.from(error)
            if let storage, storage.noteFailure(error) {
                apiError =
                    StoragePressureMiddleware<Context>.kind(request.uri.path) == .sentry
                    ? .sentryStorageFull(retryAfter: storage.retryAfterSeconds)
                    : .storageFull(retryAfter: storage.retryAfterSeconds)
            }
            if apiError.status.code >= 500, apiError.status != .serviceUnavailable,
                apiError.status != .insufficientStorage
            {
                context.logger.error(
                    "request failed",
                    metadata: [
                        Telemetry.LogKey.route: "\(request.uri.path)",
                        Telemetry.LogKey.error: "\(String(reflecting: error))",
                    ])
            } else {
                context.logger.debug(
                    "request refused",
                    metadata: [
                        Telemetry.LogKey.status: "\(apiError.status.code)",
                        Telemetry.LogKey.error: "\(apiError.message)",
                    ])
            }
            return try apiError.sentryResponse(from: request, context: context)
        }
    }
}
