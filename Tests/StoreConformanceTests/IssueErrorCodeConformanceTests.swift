import FaultlineCore
import Foundation
import Testing

/// The error code an issue's events share (`IssueSummary.errorCode`), read from its stored grouping by both engines in
/// a list, a release's list, an issue's detail and the top issues alike.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct IssueErrorCodeConformanceTests {
    static let t0: Int64 = 1_700_000_000_000

    /// A grouping as filing stores it (`GroupingResult` encoded as JSON), quoted for SQL.
    static func grouping(_ source: GroupingResult.Source, _ components: [String]) throws -> String {
        let result = GroupingResult(
            fingerprint: Fingerprint(version: 3, hash: "00000000000000aa"), source: source, components: components,
            title: "NSURLErrorDomain: The request timed out.", culprit: nil)
        let json = String(decoding: try JSONEncoder().encode(result), as: UTF8.self)
        return "'" + json.replacingOccurrences(of: "'", with: "''") + "'"
    }

    @Test(arguments: Engine.allCases) func everyReadOfAnIssueCarriesItsErrorCode(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let project = try await stores.projects.createProject(
                slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a0", count: 32)),
                uploadTokenHash: SecretHash(hex: String(repeating: "b0", count: 32)),
                createdAt: Date(timeIntervalSince1970: 1), rateLimitPerSecond: 50
            ).id
            // Issue 1 grouped by type and code, 2 by a client's fingerprint naming a code, 3 by its stack.
            let groupings = [
                (1, "nonfatal", try Self.grouping(.error, ["type:NSURLErrorDomain", "code:-1001", "App.load"])),
                (2, "nonfatal", try Self.grouping(.client, ["code:-1001"])),
                (3, "crash", try Self.grouping(.stack, ["App.main"])),
            ]
            for (id, kind, grouping) in groupings {
                try await stores.execute(
                    """
                    INSERT INTO issues (id, project_id, fingerprint, kind, grouping, title, status, regressed, first_seen,
                                        last_seen, events, users, updated_at)
                    VALUES (\(id), \(project.rawValue), 'v3:00000000000000a\(id)', '\(kind)', \(grouping), 'issue \(id)',
                            'open', FALSE, \(Self.t0), \(Self.t0 + Int64(id)), \(id), \(id), \(Self.t0))
                    """)
                try await stores.execute(
                    """
                    INSERT INTO issue_releases (issue_id, release, events, users, first_seen, last_seen)
                    VALUES (\(id), '2.0', \(id), \(id), \(Self.t0), \(Self.t0 + Int64(id)))
                    """)
            }
            let now = Date(timeIntervalSince1970: Double(Self.t0) / 1000 + 60)
            let expected: [IssueID: String?] = [IssueID(1): "-1001", IssueID(2): nil, IssueID(3): nil]
            for release in [nil, "2.0"] as [String?] {
                let listed = try await stores.insights.issues(
                    matching: IssueQuery(project: project, release: release, limit: 10), now: now)
                #expect(listed.count == 3)
                #expect(Dictionary(uniqueKeysWithValues: listed.map { ($0.id, $0.errorCode) }) == expected)
            }
            let detail = try await stores.insights.issue(IssueID(1), project: project, now: now)
            #expect(detail?.summary.errorCode == "-1001")
            let top = try await stores.insights.topIssues(
                project: project, window: .release("2.0"), category: nil, now: now, limit: 10)
            #expect(top.first { $0.issue.id == IssueID(1) }?.issue.errorCode == "-1001")
        }
    }
}
