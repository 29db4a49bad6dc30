import FaultlineCore
import Foundation

/// An in-memory `InsightsReader`: each project's answers are fixed data (pure rendering tests need no database).
struct FakeInsights: InsightsReader {
    struct ProjectData: Sendable {
        /// Daily health per release (`nil`: all releases together).
        var health: [String?: [DailyHealth]] = [:]
        var releases: [ReleaseRow] = []
        var top: [TopIssueWindow: [TopIssue]] = [:]
        var issues: [IssueSummary] = []
        var details: [IssueID: IssueDetail] = [:]
        var changed: [IssueID] = []
        var alerts: [Alert] = []
        var counts: [IssueStatus: Int] = [:]
    }

    var projects: [ProjectID: ProjectData]

    func data(_ project: ProjectID) -> ProjectData { projects[project] ?? ProjectData() }

    func health(project: ProjectID, release: String?, from: DayNumber, through: DayNumber) async throws -> [DailyHealth]
    {
        (data(project).health[release] ?? []).filter { $0.day >= from && $0.day <= through }
    }

    func releases(project: ProjectID, now: Date, limit: Int) async throws -> [ReleaseRow] {
        Array(data(project).releases.prefix(limit))
    }

    /// The window's fixed ranking, only the issues of `category` when given.
    func topIssues(
        project: ProjectID, window: TopIssueWindow, category: IssueCategory?, now: Date, limit: Int
    ) async throws -> [TopIssue] {
        Array(
            (data(project).top[window] ?? []).filter { category == nil || $0.issue.category == category }.prefix(limit))
    }

    /// The project's issues that pass `query`'s status, category and regressed filters (releases are not modelled), in
    /// its order.
    func matching(_ query: IssueQuery) -> [IssueSummary] {
        data(query.project).issues.filter {
            (query.status == nil || $0.status == query.status)
                && (query.kind == nil || $0.kind == query.kind)
                && (query.category == nil || $0.category == query.category)
                && (query.regressed == nil || $0.signals.regressed == query.regressed)
        }.sorted(by: query.order.precedes)
    }

    func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        Array(matching(query).dropFirst(max(0, query.offset)).prefix(query.limit))
    }

    func issueIDs(matching query: IssueQuery) async throws -> [IssueID] {
        try await issues(matching: query, now: Date()).map(\.id)
    }

    func issueCount(matching query: IssueQuery) async throws -> Int { matching(query).count }

    func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        project.flatMap { data($0).details[id] }
    }

    func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] { data(project).changed }

    /// The changed issues' versions (their details' versions; issues without one get a version from their summary).
    func issueVersions(project: ProjectID, changedSince since: Date) async throws -> [IssueID: IssueVersion] {
        try await issueVersions(of: data(project).changed, project: project)
    }

    func issueVersions(of ids: [IssueID], project: ProjectID) async throws -> [IssueID: IssueVersion] {
        var versions: [IssueID: IssueVersion] = [:]
        for id in ids {
            if let version = try await issueVersion(id, project: project) { versions[id] = version }
        }
        return versions
    }

    func issueVersion(_ id: IssueID, project: ProjectID) async throws -> IssueVersion? {
        guard let detail = data(project).details[id] else { return nil }
        return detail.version
            ?? IssueVersion(
                changedAt: 0, events: Int64(detail.summary.events), status: detail.summary.status.rawValue,
                noteBytes: Int64(detail.note?.utf8.count ?? -1))
    }

    func alerts(project: ProjectID, limit: Int) async throws -> [Alert] { Array(data(project).alerts.prefix(limit)) }

    func issueCounts(project: ProjectID) async throws -> [IssueStatus: Int] { data(project).counts }
}

/// Collects what a render writes.
actor PageStore {
    private(set) var pages: [String: String] = [:]
    private(set) var order: [String] = []

    func put(_ path: String, _ contents: String) {
        pages[path] = contents
        order.append(path)
    }
}
