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
            var span = kept.span
            let now = Millis.from(date)
            for other in merged {
                span = IssueMerge.span(span, merging: other.span)
                for statement in IssueMerge.statements(
                    merging: other, into: kept, span: span, now: now, by: by, dialect: .sqlite)
                {
                    try db.execute(sql: statement.sql, arguments: StatementArguments(statement))
                }
            }
            return IssueMergeResult(
                survivor: survivor, project: ProjectID(kept.project), merged: merged.map { IssueID($0.id) })
        }
    }

    public func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?, at date: Date)
        async throws -> IssueUnmergeResult
    {
        try await database.pool.write { db in
            guard
                let owner = try Int64.fetchOne(
                    db, sql: "SELECT project_id FROM issues WHERE id = ?", arguments: [survivor.rawValue]),
                project.map({ $0.rawValue == owner }) ?? true
            else { throw IssueMergeError.noSuchIssue(survivor) }
            let alias = try db.rows(IssueMerge.aliasOwner(fingerprint: fingerprint, project: owner, dialect: .sqlite)) {
                try $0.integer(0)
            }
            guard alias.first == survivor.rawValue else {
                throw IssueMergeError.notMerged(fingerprint: fingerprint, issue: survivor)
            }
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
        try await database.rows(IssueMerge.mergedFingerprints(of: issue.rawValue, dialect: .sqlite)) {
            MergedFingerprint(
                fingerprint: try $0.text(0), mergedAt: try $0.date(1),
                formerIssue: try $0.integerOrNull(2).map { IssueID($0) })
        }
    }
}
