import FaultlineCore
import Foundation
import GRDB
import Testing

@testable import SQLiteStorage

/// SQLite's plans for the issue listing and the top issues: a list page is read in index order (no sort of the
/// project's issues), the recent windows from a covering index. (What the listings hold is checked on both engines:
/// `IssueListConformanceTests`.)
@Suite struct IssueListQueryTests {
    func setUp() async throws -> (TempDatabase, ProjectID) {
        let db = try TempDatabase()
        let project = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        return (db, project.id)
    }

    /// SQLite's plan for `statement`, one step a line.
    func plan(_ db: TempDatabase, _ statement: SQLStatement) async throws -> String {
        try await db.database.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: StatementArguments(statement))
                .map { $0["detail"] as String }
        }.joined(separator: "\n")
    }

    /// The default listing (the summary pages' read of up to 10,000 issues) is read from the index alone.
    @Test func theDefaultListingIsReadFromTheIndex() async throws {
        let (db, app) = try await setUp()
        let ids = try await plan(db, IssueSQL.page(IssueQuery(project: app, limit: 10_000), idsOnly: true, .sqlite))
        #expect(ids.contains("USING COVERING INDEX issues_list_by_last_seen"), "\(ids)")
        #expect(!ids.contains("TEMP B-TREE"), "\(ids)")
    }

    /// The top issues of the last 24 hours / 7 days are counted from `reports_by_time` alone (issue #13): looking
    /// each report of the window up in the table for its issue and user was 0.32 s of a 0.40 s summary refresh at
    /// 1 M reports stored.
    @Test func theRecentTopIssuesAreCountedFromTheIndexAlone() async throws {
        let (db, app) = try await setUp()
        let covered = "USING COVERING INDEX reports_by_time (project_id=? AND occurred_at>? AND occurred_at<?)"
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let window = try await plan(db, IssueSQL.top(project: app, window: .last7Days, now: now, limit: 10, .sqlite))
        #expect(window.contains(covered), "\(window)")
        let before = try await plan(
            db,
            IssueSQL.windowBefore(
                project: app, issues: [IssueID(1), IssueID(2), IssueID(3)], seconds: 86_400, now: now, .sqlite))
        #expect(before.contains(covered), "\(before)")
    }

    /// A project's hangs (and whether it has any, which the overview asks on every render) are read from the hangs'
    /// partial index, in its order, without reading the project's other issues (only the hangs' rows).
    @Test func theHangsAreReadFromTheirPartialIndex() async throws {
        let (db, app) = try await setUp()
        let ids = try await plan(
            db, IssueSQL.page(IssueQuery(project: app, category: .hang, limit: 1), idsOnly: true, .sqlite))
        #expect(ids.contains("USING INDEX issues_hangs (project_id=?)"), "\(ids)")
        #expect(!ids.contains("TEMP B-TREE"), "\(ids)")
    }

    @Test func aPageIsReadInIndexOrderWithoutSortingTheProjectsIssues() async throws {
        let (db, app) = try await setUp()
        for status in [nil, IssueStatus.muted] {
            for order in IssueOrder.allCases {
                let query = IssueQuery(
                    project: app, status: status, category: .crash, regressed: true, order: order, offset: 3,
                    limit: 5)
                let page = try await plan(db, IssueSQL.page(query, .sqlite))
                #expect(page.contains("issues_list_by_"), "\(order): \(page)")
                #expect(!page.contains("TEMP B-TREE"), "\(order): \(page)")
            }
        }
    }
}
