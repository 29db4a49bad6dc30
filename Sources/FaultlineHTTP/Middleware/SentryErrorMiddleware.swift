import Hummingbird
import Logging
import Pipeline

/// Answers errors of the Sentry-compatible routes (`/api/0/…`) as Sentry does, `{"detail": "…"}`, with the
/// status `APIError` chooses. Sits inside `ErrorMiddleware`, which still counts the request.
struct SentryErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = APIError.from(error)
            if apiError.status.code >= 500, apiError.status != .serviceUnavailable, apiError.status != .insufficientStorage {
                context.logger.error(
                    "request failed",
                    metadata: [Telemetry.LogKey.route: "\(request.uri.path)", Telemetry.LogKey.error: "\(String(reflecting: error))"])
            } else {
                context.logger.debug(
                    "request refused",
                    metadata: [Telemetry.LogKey.status: "\(apiError.status.code)", Telemetry.LogKey.error: "\(apiError.message)"])
            }
            return try apiError.sentryResponse(from: request, context: context)
        }
    }
}
