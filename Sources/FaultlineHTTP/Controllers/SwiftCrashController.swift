import Crypto
import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import Pipeline

/// Accepts, unmodified, the JSON crash file the Swift runtime writes (`SWIFT_BACKTRACE=…format=json…`).
///
/// The file carries no app version, user or session: they come as query parameters (`app_version` or its alias
/// `release`, `app_build`, `app_id`, `user_id`, `install_id`, `session_id`, `environment`, `event_id`, `message`)
/// or as `X-Faultline-App-Version`-style headers; a name the endpoint does not know is 400, not ignored
/// (`IngestParameters`). Without an `event_id`, the id is derived from the file's SHA-256, so a client that
/// retries the same file is answered as a duplicate.
struct SwiftCrashController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let limits: IngestLimits

    /// Every parameter the endpoint reads, in the order error messages list them.
    static var parameters: [String] {
        [
            "app_version", "release", "app_build", "app_id", "user_id", "install_id", "session_id", "environment",
            "event_id", "message",
        ]
    }

    var endpoints: RouteCollection<IngestContext> {
        RouteCollection(context: IngestContext.self).post("crashes/swift", use: post)
    }

    @Sendable func post(_ request: Request, context: IngestContext) async throws -> EditedResponse<
        ReportsController<Ingest>.Receipt
    > {
        let params = try IngestParameters(request, known: Self.parameters)
        let appVersion = try params.value("app_version", alias: "release")
        let body = try await IngestBody.read(request, limit: limits.maxBatchBytes)
        let eventID = params["event_id"] ?? Hex.encode(SHA256.hash(data: body.bytes).prefix(16))
        let scrubber = context.project.scrubber
        // `message` is free text (it may quote a path under a home folder, a token…): scrubbed like the file.
        let metadata = SwiftCrashReports.Metadata(
            eventID: eventID, appID: params["app_id"], appVersion: appVersion, appBuild: params["app_build"],
            userID: params["user_id"], installID: params["install_id"], sessionID: params["session_id"],
            environment: params["environment"], message: params["message"].flatMap { $0.isEmpty ? nil : $0 }
        ).scrubbed(by: scrubber)
        // The crash file is scrubbed before it is wrapped and stored (debug metadata — images, registers,
        // addresses, captured memory — is left as it is); the id above still comes from the client's bytes.
        let crash = try JSONScrubbing.scrub(body.bytes, scrubber: scrubber) ?? body.bytes
        let envelope = try SwiftCrashReports.envelope(crash, metadata: metadata)
        let report = try SwiftCrashReports.parse(envelope: envelope, limits: limits)
        let payload = StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(envelope), encoding: .deflate, inflatedSize: envelope.count,
            format: .swiftCrash)
        let receipt = try await ingest.accept(
            [PreparedReport(report: report, range: 0..<envelope.count)], payload: payload, for: context.project)
        return EditedResponse(
            status: .accepted,
            response: .init(
                accepted: [report.eventID.rawValue], duplicates: receipt.duplicates.map(\.rawValue), rejected: []))
    }
}
