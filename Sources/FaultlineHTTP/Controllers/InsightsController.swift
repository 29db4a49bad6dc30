import FaultlineCore
import Formats
import Hummingbird
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The insights API: issues (list, detail, status changes), release health, releases, top issues, alerts and
/// alert settings. An upload token reads its own project; the admin token names one with `?project=SLUG`. Only the
/// admin token changes alert settings.
struct InsightsController {
    let insights: any InsightsReader
    let clientReports: any ClientReportReader
    let issues: IssueService
    let alerts: any AlertStore
    let projects: ProjectService
    let clock: any WallClock
    /// Where webhooks may go (checked when the URL is set; the dispatcher checks again before each delivery).
    let webhookTargets: WebhookTargetPolicy
    /// Where alert-settings changes are recorded; nil records nothing.
    var audit: (any AuditTrail)? = nil

    var endpoints: RouteCollection<ReaderContext> {
        RouteCollection(context: ReaderContext.self)
            .get("issues", use: listIssues)
            .get("issues/{id}", use: getIssue)
            .patch("issues/{id}", use: patchIssue)
            .get("health", use: health)
            .get("releases", use: releases)
            .get("releases/{release}/gate", use: gate)
            .get("top-issues", use: topIssues)
            .get("alerts", use: listAlerts)
            .get("alert-settings", use: getSettings)
            .get("dropped-events", use: droppedEvents)
            .put("alert-settings", use: putSettings)
    }

    // MARK: Issues

    @Sendable func listIssues(_ request: Request, context: ReaderContext) async throws -> IssuesOut {
        let project = try await context.project(request, projects: projects)
        let params = request.uri.queryParameters
        var query = IssueQuery(project: project.id)
        if let status = params["status"].map(String.init) {
            guard let parsed = IssueStatus(rawValue: status) else {
                throw APIError.badRequest("must be open, closed or muted", field: "status")
            }
            query.status = parsed
        }
        // `?kind=crash|hang|nonfatal`: one category (a hang is never listed with the crashes or non-fatals it was
        // sent as).
        query.category = try IssueOut.category(params["kind"])
        query.release = params["release"].map { ReleaseName.release(of: String($0)) }
        query.limit = try Self.limit(request, default: 100, max: 1000)
        let now = clock.now()
        return IssuesOut(issues: try await insights.issues(matching: query, now: now).map(IssueOut.init))
    }

    @Sendable func getIssue(_ request: Request, context: ReaderContext) async throws -> IssueDetailOut {
        let id = try Self.issueID(context)
        let project = context.projectID
        guard let detail = try await insights.issue(id, project: project, now: clock.now()) else {
            throw try await missing(id, request, context: context)
        }
        return IssueDetailOut(detail)
    }

    /// `PATCH /api/v1/issues/{id}`: a new status, the tracker issue's URL (empty clears it), or both.
    struct IssuePatch: Decodable {
        var status: String?
        var trackerURL: String?
        enum CodingKeys: String, CodingKey {
            case status, trackerURL = "tracker_url"
        }
    }

    @Sendable func patchIssue(_ request: Request, context: ReaderContext) async throws -> IssueOut {
        let id = try Self.issueID(context)
        let body = try await request.body.collect(upTo: 8192)
        guard let patch = try? JSONDecoder().decode(IssuePatch.self, from: Data(buffer: body)),
            patch.status != nil || patch.trackerURL != nil
        else {
            throw APIError.badRequest(
                "send a JSON object like {\"status\": \"closed\"} or {\"tracker_url\": \"https://…\"}", field: "status")
        }
        // Both fields are checked before either changes anything.
        let status = try patch.status.map {
            guard let status = IssueStatus(rawValue: $0) else {
                throw APIError.badRequest("must be open, closed or muted", field: "status")
            }
            return status
        }
        if let text = patch.trackerURL {
            _ = try TrackerURL.validated(text, field: "tracker_url")  // a 400 naming tracker_url (`APIError.from`)
        }
        if let status {
            let by = context.changedBy
            guard
                try await issues.setStatus(
                    status, issue: id, project: context.projectID, by: by, origin: context.origin) != nil
            else {
                throw try await missing(id, request, context: context)
            }
        }
        if let text = patch.trackerURL {
            guard
                try await issues.setTrackerURL(text, issue: id, project: context.projectID, origin: context.origin)
            else {
                throw try await missing(id, request, context: context)
            }
        }
        guard let detail = try await insights.issue(id, project: context.projectID, now: clock.now()) else {
            throw try await missing(id, request, context: context)
        }
        return IssueOut(detail.summary, trackerURL: detail.trackerURL)
    }

    /// The answer for an issue number with no issue: a redirect to the issue it was merged into (302 for a read, as
    /// Sentry answers a merged group's id; 307 for a change, which keeps its method and body), else 404.
    func missing(_ id: IssueID, _ request: Request, context: ReaderContext) async throws -> APIError {
        guard let survivor = try await insights.replacement(of: id, project: context.projectID) else {
            return APIError.notFound("no issue \(id)")
        }
        return APIError.mergedInto(
            survivor, from: id, query: request.uri.query, keepMethod: request.method != .get && request.method != .head)
    }

    // MARK: Health and releases

    @Sendable func health(_ request: Request, context: ReaderContext) async throws -> HealthOut {
        let project = try await context.project(request, projects: projects)
        let params = request.uri.queryParameters
        let days = try Self.intParam(request, "days", default: 30, range: 1...365)
        let release = params["release"].map { ReleaseName.release(of: String($0)) }
        let today = DayNumber(clock.now())
        let series = try await insights.health(
            project: project.id, release: release, from: today.adding(-(2 * days - 1)), through: today)
        let trend = HealthTrend.make(series: series, last: today, length: days)
        return HealthOut(
            project: project.slug.rawValue, release: release, days: trend.days.map(DayOut.init),
            total: SliceOut(trend.total),
            previous: SliceOut(trend.previous), targets: TargetsOut(project.targets))
    }

    @Sendable func releases(_ request: Request, context: ReaderContext) async throws -> ReleasesOut {
        let project = try await context.project(request, projects: projects)
        let limit = try Self.limit(request, default: 50, max: 500)
        return ReleasesOut(
            releases: try await insights.releases(project: project.id, now: clock.now(), limit: limit).map(
                ReleaseOut.init),
            targets: TargetsOut(project.targets))
    }

    @Sendable func topIssues(_ request: Request, context: ReaderContext) async throws -> TopOut {
        let project = try await context.project(request, projects: projects)
        let params = request.uri.queryParameters
        let window: TopIssueWindow
        switch params["window"].map(String.init) ?? "24h" {
        case "24h": window = .last24Hours
        case "7d": window = .last7Days
        case "release":
            guard let release = params["release"].map { ReleaseName.release(of: String($0)) }, !release.isEmpty else {
                throw APIError.badRequest("name the release with ?release=…", field: "release")
            }
            window = .release(release)
        default: throw APIError.badRequest("must be 24h, 7d or release", field: "window")
        }
        // `?kind=crash|hang|nonfatal` ranks one category by its users (as the dashboard's sections do); without it,
        // every kind.
        let category = try IssueOut.category(params["kind"])
        let limit = try Self.limit(request, default: 20, max: PageRequest.maxTopIssues)
        let rows = try await insights.topIssues(
            project: project.id, window: window, category: category, now: clock.now(), limit: limit)
        return TopOut(
            window: window.label, kind: category.map(IssueOut.name),
            issues: rows.map {
                TopOut.Row(
                    issue: IssueOut($0.issue), users: $0.users, events: $0.events, previousUsers: $0.previous?.users,
                    previousEvents: $0.previous?.events)
            })
    }

    // MARK: Alerts

    @Sendable func listAlerts(_ request: Request, context: ReaderContext) async throws -> AlertsOut {
        let project = try await context.project(request, projects: projects)
        let limit = try Self.limit(request, default: 100, max: PageRequest.maxAlerts)
        let deliveries = Dictionary(
            try await alerts.deliveries(project: project.id).map { ($0.alert, $0) }, uniquingKeysWith: { a, _ in a })
        return AlertsOut(
            alerts: try await insights.alerts(project: project.id, limit: limit).map {
                AlertOut($0, delivery: deliveries[$0.id])
            })
    }

    /// `GET /api/v1/alert-settings?project=SLUG`: every reader of the project sees its settings, but the webhook URL in
    /// full only those who may change them. A Slack or Discord webhook's URL is its secret (whoever holds it posts to
    /// the team's channel), so a viewer's token or the upload token gets its scheme and host only
    /// (`https://hooks.slack.com/…`), as the settings page, the alerts page and the audit trail show it.
    @Sendable func getSettings(_ request: Request, context: ReaderContext) async throws -> SettingsOut {
        let project = try await context.project(request, projects: projects)
        var settings = try await alerts.settings(project: project.id)
        if let url = settings.webhookURL,
            Access.decide(context.requester, .changeSettings, project: project.id) != .allowed
        {
            settings.webhookURL = AuditText.webhook(url)
        }
        return SettingsOut(settings: settings)
    }

    /// `PUT /api/v1/alert-settings?project=SLUG`: admin token only. The settings hold the webhook URL, which makes
    /// the server send requests; an upload token (held by CI) may read them, not change them.
    @Sendable func putSettings(_ request: Request, context: ReaderContext) async throws -> SettingsOut {
        let project = try await context.project(request, projects: projects)
        guard Access.decide(context.requester, .changeSettings, project: project.id) == .allowed else {
            throw APIError.forbidden(
                "changing alert settings needs the admin token (an upload token may only read them)")
        }
        let body = try await request.body.collect(upTo: 16 * 1024)
        let settings: AlertSettings
        do {
            settings = try JSONDecoder().decode(AlertSettings.self, from: Data(buffer: body))
        } catch {
            throw APIError.badRequest("send every setting of GET /api/v1/alert-settings as JSON", field: "settings")
        }
        do {
            try await AlertSettingsChange(store: alerts, targets: webhookTargets, audit: audit, clock: clock)
                .apply(settings, project: project, by: context.origin)
        } catch let refusal as AlertSettingsRefusal {
            throw APIError.badRequest(refusal.message, field: refusal.field)
        }
        return SettingsOut(settings: settings)
    }

    // MARK: Dropped events

    struct DroppedOut: ResponseEncodable {
        struct Row: Codable {
            var day: String
            var reason: String
            var category: String
            var quantity: Int
        }
        var dropped: [Row]
    }

    /// `GET /api/v1/dropped-events?days=30`: what SDKs reported dropping (Sentry client reports), per day.
    @Sendable func droppedEvents(_ request: Request, context: ReaderContext) async throws -> DroppedOut {
        let project = try await context.project(request, projects: projects)
        let days = try Self.intParam(request, "days", default: 30, range: 1...365)
        let rows = try await clientReports.droppedEvents(
            project: project.id, from: DayNumber(clock.now()).adding(-(days - 1)))
        return DroppedOut(
            dropped: rows.map {
                .init(day: $0.day.description, reason: $0.reason, category: $0.category, quantity: $0.quantity)
            })
    }

    // MARK: Parameters

    static func issueID(_ context: ReaderContext) throws -> IssueID {
        let raw = try context.parameters.require("id")
        guard let value = Int64(raw), value > 0 else {
            throw APIError.badRequest("must be an issue number", field: "id")
        }
        return IssueID(value)
    }

    static func limit(_ request: Request, default value: Int, max: Int) throws -> Int {
        try intParam(request, "limit", default: value, range: 1...max)
    }

    static func intParam(_ request: Request, _ name: String, default value: Int, range: ClosedRange<Int>) throws -> Int
    {
        guard let raw = request.uri.queryParameters[Substring(name)].map(String.init) else { return value }
        guard let parsed = Int(raw), range.contains(parsed) else {
            throw APIError.badRequest("must be a number from \(range.lowerBound) to \(range.upperBound)", field: name)
        }
        return parsed
    }
}

extension ReaderContext {
    /// The project an upload token belongs to, or the one the admin names with `?project=SLUG`.
    func project(_ request: Request, projects: ProjectService) async throws -> Project {
        switch scope {
        case .project(let project): return project
        case .admin:
            guard let slug = request.uri.queryParameters["project"].map(String.init) else {
                throw APIError.badRequest("name the project with ?project=SLUG", field: "project")
            }
            guard let parsed = ProjectSlug(slug), let found = try await projects.project(slug: parsed) else {
                throw APIError.notFound("no project \"\(slug)\"")
            }
            return found
        }
    }

    /// Who the request acts for, for ``Access``: a personal token's person (narrowed to its scopes), the project's
    /// upload token, or the admin token.
    var requester: Requester {
        if let person { return .person(person) }
        switch scope {
        case .project(let project): return .uploadToken(project.id)
        case .admin: return .adminToken
        }
    }

    /// Who a change made with this token is recorded as made by (an issue's status, a merge).
    var changedBy: String {
        if let person { return StatusChanger.person(person) }
        return projectID == nil ? "the API (admin token)" : "the API (upload token)"
    }

    /// The project an upload token limits reads to; nil for the admin.
    var projectID: ProjectID? {
        if case .project(let project) = scope { return project.id }
        return nil
    }
}
