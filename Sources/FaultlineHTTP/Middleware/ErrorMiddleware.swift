import Hummingbird
import Logging
import Pipeline

/// Turns every thrown error into a JSON answer (via `APIError.from`) and counts requests by route and
/// status. Sits outermost, so nothing leaves the router as Hummingbird's empty 500.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let telemetry: Telemetry
    /// The storage-pressure state: a disk-full error from any write (SQLite, a debug file, a chunk, a page) enters
    /// it and is answered 507 with `Retry-After`, never a 500 and never a log line per request. Nil: no such state.
    var storage: DiskGuard? = nil

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        let started = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            let apiError = Self.apiError(for: error, request: request, context: context, storage: storage)
            response = try apiError.response(from: request, context: context)
            if request.method == .post, let reason = Self.rejectReason(apiError.status),
                context.endpointPath == "/api/v1/reports"
            {
                // Counted here only when the whole request was refused before ingest could count its
                // reports (ingest itself counts rate_limited, disk_full and storage_failed).
                telemetry.rejected(reason)
            }
        }
        let route = context.endpointPath ?? "unmatched"
        telemetry.count(Telemetry.Name.httpRequests, [("route", route), ("status", String(response.status.code))])
        if request.method == .post, route.hasPrefix("/api/") {
            telemetry.recordDuration(
                Telemetry.Name.ingestDuration, nanoseconds: (ContinuousClock.now - started).nanoseconds,
                [("route", route)])
        }
        return response
    }

    /// The answer to `error` (`APIError.from`; the storage-full answer when the error entered the storage-pressure
    /// state), logged: as an error when the server failed, at debug level when it refused the request.
    static func apiError(for error: any Error, request: Request, context: Context, storage: DiskGuard?) -> APIError {
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
        return apiError
    }

    static func rejectReason(_ status: HTTPResponse.Status) -> Telemetry.RejectReason? {
        switch status {
        case .badRequest: .invalid
        case .unauthorized: .unauthorized
        case .contentTooLarge: .tooLarge
        case .unsupportedMediaType: .unsupportedEncoding
        default: nil
        }
    }
}
