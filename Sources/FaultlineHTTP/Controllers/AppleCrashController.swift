import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import Pipeline

/// Accepts, unmodified, a crash report Apple's own crash reporter wrote: an `.ips` file (iOS 15+, macOS 12+) or a
/// classic `.crash` text report (Xcode Organizer, TestFlight, older devices), one file per request.
///
/// The file names its app, device, install and incident itself; query parameters (or `X-Faultline-…` headers, as for
/// `crashes/swift`) may add what it cannot know (`user_id`, `session_id`, `environment`) or override what it says
/// (`app_version`; `release`, the whole release without the file's build; `app_build`, `app_id`, `install_id`,
/// `event_id`). The event id is the file's `Incident Identifier`, else the first 16 bytes of its SHA-256, so
/// importing the same file twice is answered as a duplicate. A file that does not read whole is refused with a 400
/// naming the field or line; nothing of it is kept.
struct AppleCrashController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let limits: IngestLimits

    /// Every parameter the endpoint reads, in the order error messages list them.
    static var parameters: [String] {
        [
            "app_version", "release", "app_build", "app_id", "user_id", "install_id", "session_id", "environment",
            "event_id",
        ]
    }

    var endpoints: RouteCollection<IngestContext> {
        RouteCollection(context: IngestContext.self).post("crashes/apple", use: post)
    }

    @Sendable func post(_ request: Request, context: IngestContext) async throws -> EditedResponse<
        ReportsController<Ingest>.Receipt
    > {
        let params = try IngestParameters(request, known: Self.parameters)
        let metadata = SwiftCrashReports.Metadata(
            eventID: params["event_id"] ?? "", appID: params["app_id"],
            appVersion: try params.value("app_version", alias: "release"),
            // `release` names the whole release (a Sentry release, `com.example.app@2.1+42`): the file's build is not
            // appended to it. `app_version` replaces the version only.
            appBuild: params["app_build"] ?? (params["release"] == nil ? nil : ""), userID: params["user_id"],
            installID: params["install_id"],
            sessionID: params["session_id"],
            environment: params["environment"])
        let body = try await IngestBody.read(request, limit: limits.maxBatchBytes, text: true)
        let (report, payload) = try AppleCrashReports.prepare(
            file: body.bytes, metadata: metadata, scrubber: context.project.scrubber, limits: limits,
            hasher: SHA256ContentHasher())
        let receipt = try await ingest.accept([report], payload: payload, for: context.project)
        return EditedResponse(
            status: .accepted,
            response: .init(
                accepted: [report.report.eventID.rawValue], duplicates: receipt.duplicates.map(\.rawValue), rejected: []
            ))
    }
}
