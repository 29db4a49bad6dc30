import FaultlineCore
import Foundation
import PostgresNIO

/// Search on PostgreSQL (the twin of `SQLiteSearchStore`), with PostgreSQL's full-text index (`tsvector`, GIN).
///
/// **Same terms as SQLite.** Neither side of a search goes through a text-search configuration: the entry's
/// `tsvector` and the query's `tsquery` are written here, from the same rule as `SearchText` (runs of letters,
/// digits and marks, lowercased) with diacritics removed, as SQLite's `unicode61` tokenizer does. A parser of
/// PostgreSQL's own would keep `Crasher.crash` or `alice@example.com` whole, where SQLite splits them.
/// - Fields are kept apart by a gap in positions, so a phrase never matches across two fields (FTS5 matches a phrase
///   within one column).
/// - A word longer than `maxLexemeBytes` is left out of the entry (PostgreSQL refuses lexemes over 2 KB; no one
///   searches for such a word).
/// - An entry's lexemes stay far under PostgreSQL's 1 MiB for one `tsvector`: `SearchDocument` bounds each field in
///   bytes after folding (`SearchDocument.maxFieldBytes`, with `fold` below as `SearchDocument.foldedBytes` counts it).
///   An entry refused anyway (SQLSTATE 54000) fails its report alone (`PostgresSymbolicationStore`, a savepoint per
///   report), never its batch.
///
/// **Never syntax.** Terms hold only letters, digits and marks, so quoting each (`'term'`) cannot be broken out of;
/// the query is bound as a parameter and cast to `tsquery`, and the project is a column, checked again on the join.
public struct PostgresSearchStore: SearchReader {
    let database: PostgresEngine

    public init(database: PostgresEngine) {
        self.database = database
    }

    static let maxLexemeBytes = 255
    /// Positions per lexeme that PostgreSQL keeps.
    static let maxPositions = 256
    /// The highest position PostgreSQL stores (later ones are stored as it).
    static let maxPosition = 16_383
    /// Positions left empty between two fields.
    static let fieldGap = 8

    /// `text` as search terms: runs of term characters, lowercased, diacritics removed.
    static func terms(_ text: String) -> [String] {
        SearchText.pieces(of: fold(text))
    }

    /// `text` without diacritics (`é` → `e`): decomposed, nonspacing marks dropped. (`SearchDocument.foldedBytes` is
    /// an upper bound of its bytes, scalar by scalar, checked against it for every scalar by `SearchTextTests`.)
    static func fold(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0.value > 0x7F }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.decomposedStringWithCanonicalMapping.unicodeScalars
        where scalar.properties.generalCategory != .nonspacingMark {
            scalars.append(scalar)
        }
        return String(scalars)
    }

    /// The `tsvector` literal of `document`: every term with its positions, fields `fieldGap` positions apart. (Also
    /// `faultline migrate`'s, which writes the entries of SQLite's index with it.)
    package static func vector(_ document: SearchDocument) -> String {
        var positions: [String: [Int]] = [:]
        var order: [String] = []
        var position = 0
        for field in [
            document.event, document.user, document.release, document.error, document.functions, document.keys,
        ] {
            for term in terms(field) {
                position = min(position + 1, maxPosition)
                guard term.utf8.count <= maxLexemeBytes else { continue }
                if positions[term] == nil { order.append(term) }
                if positions[term, default: []].count < maxPositions { positions[term, default: []].append(position) }
            }
            position = min(position + fieldGap, maxPosition)
        }
        return order.map { term in "'\(term)':" + (positions[term] ?? []).map(String.init).joined(separator: ",") }
            .joined(separator: " ")
    }

    /// The `tsquery` of `text`: each word a phrase of adjacent terms (`<->`), every word required (`&`), the last term
    /// a prefix (`:*`) when `SearchText` says so. Nil when there is nothing to search.
    static func query(_ text: SearchText) -> String? {
        var phrases: [String] = []
        for (index, phrase) in text.phrases.enumerated() {
            // SearchText's terms hold only term characters; folding and the filter are a second guard.
            let words = phrase.flatMap { terms($0) }
            guard !words.isEmpty else { continue }
            let last = text.prefixLast && index == text.phrases.count - 1
            let quoted = words.enumerated().map { i, word in "'\(word)'" + (last && i == words.count - 1 ? ":*" : "") }
            phrases.append("(" + quoted.joined(separator: " <-> ") + ")")
        }
        return phrases.isEmpty ? nil : phrases.joined(separator: " & ")
    }

    /// Replaces (or creates) the entry of `report`, in the caller's transaction.
    static func replace(
        _ document: SearchDocument, report: FiledReport, _ connection: PostgresConnection, _ logger: Logger
    ) async throws {
        try await connection.query(
            """
            INSERT INTO search_documents (report_id, received_at, project_id, document)
            VALUES (\(report.id), \(report.receivedAt), \(report.project.rawValue), \(vector(document))::tsvector)
            ON CONFLICT (report_id, received_at) DO UPDATE SET document = excluded.document
            """, logger: logger)
    }

    /// Replaces (or creates) the entries of many reports in one statement, in the caller's transaction.
    static func replace(
        _ entries: [(report: FiledReport, document: SearchDocument)], _ connection: PostgresConnection, _ logger: Logger
    )
        async throws
    {
        guard !entries.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO search_documents (report_id, received_at, project_id, document)
            SELECT id, received_at, p, v::tsvector
            FROM unnest(\(entries.map { $0.report.id })::bigint[], \(entries.map { $0.report.receivedAt })::bigint[],
                        \(entries.map { $0.report.project.rawValue })::bigint[], \(entries.map { vector($0.document) })::text[]) AS u(id, received_at, p, v)
            ON CONFLICT (report_id, received_at) DO UPDATE SET document = excluded.document
            """, logger: logger)
    }

    public func search(_ text: SearchText, project: ProjectID, page: Int, pageSize: Int, now: Date) async throws
        -> SearchResults
    {
        guard let query = Self.query(text) else {
            return .none
        }
        let page = PageRequest(page: page, size: pageSize, bound: PageRequest.maxSearchHits)
        let limit = SearchResults.countLimit
        let logger = database.logger
        let p = project.rawValue
        // One transaction, for its `SET LOCAL`: a search reads `search_documents` through its indexes only. Without
        // current statistics the planner has taken a term for frequent and scanned every entry (seconds at 1 M).
        return try await database.write { connection in
            try await connection.query("SET LOCAL enable_seqscan = off", logger: logger)
            // The count first (capped): it says which way to read the page.
            var counted = 0
            for try await count in try await connection.query(
                """
                SELECT count(*) FROM (SELECT 1 FROM search_documents WHERE project_id = \(p) AND document @@ \(query)::tsquery
                                      LIMIT \(Int64(limit + 1))) AS hits
                """, logger: logger
            ).decode(Int.self) {
                counted = count
            }
            // Few hits: all of them from the full-text index, then ordered. Many: the newest entries in id order until
            // a page of hits is found (a frequent term is found soon; walking the ids for a rare one would read them all).
            let few = counted <= limit
            let hits =
                few
                ? """
                SELECT report_id, received_at FROM (
                    SELECT report_id, received_at FROM search_documents WHERE project_id = $1 AND document @@ $2::tsquery
                    OFFSET 0) AS matched
                ORDER BY report_id DESC
                """
                : """
                SELECT report_id, received_at FROM search_documents WHERE project_id = $1 AND document @@ $2::tsquery
                ORDER BY report_id DESC
                """
            let pageQuery = SQLStatement(
                sql: """
                    WITH hits AS MATERIALIZED (\(hits) LIMIT $3 OFFSET $4)
                    SELECT \(ReportSQL.columns) FROM hits
                    JOIN reports r ON r.id = hits.report_id AND r.received_at = hits.received_at
                    WHERE r.project_id = $1 ORDER BY r.id DESC
                    """,
                values: [.integer(p), .text(query), .integer(Int64(page.limit)), .integer(Int64(page.offset))])
            let reports = try await connection.rows(pageQuery, logger: logger, ReportSQL.summary)
            // The issues of the newest `limit` hits, found once (materialized), then the issue rows by id: as a semi-join
            // the planner walked every issue by last seen and searched again for each.
            let issuesQuery = SQLStatement(
                sql: """
                    WITH hits AS MATERIALIZED (\(hits) LIMIT $3),
                    hit_issues AS MATERIALIZED (
                        SELECT DISTINCT r.issue_id FROM hits
                        JOIN reports r ON r.id = hits.report_id AND r.received_at = hits.received_at
                        WHERE r.project_id = $1 AND r.issue_id IS NOT NULL)
                    SELECT \(IssueSQL.columns) FROM hit_issues h JOIN issues i ON i.id = h.issue_id
                    WHERE i.project_id = $1
                    ORDER BY i.last_seen DESC, i.id DESC LIMIT 100
                    """,
                values: [.integer(p), .text(query), .integer(Int64(limit))])
            let issues = try await connection.rows(issuesQuery, logger: logger) { try IssueSQL.summary($0, now: now) }
            return SearchResults(reports: reports, issues: issues, counted: counted)
        }
    }
}
