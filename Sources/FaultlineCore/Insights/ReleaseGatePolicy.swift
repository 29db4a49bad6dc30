/// How the baseline's window is matched to the release's.
public enum BaselineWindow: String, Sendable, CaseIterable {
    /// The baseline's first D days, D being the days the release has been out (its first day through today).
    case days
    /// The baseline's first days, up to the first on which its sessions reach the release's (whole days: the
    /// rollups count by day).
    case sessions
}

/// What the gate asks of a release.
public struct ReleaseGatePolicy: Sendable, Equatable {
    /// The project's crash-free targets (percent).
    public var targets: CrashFreeTargets
    /// Below this many sessions a release that failed nothing has "not enough data"; counted as at least 1.
    public var minSessions: Int
    /// The confidence level of the Wilson intervals (two-sided; 0.95 puts each end at the 97.5 % one-sided bound).
    public var confidence: Double
    /// New fatal issues (crashes first seen in the release) it may bring.
    public var maxNewFatalIssues: Int
    /// Regressed crashes it may hit.
    public var maxRegressedIssues: Int
    public var baselineWindow: BaselineWindow

    /// The default minimum number of sessions.
    public static let defaultMinSessions = 100
    /// The default confidence level.
    public static let defaultConfidence = 0.95
    /// The largest minimum accepted (a gate that can never pass is a typo).
    public static let maxMinSessions = 100_000_000

    public init(
        targets: CrashFreeTargets = CrashFreeTargets(), minSessions: Int = Self.defaultMinSessions,
        confidence: Double = Self.defaultConfidence, maxNewFatalIssues: Int = 0, maxRegressedIssues: Int = 0,
        baselineWindow: BaselineWindow = .days
    ) {
        self.targets = targets
        self.minSessions = minSessions
        self.confidence = confidence
        self.maxNewFatalIssues = maxNewFatalIssues
        self.maxRegressedIssues = maxRegressedIssues
        self.baselineWindow = baselineWindow
    }

    /// What is wrong with this policy (a snake_case field name and why), or nil when it is usable.
    public var problem: (field: String, message: String)? {
        if !(0...Self.maxMinSessions).contains(minSessions) {
            return ("min_sessions", "must be a number from 0 to \(Self.maxMinSessions)")
        }
        if !(confidence.isFinite && WilsonInterval.confidenceRange.contains(confidence)) {
            return ("confidence", "must be a level from 0.5 to 0.9999 (0.95 is 95 %)")
        }
        if !(0...PageRequest.maxIssues).contains(maxNewFatalIssues) {
            return ("max_new_fatal", "must be a number from 0 to \(PageRequest.maxIssues)")
        }
        if !(0...PageRequest.maxIssues).contains(maxRegressedIssues) {
            return ("max_regressed", "must be a number from 0 to \(PageRequest.maxIssues)")
        }
        return targets.problem
    }
}
