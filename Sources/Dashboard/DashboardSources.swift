import FaultlineCore

/// Everything the site renderer reads, passed in by the composition root.
///
/// Closures rather than store protocols, so that the dashboard depends on nothing but `FaultlineCore`'s types and
/// the composition root decides where each answer comes from.
public struct DashboardSources: Sendable {
    /// All projects (the renderer sorts them by slug).
    public var projects: @Sendable () async throws -> [Project]
    /// Issues, rollups and alerts.
    public var insights: any InsightsReader
    /// Build-ids the reports of a project lacked a debug file for, most reports first.
    public var missingDebugFiles: @Sendable (ProjectID) async throws -> [MissingDebugFileSummary]
    /// A project's alert settings, for the Alerts page to say whether anyone is sent the alerts (nil, the default:
    /// the page says nothing about delivery).
    public var alertSettings: @Sendable (ProjectID) async throws -> AlertSettings? = { _ in nil }
    /// The full report and its symbolication result for a sample event (nil if it was pruned).
    public var event: @Sendable (ReportSummary) async throws -> (report: Report, symbols: SymbolicatedReport?)?
    /// Source excerpts for frames from the projects' source bundles (nil: no source context on the pages).
    public var sourceContext: (any SourceContextReading)?
    /// How many reports still wait to be symbolicated and grouped, counted up to the limit given (0: none, the
    /// default). Pages say so while any wait (``ProcessingNotice``).
    public var pendingReports: @Sendable (Int) async throws -> Int
    /// What a project's quotas counted from a day on, accepted and dropped (`QuotaCountStore`; none by default).
    public var quotaCounts: @Sendable (ProjectID, DayNumber) async throws -> [QuotaCount] = { _, _ in [] }
    /// The events of a project refused past a quota under any of the fingerprints (an issue's own and those merged
    /// into it; `QuotaCountStore.droppedEvents`; none by default).
    public var droppedEvents: @Sendable (ProjectID, [Fingerprint]) async throws -> Int = { _, _ in 0 }

    /// - Parameters:
    ///   - projects: lists every project.
    ///   - insights: reads issues, health rollups and alerts.
    ///   - missingDebugFiles: lists the debug files a project's reports lacked.
    ///   - event: loads a sample event in full; nil when it no longer exists.
    ///   - sourceContext: reads source lines around frames (the event views' source context).
    ///   - pendingReports: counts the reports still waiting for processing, up to the limit given.
    public init(
        projects: @escaping @Sendable () async throws -> [Project],
        insights: any InsightsReader,
        missingDebugFiles: @escaping @Sendable (ProjectID) async throws -> [MissingDebugFileSummary],
        event: @escaping @Sendable (ReportSummary) async throws -> (report: Report, symbols: SymbolicatedReport?)?,
        sourceContext: (any SourceContextReading)? = nil,
        pendingReports: @escaping @Sendable (Int) async throws -> Int = { _ in 0 }
    ) {
        self.sourceContext = sourceContext
        self.pendingReports = pendingReports
        self.projects = projects
        self.insights = insights
        self.missingDebugFiles = missingDebugFiles
        self.event = event
    }
}
