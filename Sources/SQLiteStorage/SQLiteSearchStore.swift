import FaultlineCore
import GRDB

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The search index on SQLite FTS5 (migration `v15-search-index`).
///
/// Writes: a report's entry (``SearchDocument``) is replaced in the symbolication and grouping transaction
/// (`SQLiteSymbolicationStore.saveAll`: a batch of reports per commit, their entries written last, `Deferred`);
/// ingest never touches the index. The entry's
/// text lives in `search_documents` (external content), whose foreign key drops it with its report (retention,
/// project deletion) and whose triggers keep the FTS index in step.
///
/// Reads: the user's text never reaches FTS5 as syntax. ``matchExpression(_:project:)`` builds the query from
/// ``SearchText``'s plain terms, each in double quotes (they hold only letters, digits and marks, so no quote can
/// end one early), limited to the searchable columns and ANDed with the project's token, and the join with
/// `reports` checks the project again. Hits are taken newest first straight from the index (`ORDER BY rowid DESC`
/// with a limit, no sort of all matches); counting stops at ``SearchResults/countLimit``. The joins with `reports`
/// are `CROSS JOIN`s, which SQLite never reorders: left to itself, the planner walked the project's reports by
/// `reports_by_time` and probed the hits for each (3 s a query at 1 M reports, whatever the text; issue #12).
/// `SearchIndexTests` checks the plans of `pageSQL` and `issuesSQL`.
public struct SQLiteSearchStore: SearchReader {
    let database: SQLiteEngine

    public init(database: SQLiteEngine) {
        self.database = database
    }

    /// The token that marks a project's entries in the `project` column.
    static func projectToken(_ project: ProjectID) -> String { "p\(project.rawValue)" }

    /// Replaces (or creates) the entry of report `reportID` of `project`, in the caller's transaction (a `Deferred`
    /// of one entry, written at once).
    static func replace(_ document: SearchDocument, reportID: Int64, project: ProjectID, _ db: Database) throws {
        let one = Deferred()
        one.add(document, reportID: reportID, project: project)
        try one.write(db)
    }

    /// Entries held back to the end of a batch's transaction and written together (`write`).
    ///
    /// FTS5 moves the terms it holds in memory to disk as a new index segment at every statement savepoint of the
    /// transaction once it was written in it — and every statement with a trigger or a constraint that may abort
    /// takes one. Written between each report's other statements, the entries made a segment per report (then merged
    /// again): 12 % of the server's CPU in the drain bench, 8.6 % at those savepoints. Written last, a batch makes a
    /// segment per `rowsPerInsert` entries: 7 %, 4.5 %.
    final class Deferred {
        private var entries: [(reportID: Int64, project: ProjectID, document: SearchDocument)] = []
        /// Where each report's entry is in `entries`: a report saved twice in one batch keeps its last entry, as
        /// writing them one after the other would (two would collide in the table's key).
        private var positions: [Int64: Int] = [:]

        func add(_ document: SearchDocument, reportID: Int64, project: ProjectID) {
            if let at = positions[reportID] {
                entries[at] = (reportID, project, document)
            } else {
                positions[reportID] = entries.count
                entries.append((reportID, project, document))
            }
        }

        /// Writes the entries held, in the caller's transaction: first every old entry out (a report processed
        /// again), then the new ones, `rowsPerInsert` to a statement.
        func write(_ db: Database) throws {
            let delete = try db.cachedStatement(sql: "DELETE FROM search_documents WHERE report_id = ?")
            for entry in entries { try delete.execute(arguments: [entry.reportID]) }
            try MultiRowInsert.run(
                entries, into: "search_documents",
                columns: ["report_id", "project", "event", "user", "release", "error", "functions", "keys"],
                perStatement: rowsPerInsert, db
            ) { reportID, project, document in
                [
                    reportID, projectToken(project), document.event, document.user, document.release, document.error,
                    document.functions, document.keys,
                ]
            }
            entries.removeAll()
            positions.removeAll()
        }
    }

    /// Entries a statement of `Deferred.write` inserts at most (8 arguments each, far below SQLite's limit).
    static let rowsPerInsert = 64

    /// Replaces the entries of many reports in one transaction, as the worker's batch does (the worker itself writes
    /// through `SQLiteSymbolicationStore.saveAll`, with the result). For tools: the benchmark measures the index's
    /// share of processing with it.
    public func replace(_ entries: [(reportID: Int64, project: ProjectID, document: SearchDocument)]) async throws {
        try await database.pool.write { db in
            let batch = Deferred()
            for entry in entries { batch.add(entry.document, reportID: entry.reportID, project: entry.project) }
            try batch.write(db)
        }
    }

    /// The FTS5 query for `text` in `project`: `project : "p7" AND {event user …} : ("crasher crash" AND "gol" *)`.
    /// Nil when `text` is empty.
    static func matchExpression(_ text: SearchText, project: ProjectID) -> String? {
        guard !text.isEmpty else { return nil }
        var phrases: [String] = []
        for (index, phrase) in text.phrases.enumerated() {
            // The terms hold only letters, digits and marks (SearchText.parse); the filter is a second guard.
            let terms = phrase.map { term in
                String(term.unicodeScalars.filter(SearchText.isTermScalar).map(Character.init))
            }
            .filter { !$0.isEmpty }
            guard !terms.isEmpty else { continue }
            let prefix = text.prefixLast && index == text.phrases.count - 1 ? " *" : ""
            phrases.append("\"\(terms.joined(separator: " "))\"\(prefix)")
        }
        guard !phrases.isEmpty else { return nil }
        return
            "project : \"\(projectToken(project))\" AND {event user release error functions keys} : (\(phrases.joined(separator: " AND ")))"
    }

    /// A page of hits, newest first (arguments: match, limit, offset, project).
    static let pageSQL = """
        WITH hits AS (
            SELECT rowid AS id FROM search_index WHERE search_index MATCH ?1 ORDER BY rowid DESC LIMIT ?2 OFFSET ?3
        )
        SELECT \(ReportSQL.columns)
        FROM hits CROSS JOIN reports r ON r.id = hits.id WHERE r.project_id = ?4 ORDER BY r.id DESC
        """

    /// The issues of the newest hits (arguments: project, match, how many hits).
    static let issuesSQL = """
        SELECT \(IssueSQL.columns) FROM issues i
        WHERE i.project_id = ?1 AND i.id IN (
            SELECT r.issue_id FROM (
                SELECT rowid AS id FROM search_index WHERE search_index MATCH ?2 ORDER BY rowid DESC LIMIT ?3
            ) hits CROSS JOIN reports r ON r.id = hits.id
            WHERE r.project_id = ?1 AND r.issue_id IS NOT NULL)
        ORDER BY i.last_seen DESC, i.id DESC LIMIT 100
        """

    public func search(_ text: SearchText, project: ProjectID, page: Int, pageSize: Int, now: Date) async throws
        -> SearchResults
    {
        guard let match = Self.matchExpression(text, project: project) else {
            return .none
        }
        let page = PageRequest(page: page, size: pageSize, bound: PageRequest.maxSearchHits)
        let limit = SearchResults.countLimit
        return try await database.pool.read { db in
            let reports = try db.rows(
                SQLStatement(
                    sql: Self.pageSQL,
                    values: [
                        .text(match), .integer(Int64(page.limit)), .integer(Int64(page.offset)),
                        .integer(project.rawValue),
                    ]),
                ReportSQL.summary)
            let counted =
                try Int.fetchOne(
                    db,
                    sql: """
                        SELECT count(*) FROM (
                            SELECT rowid FROM search_index WHERE search_index MATCH ? ORDER BY rowid DESC LIMIT ?)
                        """,
                    arguments: [match, limit + 1]) ?? 0
            let issues = try db.rows(
                SQLStatement(
                    sql: Self.issuesSQL, values: [.integer(project.rawValue), .text(match), .integer(Int64(limit))])
            ) { try IssueSQL.summary($0, now: now) }
            return SearchResults(reports: reports, issues: issues, counted: counted)
        }
    }
}
