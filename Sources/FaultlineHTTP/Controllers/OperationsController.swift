import Hummingbird
import Pipeline
import Prometheus

/// `/healthz` (the database answers a read; 200 with `"degraded":"storage_full"` while the disk is full, since
/// reads still work) and `/metrics` (Prometheus text).
struct OperationsController {
    let health: @Sendable () async throws -> Void
    let metrics: MetricsRegistry
    var storage: DiskGuard? = nil

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            .get("healthz", use: healthz)
            .get("metrics", use: emitMetrics)
    }

    @Sendable func healthz(_ request: Request, context: AppRequestContext) async throws -> Response {
        do {
            try await health()
            if storage?.isFull == true {
                return Self.json(.ok, #"{"status":"ok","degraded":"storage_full"}"#)
            }
            return Self.json(.ok, #"{"status":"ok"}"#)
        } catch {
            context.logger.error("health check failed", metadata: ["error": "\(error)"])
            return Self.json(.serviceUnavailable, #"{"status":"unavailable","error":"database"}"#)
        }
    }

    @Sendable func emitMetrics(_ request: Request, context: AppRequestContext) async throws -> Response {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 * 1024)
        metrics.registry.emit(into: &buffer)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: buffer)))
    }

    static func json(_ status: HTTPResponse.Status, _ text: String) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
