import FaultlineCore
import Foundation
import Testing

/// A project's issue tracker (ProjectStore.setTracker) and an issue's tracker issue (IssueStateStore.setTrackerURL),
/// on each engine: stored, read back with the project and the issue's detail, cleared, and never across projects.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct TrackerConformanceTests {
    @Test(arguments: Engine.allCases) func trackersAreStoredReadAndCleared(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let p = try await createProject(stores)
            let other = try await createProject(stores, "other")
            #expect(try await stores.projects.project(slug: p.slug)?.tracker == nil)
            let jira = try IssueTracker.validated(kind: .jira, url: "https://acme.atlassian.net?pid=10000&issuetype=1")
            #expect(try await stores.projects.setTracker(jira, for: p.id))
            #expect(try await stores.projects.project(slug: p.slug)?.tracker == jira)
            #expect(try await stores.projects.project(slug: other.slug)?.tracker == nil)
            #expect(try await !stores.projects.setTracker(jira, for: ProjectID(999)))
            #expect(try await stores.projects.setTracker(nil, for: p.id))
            #expect(try await stores.projects.project(slug: p.slug)?.tracker == nil)

            // An issue's tracker issue
            _ = try await stores.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: [report(1)]))
            ])
            try await stores.symbolication.saveAll(
                [GroupingConformanceTests.outcome(try await stores.reportID(eventID(1)), site: "a")], at: Date())
            let number = try #require(try await stores.texts("SELECT id FROM issues").first.flatMap { Int64($0) })
            let issue = IssueID(number)
            let url = "https://github.com/acme/app/issues/12"
            #expect(try await stores.insights.setTrackerURL(url, issue: issue, project: p.id, at: Date()))
            #expect(try await stores.insights.issue(issue, project: p.id, now: Date())?.trackerURL == url)
            // Not through another project
            #expect(try await !stores.insights.setTrackerURL(nil, issue: issue, project: other.id, at: Date()))
            #expect(try await stores.insights.issue(issue, project: nil, now: Date())?.trackerURL == url)
            #expect(try await stores.insights.setTrackerURL(nil, issue: issue, project: nil, at: Date()))
            #expect(try await stores.insights.issue(issue, project: p.id, now: Date())?.trackerURL == nil)
        }
    }
}
