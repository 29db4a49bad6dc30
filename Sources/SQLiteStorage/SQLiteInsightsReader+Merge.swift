import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Merge and unmerge on SQLite (`IssueMerge` holds the rules and the statements; the twin of
// `PostgresInsightsReader+Merge`). One writer: the transaction alone keeps a filing from seeing half a merge.
extension SQLiteInsightsReader {
    public func merge(_ others: [IssueID], into survivor: IssueID, project: ProjectID?, by: String?, at date: Date)
        async throws -> IssueMergeResult
    {
        let ids = try IssueMerge.ids(survivor: survivor, others: others)
        return try await database.pool.write { db in
            let read = try db.rows(IssueMerge.candidates(ids, dialect: .sqlite)) { try IssueMerge.candidate($0) }
            let found = Dictionary(read.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let (kept, merged) = try IssueMerge.check(
                survivor: survivor, others: others, found: found, project: project)
            for statement in IssueMerge.statements(
                merging: merged, into: kept, now: Millis.from(date), by: by, dialect: .sqlite)
            {
                try db.execute(sql: statement.sql, arguments: StatementArguments(statement))
            }
            return IssueMergeResult(
                survivor: survivor, project: ProjectID(kept.project), merged: merged.map { IssueID($0.id) })
        }
    }

    public func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?, at date: Date)
        async throws -> IssueUnmergeResult
    {
        try await database.pool.write { db in
            let target = try db.rows(
                IssueMerge.unmergeTarget(fingerprint: fingerprint, survivor: survivor.rawValue, dialect: .sqlite)
            ) { (project: try $0.integer(0), aliasOf: try $0.integerOrNull(1)) }
            let owner = try IssueMerge.checkUnmerge(
                target.first, fingerprint: fingerprint, survivor: survivor, project: project)
            for statement in IssueMerge.unmergeStatements(
                fingerprint: fingerprint, survivor: survivor.rawValue, project: owner, dialect: .sqlite)
            {
                try db.execute(sql: statement.sql, arguments: StatementArguments(statement))
            }
            // Filed again, the fingerprint's reports find no issue and move to a new one; the rest stay.
            try db.execute(
                sql: "UPDATE reports SET symbolication = 'pending' WHERE issue_id = ?", arguments: [survivor.rawValue])
            return IssueUnmergeResult(survivor: survivor, fingerprint: fingerprint, requeued: db.changesCount)
        }
    }

    public func replacement(of issue: IssueID, project: ProjectID?) async throws -> IssueID? {
        try await database.rows(
            IssueMerge.replacement(of: issue.rawValue, project: project?.rawValue, dialect: .sqlite)
        ) {
            try IssueID($0.integer(0))
        }.first
    }

    public func mergedFingerprints(of issue: IssueID) async throws -> [MergedFingerprint] {
        try await database.rows(
            IssueMerge.mergedFingerprints(of: issue.rawValue, dialect: .sqlite), IssueMerge.mergedFingerprint)
    }
}
