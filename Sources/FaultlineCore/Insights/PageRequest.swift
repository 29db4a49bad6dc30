/// How many rows a store reads for one page of a listing, and from where: at least one row and at most the
/// listing's bound, from an offset of 0 or more.
///
/// The bounds are the stores' own guard, whatever the caller asked for (the HTTP layer refuses out-of-range
/// parameters with a 400 before a store sees them): they keep one read of a listing bounded.
public struct PageRequest: Sendable, Equatable {
    /// Rows to read, from 1 to the listing's bound.
    public let limit: Int
    /// Rows skipped first, 0 or more.
    public let offset: Int

    /// An issue listing: the summary pages' read of every listed issue is the largest.
    public static let maxIssues = 10_000
    /// The top issues of a window.
    public static let maxTopIssues = 500
    /// The API's largest page of reports.
    public static let maxReportPage = 500
    /// A page of reports: the API's largest page and one more, which says whether a next page exists.
    public static let maxReports = maxReportPage + 1
    /// The alerts of a project.
    public static let maxAlerts = 1_000
    /// A page of search hits.
    public static let maxSearchHits = 200

    /// `limit` rows (1 … `bound`) from `offset` (below 0 counts as 0).
    public init(limit: Int, offset: Int = 0, bound: Int = .max) {
        self.limit = max(1, min(limit, bound))
        self.offset = max(0, offset)
    }

    /// Page `page` (from 1; below 1 counts as 1) of pages of `size` rows (1 … `bound`). A page whose offset
    /// would overflow starts at `Int.max`, which reads nothing.
    public init(page: Int, size: Int, bound: Int) {
        let rows = PageRequest(limit: size, bound: bound).limit
        let (offset, overflow) = (max(1, page) - 1).multipliedReportingOverflow(by: rows)
        self.init(limit: rows, offset: overflow ? .max : offset, bound: bound)
    }
}

extension IssueQuery {
    /// The page of the listing this query reads.
    public var page: PageRequest { PageRequest(limit: limit, offset: offset, bound: PageRequest.maxIssues) }
}

extension ReportQuery {
    /// The page of the listing this query reads (keyset-paged: the cursor is `before`, never an offset).
    public var page: PageRequest { PageRequest(limit: limit, bound: PageRequest.maxReports) }
}
