import FaultlineCore
import PostgresNIO

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Merge and unmerge on PostgreSQL (`IssueMerge` holds the rules and the statements; the twin of
// `SQLiteInsightsReader+Merge`). Several nodes file at once: a merge takes the advisory locks of the fingerprints it
// touches, in the order filing takes them (`PostgresGrouper.lock`), then the issues' rows, so no filing sees half a
// merge, and none files into an issue being merged away.
extension PostgresInsightsReader {
    public func merge(_ others: [IssueID], into survivor: IssueID, project: ProjectID?, by: String?, at date: Date)
        async throws -> IssueMergeResult
    {
        let ids = try IssueMerge.ids(survivor: survivor, others: others)
        let logger = database.logger
        return try await Self.refusalsUnwrapped {
            try await database.write { connection in
                let unlocked = try await connection.rows(IssueMerge.candidates(ids, dialect: .postgres), logger: logger)
                {
                    try IssueMerge.candidate($0)
                }
                try await PostgresGrouper.lock(
                    fingerprints: Set(unlocked.map(\.fingerprint)).sorted(), connection, logger)
                var statement = IssueMerge.candidates(ids, dialect: .postgres)
                statement.sql += " FOR UPDATE"
                let read = try await connection.rows(statement, logger: logger) { try IssueMerge.candidate($0) }
                let found = Dictionary(read.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
                let (kept, merged) = try IssueMerge.check(
                    survivor: survivor, others: others, found: found, project: project)
                for statement in IssueMerge.statements(
                    merging: merged, into: kept, now: Millis.from(date), by: by, dialect: .postgres)
                {
                    try await connection.query(PostgresQuery(statement), logger: logger)
                }
                return IssueMergeResult(
                    survivor: survivor, project: ProjectID(kept.project), merged: merged.map { IssueID($0.id) })
            }
        }
    }

    /// `body`, a refusal thrown inside its transaction given as itself (PostgresNIO wraps what a transaction throws).
    static func refusalsUnwrapped<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PostgresTransactionError {
            if let refusal = error.closureError as? IssueMergeError { throw refusal }
            throw error
        }
    }

    public func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?, at date: Date)
        async throws -> IssueUnmergeResult
    {
        let logger = database.logger
        return try await Self.refusalsUnwrapped {
            try await database.write { connection in
                // The fingerprint's filings wait for the unmerge: none files into the survivor after its reports are queued.
                try await PostgresGrouper.lock(fingerprints: [fingerprint], connection, logger)
                var statement = IssueMerge.unmergeTarget(
                    fingerprint: fingerprint, survivor: survivor.rawValue, dialect: .postgres)
                statement.sql += " FOR UPDATE"
                let target = try await connection.rows(statement, logger: logger) {
                    (project: try $0.integer(0), aliasOf: try $0.integerOrNull(1))
                }
                let owner = try IssueMerge.checkUnmerge(
                    target.first, fingerprint: fingerprint, survivor: survivor, project: project)
                for statement in IssueMerge.unmergeStatements(
                    fingerprint: fingerprint, survivor: survivor.rawValue, project: owner, dialect: .postgres)
                {
                    try await connection.query(PostgresQuery(statement), logger: logger)
                }
                // Filed again, the fingerprint's reports find no issue and move to a new one; the rest stay.
                let requeued = try await PostgresRows.count(
                    connection.query(
                        """
                        UPDATE reports SET symbolication = 'pending', claimed_until = NULL WHERE issue_id = \(survivor.rawValue)
                        RETURNING 1
                        """, logger: logger))
                return IssueUnmergeResult(survivor: survivor, fingerprint: fingerprint, requeued: requeued)
            }
        }
    }

    public func replacement(of issue: IssueID, project: ProjectID?) async throws -> IssueID? {
        try await database.rows(
            IssueMerge.replacement(of: issue.rawValue, project: project?.rawValue, dialect: .postgres)
        ) {
            try IssueID($0.integer(0))
        }.first
    }

    public func mergedFingerprints(of issue: IssueID) async throws -> [MergedFingerprint] {
        try await database.rows(
            IssueMerge.mergedFingerprints(of: issue.rawValue, dialect: .postgres), IssueMerge.mergedFingerprint)
    }
}
