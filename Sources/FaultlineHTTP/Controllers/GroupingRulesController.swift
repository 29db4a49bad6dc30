import FaultlineCore
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A project's fingerprint rules for scripts (docs/grouping.md, "Fingerprint rules"): `GET /api/v1/grouping/rules`
/// (every version, newest first, and the regroup's progress), `PUT /api/v1/grouping/rules` (the body becomes the next
/// version and the regroup starts: the project's admins, owners and the admin token) and
/// `POST /api/v1/grouping/try[?days=N]` (the dry run of the rules text in the body over the stored reports; changes
/// nothing). An upload token reads its own project; the admin token names one with `?project=SLUG`.
struct GroupingRulesController {
    let service: GroupingRulesService
    let projects: ProjectService

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .get("grouping/rules", use: rules)
            .put("grouping/rules", use: setRules)
            .post("grouping/try", use: tryRules)
    }

    struct RulesOut: ResponseEncodable {
        var project: String
        var versions: [GroupingRulesVersion]
        var regroup: RegroupProgress?
    }

    @Sendable func rules(_ request: Request, context: ReaderContext) async throws -> RulesOut {
        let project = try await context.project(request, projects: projects)
        return RulesOut(
            project: project.slug.rawValue, versions: try await service.versions(project: project.id),
            regroup: try await service.progress(project: project.id))
    }

    /// Rules regroup a project's whole history, so they are changed at the level that changes settings: an upload
    /// token (held by CI) gets 403. A mistake is a 400 naming its line and column (`field: "rules"`); nothing is
    /// stored then.
    @Sendable func setRules(_ request: Request, context: ReaderContext) async throws -> RulesOut {
        let project = try await context.project(request, projects: projects)
        guard Access.decide(context.requester, .changeSettings, project: project.id) == .allowed else {
            throw APIError.forbidden("changing fingerprint rules needs a project admin (an upload token may only read)")
        }
        let body = try await request.body.collect(upTo: FingerprintRules.maxTextBytes)
        do {
            _ = try await service.set(
                String(decoding: Data(buffer: body), as: UTF8.self), project: project.id, by: context.changedBy,
                origin: context.origin)
        } catch let error as FingerprintRulesError {
            throw APIError.badRequest(error.description, field: "rules")
        }
        return try await rules(request, context: context)
    }

    struct TryOut: ResponseEncodable {
        var project: String
        var days: Int
        var answer: GroupingDryRunAnswer
    }

    /// The body is the rules text (at most `FingerprintRules.maxTextBytes`); a mistake is a 400 naming its line and
    /// column (`field: "rules"`).
    @Sendable func tryRules(_ request: Request, context: ReaderContext) async throws -> TryOut {
        let project = try await context.project(request, projects: projects)
        let days = try InsightsController.intParam(request, "days", default: 30, range: 1...GroupingDryRun.maxDays)
        let body = try await request.body.collect(upTo: FingerprintRules.maxTextBytes)
        let text = String(decoding: Data(buffer: body), as: UTF8.self)
        do {
            return TryOut(
                project: project.slug.rawValue, days: days,
                answer: try await service.dryRun(text, project: project.id, days: days))
        } catch let error as FingerprintRulesError {
            throw APIError.badRequest(error.description, field: "rules")
        }
    }
}
