extension SearchResults {
    /// What a search for nothing finds.
    public static let none = SearchResults(
        reports: [], reportCount: 0, reportCountIsLowerBound: false, issues: [], issuesFromNewestOnly: false)

    /// A page of `reports` and the `issues` of the newest matches, with the matches counted up to one past
    /// ``countLimit`` (`counted`): past it, the count is a lower bound and the issues are the newest matches' only.
    public init(reports: [ReportSummary], issues: [IssueSummary], counted: Int) {
        self.init(
            reports: reports, reportCount: min(counted, Self.countLimit),
            reportCountIsLowerBound: counted > Self.countLimit,
            issues: issues, issuesFromNewestOnly: counted > Self.countLimit)
    }
}
