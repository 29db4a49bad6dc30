import FaultlineCore
import Formats
import Hummingbird
import Pipeline

/// Accepts native crash and non-fatal reports: limit → decode → one service call → 202.
struct ReportsController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let limits: IngestLimits
    let telemetry: Telemetry

    var endpoints: RouteCollection<IngestContext> {
        RouteCollection(context: IngestContext.self).post("reports", use: post)
    }

    /// The 202 answer: every accepted id (new and retried), which were retries, and the refused reports
    /// of a batch with the field that was wrong.
    struct Receipt: ResponseGenerator {
        var accepted: [String]
        var duplicates: [String]
        var rejected: [Rejection]

        func response(from request: Request, context: some RequestContext) -> Response {
            var json = JSONAnswer(capacity: 64 + 40 * (accepted.count + duplicates.count))
            json.object { json in
                json.field("accepted", accepted)
                json.field("duplicates", duplicates)
                json.key("rejected")
                json.array { json in
                    for rejection in rejected {
                        json.object { json in
                            json.field("index", rejection.index)
                            json.field("error", rejection.error)
                            if let field = rejection.field { json.field("field", field) }
                            json.field("message", rejection.message)
                        }
                    }
                }
            }
            return json.response()
        }
    }

    struct Rejection: Codable {
        var index: Int
        var error: String
        var field: String?
        var message: String
    }

    @Sendable func post(_ request: Request, context: IngestContext) async throws -> EditedResponse<Receipt> {
        // Everything is in the body: a query parameter or X-Faultline-* header would be ignored, so it is refused.
        _ = try IngestParameters(request, known: [])
        let body = try await IngestBody.read(request, limit: limits.maxBatchBytes)
        // Scrubbed before anything is decoded or stored; ranges refer to the scrubbed bytes.
        let (decoded, scrubbed) = try NativeReports.decode(
            body.bytes, limits: limits, scrubber: context.project.scrubber)
        var reports: [PreparedReport] = []
        var rejected: [Rejection] = []
        var firstError: FormatError?
        for (index, item) in decoded.items.enumerated() {
            switch item {
            case .success(let report): reports.append(report)
            case .failure(let error):
                firstError = firstError ?? error
                rejected.append(
                    Rejection(index: index, error: error.code.description, field: error.field, message: error.message))
            }
        }
        if !rejected.isEmpty { telemetry.rejected(.invalid, count: rejected.count) }
        guard !reports.isEmpty else { throw firstError ?? FormatError(.invalidField, "no reports", field: "reports") }
        let receipt = try await ingest.accept(
            reports, payload: try body.storedPayload(scrubbed: scrubbed), for: context.project)
        let accepted = reports.map(\.report.eventID.rawValue)
        return EditedResponse(
            status: .accepted,
            response: Receipt(accepted: accepted, duplicates: receipt.duplicates.map(\.rawValue), rejected: rejected))
    }
}

/// Accepts session updates: limit → decode → one service call → 202.
struct SessionsController<Ingest: ReportIngesting> {
    let ingest: Ingest
    let limits: IngestLimits

    var endpoints: RouteCollection<IngestContext> {
        RouteCollection(context: IngestContext.self).post("sessions", use: post)
    }

    struct Receipt: ResponseGenerator {
        var applied: Int
        var unchanged: Int

        func response(from request: Request, context: some RequestContext) -> Response {
            var json = JSONAnswer()
            json.object { json in
                json.field("applied", applied)
                json.field("unchanged", unchanged)
            }
            return json.response()
        }
    }

    @Sendable func post(_ request: Request, context: IngestContext) async throws -> EditedResponse<Receipt> {
        _ = try IngestParameters(request, known: [])
        let body = try await IngestBody.read(request, limit: limits.maxBatchBytes)
        let updates = context.project.scrubber.pseudonymous(try NativeSessions.decode(body.bytes, limits: limits))
        let receipt = try await ingest.accept(updates, for: context.project)
        return EditedResponse(
            status: .accepted, response: Receipt(applied: receipt.applied, unchanged: receipt.unchanged))
    }
}
