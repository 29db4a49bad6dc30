import FaultlineCore
import Formats
import HTTPTypes
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Sentry's ingest protocol, so unmodified Sentry SDKs work with a Faultline DSN
/// (`http://<ingest key>@host:port/<project id>`): `POST /api/{project_id}/envelope/` and the legacy
/// `POST /api/{project_id}/store/`. Answers are what SDKs understand: 200 `{"id": …}`, 429 with
/// `Retry-After` and `X-Sentry-Rate-Limits` naming the limited categories, 413, and 400/401 with `detail`.
struct SentryController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let projects: ProjectService
    let limits: IngestLimits
    let telemetry: Telemetry
    let clock: any WallClock
    /// Largest envelope body (compressed and inflated).
    let maxEnvelopeBytes: Int
    /// Largest attachment kept; bigger ones are dropped and counted as discarded.
    let maxAttachmentBytes: Int
    /// Sizes of minidumps, wherever they arrive (the minidump endpoint, an envelope's `event.minidump` item).
    var minidumpLimits = MinidumpSubmission.Limits()
    /// Refuses a minidump that would take its project past its quota (its debug files and stored dumps together):
    /// `DebugFileService.checkMinidumpQuota`. Nil: no quota.
    var minidumpQuota: (@Sendable (Project, Int) async throws -> Void)? = nil

    var endpoints: RouteCollection<AppRequestContext> {
        RouteCollection(context: AppRequestContext.self)
            // The router matches with and without the trailing slash SDKs send.
            .post("api/{project_id}/envelope", use: envelope)
            .post("api/{project_id}/store", use: store)
    }

    struct Answer: ResponseGenerator {
        var id: String?
        func response(from request: Request, context: some RequestContext) -> Response {
            var json = JSONAnswer()
            json.object { $0.field("id", id) }  // `{"id": null}` for envelopes without an event, as Relay answers
            return json.response()
        }
    }

    @Sendable func envelope(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await authenticate(request, context: context)
        let (bytes, gzip) = try await body(request, limit: maxEnvelopeBytes)
        let receivedAt = clock.now()
        // Unique per request, so two flushes of equal session aggregates are two sets of sessions.
        let seed = Self.seed(project: project, receivedAt: receivedAt, context: context)
        var contents = try SentryIngestDecoding.envelope(
            bytes, gzip: gzip, limits: limits, maxAttachmentBytes: maxAttachmentBytes, receivedAt: receivedAt,
            seed: seed, scrubber: project.scrubber)
        // sentry-native's breakpad and native backends send the dump as an `event.minidump` item: it goes the
        // minidump endpoint's way (walked by the worker, kept up to the dump limit). Other envelopes pay one scan.
        if let minidump = try SentryIngestDecoding.minidumpEnvelope(
            bytes, decoded: contents, limits: limits, dumpLimits: minidumpLimits, receivedAt: receivedAt, seed: seed,
            scrubber: project.scrubber)
        {
            contents = minidump
        }
        for type in contents.contents.skipped {
            telemetry.count(Telemetry.Name.sentryItemsSkipped, [("type", Self.knownItemType(type))])
        }
        return try await store(contents, project: project, request: request, context: context)
    }

    /// Makes the ids of sessions synthesised from aggregates unique to one request.
    static func seed(project: Project, receivedAt: Date, context: AppRequestContext) -> String {
        "\(project.id)-\(receivedAt.timeIntervalSince1970)-\(context.id)"
    }

    @Sendable func store(_ request: Request, context: AppRequestContext) async throws -> Response {
        let project = try await authenticate(request, context: context)
        let (bytes, _) = try await body(request, limit: limits.maxBatchBytes)
        let contents = try SentryIngestDecoding.store(
            bytes, limits: limits, receivedAt: clock.now(), scrubber: project.scrubber)
        return try await store(contents, project: project, request: request, context: context)
    }

    func store(
        _ contents: SentryIngestDecoding.Contents, project: Project, request: Request, context: AppRequestContext
    )
        async throws -> Response
    {
        let sessionLimit = try await accept(contents, project: project)
        var response = Answer(id: contents.eventID?.rawValue).response(from: request, context: context)
        if let sessionLimit {
            // Only the sessions were dropped: the event (if any) is stored, so the answer stays 200 and says so.
            response.headers[.sentryRateLimits] = sessionLimit
        }
        return response
    }

    /// Stores what a request carries, exactly once by event id.
    /// - Returns: the `X-Sentry-Rate-Limits` value to answer with when only the sessions were limited.
    /// - Throws: 429 (`APIError`) when the event was rate limited or the disk is full; the event's `FormatError`
    ///   when it was malformed (after the envelope's other items were stored).
    func accept(_ contents: SentryIngestDecoding.Contents, project: Project) async throws -> String? {
        // A dump counts against the project's quota: checked before anything of the request is stored, so a refused
        // upload (429) is sent again whole.
        let dumpBytes = contents.contents.attachments.lazy.filter {
            $0.attachmentType == MinidumpSubmission.attachmentType
        }.reduce(0) { $0 + $1.bytes.count }
        if dumpBytes > 0, let minidumpQuota { try await minidumpQuota(project, dumpBytes) }
        let write = try contents.write(project: project.id, receivedAt: clock.now())
        let receipt: EnvelopeReceipt
        do {
            receipt = try await ingest.accept(write, for: project)
        } catch let error as IngestError where error.code == .diskFull {
            throw APIError.sentryStorageFull(retryAfter: error.retryAfter ?? 30)
        }
        // A malformed event fails the request with its field — after the envelope's other items (the session
        // that ended with it, client reports) were stored: SDKs do not retry, so they would be lost otherwise.
        if let error = contents.contents.eventError { throw error }
        // Relay's header: one `seconds:categories:scope:reason` entry per limit, read by the SDKs on any status.
        let sessionLimit = receipt.sessionsLimitedFor.map { "\($0):session:project:rate_limited" }
        if let seconds = receipt.rateLimitedFor {
            // The event was limited (429); the envelope's sessions (unless limited too) and client reports were stored.
            // Past a quota the scope and reason say so (`project:usage_exceeded`); sessions are never under a quota.
            let limits =
                ["\(seconds):error;default;attachment:\(receipt.limitedBy.rawValue)"] + [sessionLimit].compactMap { $0 }
            let message =
                switch receipt.limitedBy {
                case .rateLimit: "project \(project.slug) is over its limit of \(project.rateLimitPerSecond) events/s"
                case .projectQuota: "project \(project.slug) is over its event quota; sessions are still accepted"
                case .serverCeiling: "the server is over its ceiling of events; sessions are still accepted"
                }
            throw APIError(
                status: .tooManyRequests, code: receipt.limitedBy.isQuota ? "quota_reached" : "rate_limited",
                message: message,
                headers: [.retryAfter: String(seconds), .sentryRateLimits: limits.joined(separator: ", ")])
        }
        return sessionLimit
    }

    /// The project of the DSN key (`X-Sentry-Auth`, `Authorization: Sentry …` or `?sentry_key=`), which must be
    /// the project named in the path.
    func authenticate(_ request: Request, context: AppRequestContext) async throws -> Project {
        guard
            let key = SentryIngestDecoding.publicKey(
                xSentryAuth: request.headers[HTTPField.Name("X-Sentry-Auth")!],
                authorization: request.headers[.authorization],
                query: request.uri.query)
        else {
            throw APIError.unauthorized(
                "send the DSN's key: X-Sentry-Auth: Sentry sentry_key=<key>, or ?sentry_key=<key>")
        }
        guard let project = try await projects.authenticate(key, as: .ingest) else {
            throw APIError.unauthorized("the DSN's key is not valid")
        }
        let pathID = try context.parameters.require("project_id")
        guard pathID == String(project.id.rawValue) else {
            throw APIError(
                status: .forbidden, code: "project_mismatch",
                message: "the DSN's key belongs to project \(project.id), not \(pathID)")
        }
        return project
    }

    /// A metric label for an item type: the known ones by name, anything else as `other` (labels stay bounded).
    static func knownItemType(_ type: String) -> String {
        let known: Set<String> = [
            "transaction", "span", "log", "profile", "profile_chunk", "check_in", "replay_event", "replay_recording",
            "user_report", "feedback", "statsd", "otel_log", "metric_buckets", "event", "attachment",
        ]
        return known.contains(type) ? type : "other"
    }

    /// The inflated body (plain, gzip, deflate or brotli) under `limit`, in and out, and the client's bytes when
    /// they were gzip (kept as the stored payload when nothing was scrubbed).
    func body(_ request: Request, limit: Int) async throws -> (inflated: [UInt8], gzip: [UInt8]?) {
        guard let encoding = BodyDecoding.ContentEncoding(header: request.headers[.contentEncoding]) else {
            throw FormatError(.unsupportedEncoding, "Content-Encoding must be gzip, br, deflate or identity")
        }
        telemetry.count(Telemetry.Name.sentryEnvelopes, [("encoding", encoding.rawValue)])
        try DeclaredLength.check(request, limit: limit)
        let body = try await request.body.collect(upTo: limit)
        let inflated = try BodyDecoding.inflate(body, encoding: encoding, limit: limit)
        return (inflated, encoding == .gzip ? Array(body.readableBytesView) : nil)
    }
}
