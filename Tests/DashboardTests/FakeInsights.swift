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

    func topIssues(project: ProjectID, window: TopIssueWindow, now: Date, limit: Int) async throws -> [TopIssue] {
        Array((data(project).top[window] ?? []).prefix(limit))
    }

    func issues(matching query: IssueQuery, now: Date) async throws -> [IssueSummary] {
        Array(data(query.project).issues.prefix(query.limit))
    }

    func issue(_ id: IssueID, project: ProjectID?, now: Date) async throws -> IssueDetail? {
        project.flatMap { data($0).details[id] }
    }

    func issuesChanged(project: ProjectID, since: Date) async throws -> [IssueID] { data(project).changed }

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
