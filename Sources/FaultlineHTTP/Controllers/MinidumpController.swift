import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import NIOCore
import Pipeline

/// Sentry's minidump endpoint, `POST /api/{project_id}/minidump/?sentry_key=<key>`, the URL Crashpad
/// (`crashpad_handler --url=…`), Breakpad's uploaders, Electron's `crashReporter` and sentry-native's crashpad
/// backend are given.
///
/// The body is a `multipart/form-data` form with the dump in `upload_file_minidump` (Crashpad sends it gzip'd and
/// chunked, with no Content-Length), or the bare dump (`application/octet-stream`, `application/x-dmp`, or any
/// other type that is not a form). It is collected under the minidump body limit before and after inflating,
/// turned into a Sentry envelope (`SentryIngestDecoding.minidump`), and stored exactly as the envelope route stores
/// one: the same authentication, scrubbing, rate limits and exactly-once by event id.
///
/// The answer is Relay's: `200` with the event id as a hyphenated UUID in a `text/plain` body. Crashpad keeps that
/// text as the report's upload id and Breakpad's sender prints it; neither reads JSON. Errors are the API's JSON
/// (`detail` for Sentry clients), since uploaders only look at the status. Relay answers `200` even when the project
/// is rate limited, dropping the dump; Faultline answers `429` with `Retry-After` instead (and `429` while the disk is
/// full, as the envelope route does): the dump is not stored then, and Crashpad leaves a report whose upload failed
/// in its database, so telling the truth is what gives it a chance to arrive later, once (its event id is
/// Crashpad's report UUID).
struct MinidumpController<Ingest: ReportIngesting> {
    /// The envelope route's authentication and store.
    let sentry: SentryController<Ingest>

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            // The router matches with and without the trailing slash clients send.
            .post("api/{project_id}/minidump", use: post)
    }

    /// The event id as Relay spells it on this endpoint: a hyphenated UUID, as plain text.
    struct Answer: ResponseGenerator {
        var id: EventID

        var hyphenated: String {
            let hex = Array(id.rawValue.utf8)
            var out: [UInt8] = []
            for (index, byte) in hex.enumerated() {
                if [8, 12, 16, 20].contains(index) { out.append(UInt8(ascii: "-")) }
                out.append(byte)
            }
            return String(decoding: out, as: UTF8.self)
        }

        func response(from request: Request, context: some RequestContext) -> Response {
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: hyphenated)))
        }
    }

    @Sendable func post(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await sentry.authenticate(request, context: context)
        let limits = sentry.minidumpLimits
        // Crashpad sends no Content-Length (chunked): the collected body is bounded instead; a declared one is
        // refused before reading.
        try DeclaredLength.check(request, limit: limits.maxBodyBytes)
        let body = Array(try await request.body.collect(upTo: limits.maxBodyBytes).readableBytesView)
        let submission = try Self.submission(body, request: request, limits: limits)
        let receivedAt = sentry.clock.now()
        let contents = try SentryIngestDecoding.minidump(
            submission, limits: sentry.limits, dumpLimits: limits, receivedAt: receivedAt,
            seed: SentryController<Ingest>.seed(project: project, receivedAt: receivedAt, context: context),
            scrubber: project.scrubber)
        let sessionLimit = try await sentry.accept(contents, project: project)
        guard let id = contents.eventID else {
            throw FormatError(.invalidField, "the minidump's event has no id", field: "event_id")
        }
        var response = Answer(id: id).response(from: request, context: context)
        if let sessionLimit { response.headers[.sentryRateLimits] = sessionLimit }
        return response
    }

    /// The submission a body holds: a form when the Content-Type says `multipart/form-data`, else the bare dump.
    /// - Throws: `FormatError`: `.unsupportedEncoding` (415), `.tooLarge` (413), `.invalidField` naming
    ///   `upload_file_minidump` for a body or part that is not `MDMP` (400).
    static func submission(_ body: [UInt8], request: Request, limits: MinidumpSubmission.Limits) throws
        -> MinidumpSubmission
    {
        let contentType = request.headers[.contentType]
        let encoding = request.headers[.contentEncoding]
        let query = request.uri.query
        if contentType?.lowercased().hasPrefix("multipart/form-data") == true {
            return try MinidumpSubmission.multipart(
                body, contentType: contentType, contentEncoding: encoding, query: query, limits: limits)
        }
        return try MinidumpSubmission.raw(body, contentEncoding: encoding, query: query, limits: limits)
    }
}
