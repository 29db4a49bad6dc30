import FaultlineCore
import Foundation
import GRDB
import TestSupport
import Testing

@testable import SQLiteStorage

/// Reports stored and grouped on a real SQLite file, for the SQLite-only storage tests (the tests of both engines
/// have their own: Tests/StoreConformanceTests).
struct SQLiteFixture {
    let day0 = StoreRows.day0

    func setUp() async throws -> (TempDatabase, Project) {
        let db = try TempDatabase()
        let p = try await SQLiteProjectStore(database: db.database).createProject(
            slug: ProjectSlug("app")!, ingestKeyHash: SecretHash(hex: String(repeating: "a", count: 64)),
            uploadTokenHash: SecretHash(hex: String(repeating: "b", count: 64)),
            createdAt: Date(timeIntervalSince1970: 1),
            rateLimitPerSecond: 50)
        return (db, p)
    }

    /// Stores reports: (n, release, user, seconds after day0, session).
    func store(
        _ db: TempDatabase, _ p: Project, _ rows: [(Int, String?, String?, Double, String?)], receivedAt: Date = Date()
    ) async throws {
        let prepared = StoreRows.reports(rows)
        _ = try await SQLiteIngestStore(database: db.database).commit([
            .reports(ReportBatch(project: p.id, receivedAt: receivedAt, payload: payload, reports: prepared))
        ])
    }

    func grouping(_ site: String, device: String = "Pixel 7") -> GroupingInput {
        StoreRows.grouping(site, device: device)
    }

    func rowID(_ db: TempDatabase, _ n: Int) async throws -> Int64 {
        try await db.database.pool.read {
            try Int64.fetchOne($0, sql: "SELECT id FROM reports WHERE event_id = ?", arguments: [eventID(n).rawValue])!
        }
    }

    @discardableResult
    func group(_ db: TempDatabase, _ n: Int, _ site: String, at: Date = Date()) async throws -> IssueID? {
        try await SQLiteSymbolicationStore(database: db.database).save(
            SymbolicatedReport(state: .notNeeded, threads: [], missing: []), grouping: grouping(site),
            reportID: try await rowID(db, n), at: at)
    }

    /// Compares every issue counter with a recount from `reports`.
    func expectIssueRollupsMatchRecount(_ db: TempDatabase, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        try await db.database.pool.read { db in
            let mismatches = try Row.fetchAll(
                db,
                sql: """
                    SELECT i.id, i.events, i.users, i.repeat_users, r.events AS re, r.users AS ru, coalesce(rep.n, 0) AS rrep
                    FROM issues i
                    LEFT JOIN (SELECT issue_id, count(*) AS events, count(DISTINCT user_key) AS users FROM reports GROUP BY issue_id) r
                        ON r.issue_id = i.id
                    LEFT JOIN (SELECT issue_id, count(*) AS n FROM (SELECT issue_id, user_key FROM reports WHERE user_key IS NOT NULL
                        GROUP BY issue_id, user_key HAVING count(*) > 1) GROUP BY issue_id) rep ON rep.issue_id = i.id
                    WHERE i.events != coalesce(r.events, 0) OR i.users != coalesce(r.users, 0) OR i.repeat_users != coalesce(rep.n, 0)
                    """)
            #expect(mismatches.isEmpty, "issues differ from a recount: \(mismatches)", sourceLocation: sourceLocation)
            let releaseMismatches = try Row.fetchAll(
                db,
                sql: """
                    WITH recount AS (SELECT issue_id, coalesce(release, '') AS release, count(*) AS events, count(DISTINCT user_key) AS users
                                     FROM reports WHERE issue_id IS NOT NULL GROUP BY 1, 2)
                    SELECT * FROM recount r FULL OUTER JOIN issue_releases ir ON ir.issue_id = r.issue_id AND ir.release = r.release
                    WHERE r.events IS NOT ir.events OR r.users IS NOT ir.users
                    """)
            #expect(
                releaseMismatches.isEmpty, "issue_releases differ: \(releaseMismatches)", sourceLocation: sourceLocation
            )
            let dayMismatches = try Row.fetchAll(
                db,
                sql: """
                    WITH recount AS (SELECT issue_id, occurred_at / 86400000 AS day, count(*) AS events, count(DISTINCT user_key) AS users
                                     FROM reports WHERE issue_id IS NOT NULL GROUP BY 1, 2)
                    SELECT * FROM recount r FULL OUTER JOIN issue_days d ON d.issue_id = r.issue_id AND d.day = r.day
                    WHERE r.events IS NOT d.events OR r.users IS NOT d.users
                    """)
            #expect(dayMismatches.isEmpty, "issue_days differ: \(dayMismatches)", sourceLocation: sourceLocation)
        }
    }
}
