import FaultlineCore
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What spike protection counted, for scripts and dashboards elsewhere: `GET /api/v1/quota-counts` (accepted and
/// dropped events per day, release and fingerprint) and `GET /api/v1/issues/{id}/dropped` (the events refused past a
/// quota that the client's fingerprint put in one issue). An upload token reads its own project; the admin token
/// names one with `?project=SLUG`.
struct QuotaCountsController {
    let insights: any InsightsReader
    let quotas: any QuotaCountStore
    let projects: ProjectService
    let clock: any WallClock

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .get("quota-counts", use: counts)
            .get("issues/{id}/dropped", use: issueDropped)
    }

    struct CountsOut: ResponseEncodable {
        struct Row: Codable {
            var day: String
            var release: String
            var fingerprint: String?
            var accepted: Int
            var dropped: Int
        }
        var days: Int
        var accepted: Int
        var dropped: Int
        var counts: [Row]
    }

    /// `GET /api/v1/quota-counts[?days=N]`: the last `days` days (default 30, at most 400), newest first; the
    /// totals count every row.
    @Sendable func counts(_ request: Request, context: ReaderContext) async throws -> CountsOut {
        let project = try await context.project(request, projects: projects)
        let days = try InsightsController.intParam(request, "days", default: 30, range: 1...400)
        let rows = try await quotas.quotaCounts(project: project.id, from: DayNumber(clock.now()).adding(-(days - 1)))
        var accepted = 0
        var dropped = 0
        for row in rows {
            accepted = accepted.addingReportingOverflow(row.accepted).overflow ? .max : accepted + row.accepted
            dropped = dropped.addingReportingOverflow(row.dropped).overflow ? .max : dropped + row.dropped
        }
        return CountsOut(
            days: days, accepted: accepted, dropped: dropped,
            counts: rows.map {
                .init(
                    day: $0.day.description, release: $0.release, fingerprint: $0.fingerprint?.description,
                    accepted: $0.accepted, dropped: $0.dropped)
            })
    }

    struct DroppedOut: ResponseEncodable {
        var issue: Int64
        var dropped: Int
        var fingerprints: [String]
    }

    /// `GET /api/v1/issues/{id}/dropped`: the events refused past a quota under the issue's fingerprint or one merged
    /// into it, over the retention period (decision 0073). Only events whose client sent a fingerprint can be put in
    /// an issue without being stored; the others count by release (`/quota-counts`).
    @Sendable func issueDropped(_ request: Request, context: ReaderContext) async throws -> DroppedOut {
        let id = try InsightsController.issueID(context)
        guard let detail = try await insights.issue(id, project: context.projectID, now: clock.now()) else {
            throw APIError.notFound("no issue \(id)")
        }
        let merged = try await insights.mergedFingerprints(of: id).compactMap { Fingerprint($0.fingerprint) }
        let fingerprints = [detail.grouping.fingerprint] + merged
        let dropped = try await quotas.droppedEvents(project: detail.summary.project, fingerprints: fingerprints)
        return DroppedOut(issue: id.rawValue, dropped: dropped, fingerprints: fingerprints.map(\.description))
    }
}
