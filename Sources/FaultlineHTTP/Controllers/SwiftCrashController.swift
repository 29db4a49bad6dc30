import Crypto
import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import Pipeline

/// Accepts, unmodified, the JSON crash file the Swift runtime writes (`SWIFT_BACKTRACE=…format=json…`).
///
/// The file carries no app version, user or session: they come as query parameters (`app_version`,
/// `app_build`, `app_id`, `user_id`, `install_id`, `session_id`, `environment`, `event_id`) or as
/// `X-Faultline-App-Version`-style headers. Without an `event_id`, the id is derived from the file's
/// SHA-256, so a client that retries the same file is answered as a duplicate.
struct SwiftCrashController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let limits: IngestLimits

    var endpoints: RouteCollection<IngestContext> {
        RouteCollection(context: IngestContext.self).post("crashes/swift", use: post)
    }

    @Sendable func post(_ request: Request, context: IngestContext) async throws -> EditedResponse<ReportsController<Ingest>.Receipt> {
        let body = try await IngestBody.read(request, limit: limits.maxBatchBytes)
        let params = request.uri.queryParameters
        func value(_ name: String) -> String? {
            if let v = params[Substring(name)] { return String(v) }
            let header = "X-Faultline-" + name.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: "-")
            return HTTPField.Name(header).flatMap { request.headers[$0] }
        }
        let eventID = value("event_id") ?? Hex.encode(SHA256.hash(data: body.bytes).prefix(16))
        let metadata = SwiftCrashReports.Metadata(
            eventID: eventID, appID: value("app_id"), appVersion: value("app_version"), appBuild: value("app_build"),
            userID: value("user_id"), installID: value("install_id"), sessionID: value("session_id"),
            environment: value("environment"))
        // The crash file is scrubbed before it is wrapped and stored (debug metadata — images, registers,
        // addresses, captured memory — is left as it is); the id above still comes from the client's bytes.
        let crash = try JSONScrubbing.scrub(body.bytes, scrubber: Scrubber(settings: context.project.privacy)) ?? body.bytes
        let envelope = try SwiftCrashReports.envelope(crash, metadata: metadata)
        let report = try SwiftCrashReports.parse(envelope: envelope, limits: limits)
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(envelope), encoding: .deflate, inflatedSize: envelope.count, format: .swiftCrash)
        let receipt = try await ingest.accept([PreparedReport(report: report, range: 0..<envelope.count)], payload: payload, for: context.project)
        return EditedResponse(
            status: .accepted,
            response: .init(accepted: [report.eventID.rawValue], duplicates: receipt.duplicates.map(\.rawValue), rejected: []))
    }
}
