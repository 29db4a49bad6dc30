extension SymbolicationStore {
    /// A stored report as people read it again (the dashboard's pages, the read API): `report`, just re-read from
    /// its stored payload as report row `reportID`, with its symbolication result.
    ///
    /// The one place a reader applies the walk the worker saved (`SymbolicatedReport.walk`): a minidump report's
    /// payload holds each thread's context frame only, so without it the page and the API would show one frame a
    /// thread, and the result's slots would not line up with the frames. A report with no stored result (one that
    /// needed none: its client resolved every frame) gets an empty result in its state: its own frames are the
    /// answer.
    ///
    /// - Parameter limits: the limits the report was read with; a walk is cut to the same threads and frames.
    public func readBack(_ report: Report, reportID: Int64, limits: IngestLimits) async throws
        -> (report: Report, symbols: SymbolicatedReport)
    {
        let (state, stored) = try await result(reportID: reportID)
        let symbols = stored ?? SymbolicatedReport(state: state, threads: [], missing: [])
        guard let walk = symbols.walk else { return (report, symbols) }
        return (report.applying(walk, limits: limits), symbols)
    }
}
