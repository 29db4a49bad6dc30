import Hummingbird
import Pipeline

/// While the data folder's disk is full (`DiskGuard`), refuses write routes before their bodies are read:
/// native, Swift crash and session ingest and debug-file uploads answer 507, the Sentry ingest routes 429 with
/// `Retry-After` and `X-Sentry-Rate-Limits`. Reads, the dashboard, `/healthz` and `/metrics` pass.
struct StoragePressureMiddleware<Context: RequestContext>: RouterMiddleware {
    let storage: DiskGuard

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        guard request.method == .post || request.method == .put, let kind = Self.kind(request.uri.path), storage.isFull
        else {
            return try await next(request, context)
        }
        switch kind {
        case .sentry: throw APIError.sentryStorageFull(retryAfter: storage.retryAfterSeconds)
        case .write: throw APIError.storageFull(retryAfter: storage.retryAfterSeconds)
        }
    }

    enum Kind { case sentry, write }

    /// Which write route `path` is, if any.
    static func kind(_ path: String) -> Kind? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0] == "api" else { return nil }
        if parts[1] == "v1" {
            switch parts[2] {
            case "reports", "sessions", "crashes", "debug-files":
                // `POST debug-files/missing` only reads.
                return parts.last == "missing" ? nil : .write
            default: return nil
            }
        }
        if parts[1] == "0" {
            return parts.contains("chunk-upload") || parts.contains("assemble") ? .write : nil
        }
        if parts.count == 3, parts[2] == "envelope" || parts[2] == "store" { return .sentry }
        return nil
    }
}
