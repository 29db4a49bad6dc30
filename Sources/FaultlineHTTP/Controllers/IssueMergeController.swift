import FaultlineCore
import Formats
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Merge and unmerge on the API (`IssueMerge`), with the same tokens as `PATCH /api/v1/issues/{id}`: an upload token
/// changes its own project's issues, the admin token any project's (every issue of one merge in one project).
///
/// - `POST /api/v1/issues/{id}/merge` with `{"issues": [12, 13]}`: merges them into `{id}`, at once; 200
///   `{"issue": id, "merged": [12, 13], "url": "/api/v1/issues/{id}"}`. A merged issue's number then answers
///   `GET`/`PATCH /api/v1/issues/{number}` with a redirect to the survivor (`InsightsController`).
/// - `POST /api/v1/issues/{id}/unmerge` with `{"fingerprint": "v2:…"}`: splits a merged fingerprint back out; 202
///   `{"issue": id, "fingerprint": …, "requeued": n}`: its events move to an issue of their own as the n reports are
///   filed again.
/// - `GET /api/v1/issues/{id}/merged`: the fingerprints merged into the issue.
///
/// Refusals answer 400 (`merge_refused`: into itself, the overflow issue, another project's issue for the admin) or
/// 404 (an issue this token cannot see, a fingerprint not merged into the issue), naming the issue.
struct IssueMergeController {
    let issues: IssueService
    let insights: any InsightsReader
    let clock: any WallClock

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .post("issues/{id}/merge", use: merge)
            .post("issues/{id}/unmerge", use: unmerge)
            .get("issues/{id}/merged", use: merged)
    }

    struct MergeBody: Decodable {
        var issues: [Int64]
    }

    struct MergeOut: Codable, ResponseEncodable {
        var issue: Int64
        var merged: [Int64]
        var url: String
    }

    struct UnmergeBody: Decodable {
        var fingerprint: String
    }

    struct UnmergeOut: Codable, ResponseEncodable {
        var issue: Int64
        var fingerprint: String
        var requeued: Int
    }

    struct MergedOut: Codable, ResponseEncodable {
        struct Entry: Codable {
            var fingerprint: String
            var mergedAt: String
            var formerIssue: Int64?
            enum CodingKeys: String, CodingKey {
                case fingerprint, mergedAt = "merged_at", formerIssue = "former_issue"
            }
        }
        var issue: Int64
        var fingerprints: [Entry]
    }

    @Sendable func merge(_ request: Request, context: ReaderContext) async throws -> MergeOut {
        let id = try InsightsController.issueID(context)
        let body = try await request.body.collect(upTo: 16 * 1024)
        guard let decoded = try? JSONDecoder().decode(MergeBody.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("send a JSON object like {\"issues\": [12, 13]}", field: "issues")
        }
        guard decoded.issues.allSatisfy({ $0 > 0 }) else {
            throw APIError.badRequest("issue numbers are positive", field: "issues")
        }
        let result = try await issues.merge(
            decoded.issues.map { IssueID($0) }, into: id, project: context.projectID, by: context.changedBy,
            origin: context.origin)
        return MergeOut(
            issue: result.survivor.rawValue, merged: result.merged.map(\.rawValue),
            url: "/api/v1/issues/\(result.survivor.rawValue)")
    }

    @Sendable func unmerge(_ request: Request, context: ReaderContext) async throws -> EditedResponse<UnmergeOut> {
        let id = try InsightsController.issueID(context)
        let body = try await request.body.collect(upTo: 4096)
        guard let decoded = try? JSONDecoder().decode(UnmergeBody.self, from: Data(buffer: body)) else {
            throw APIError.badRequest("send a JSON object like {\"fingerprint\": \"v2:…\"}", field: "fingerprint")
        }
        guard Fingerprint(decoded.fingerprint) != nil else {
            throw APIError.badRequest(
                "must be a fingerprint, as GET /api/v1/issues/{id}/merged lists them", field: "fingerprint")
        }
        let result = try await issues.unmerge(
            fingerprint: decoded.fingerprint, from: id, project: context.projectID, origin: context.origin)
        return EditedResponse(
            status: .accepted,
            response: UnmergeOut(
                issue: result.survivor.rawValue, fingerprint: result.fingerprint, requeued: result.requeued))
    }

    @Sendable func merged(_ request: Request, context: ReaderContext) async throws -> MergedOut {
        let id = try InsightsController.issueID(context)
        guard try await insights.issue(id, project: context.projectID, now: clock.now()) != nil else {
            throw APIError.notFound("no issue \(id)")
        }
        let merged = try await insights.mergedFingerprints(of: id)
        return MergedOut(
            issue: id.rawValue,
            fingerprints: merged.map {
                .init(
                    fingerprint: $0.fingerprint, mergedAt: Timestamps.formatISO8601($0.mergedAt),
                    formerIssue: $0.formerIssue?.rawValue)
            })
    }
}
