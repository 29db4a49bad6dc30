import FaultlineCore
import Hummingbird

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension InsightsController {
    /// `GET /api/v1/releases/{release}/gate?baseline=R0&min_sessions=N&confidence=0.95&max_new_fatal=0&max_regressed=0
    /// &baseline_window=days|sessions`: the release gate (``ReleaseGate``) of one release, with its reasons. A gate is an
    /// answer, not an error: a failing release is a 200 whose `verdict` is `fail` (`exit_code` 1).
    @Sendable func gate(_ request: Request, context: ReaderContext) async throws -> ReleaseGateOut {
        let project = try await context.project(request, projects: projects)
        let release = try Self.releaseParameter(context)
        let params = request.uri.queryParameters
        let baseline = try params["baseline"].map { raw -> String in
            guard let parsed = ReleaseName.parse(String(raw)) else {
                throw APIError.badRequest("name a release, or leave baseline out", field: "baseline")
            }
            return parsed.version
        }
        let policy = try Self.gatePolicy(request, targets: project.targets)
        let gate = try await insights.releaseGate(
            project: project.id, release: release, baseline: baseline, policy: policy, now: clock.now())
        return ReleaseGateOut(project: project.slug.rawValue, gate: gate)
    }

    /// The release of the path, percent-decoded and read as ``ReleaseName/parse(_:build:)`` reads it.
    static func releaseParameter(_ context: ReaderContext) throws -> String {
        let raw = try context.parameters.require("release")
        guard let decoded = raw.removingPercentEncoding, let parsed = ReleaseName.parse(decoded) else {
            throw APIError.badRequest("must name a release", field: "release")
        }
        return parsed.version
    }

    /// The gate's policy from the query: the project's targets, and the defaults of ``ReleaseGatePolicy`` for what
    /// the query leaves out.
    static func gatePolicy(_ request: Request, targets: CrashFreeTargets) throws -> ReleaseGatePolicy {
        let params = request.uri.queryParameters
        var policy = ReleaseGatePolicy(targets: targets)
        policy.minSessions = try intParam(
            request, "min_sessions", default: policy.minSessions, range: 0...ReleaseGatePolicy.maxMinSessions)
        policy.maxNewFatalIssues = try intParam(request, "max_new_fatal", default: 0, range: 0...PageRequest.maxIssues)
        policy.maxRegressedIssues = try intParam(request, "max_regressed", default: 0, range: 0...PageRequest.maxIssues)
        if let raw = params["confidence"] {
            guard let value = Double(String(raw)), value.isFinite, WilsonInterval.confidenceRange.contains(value) else {
                throw APIError.badRequest("must be a level from 0.5 to 0.9999 (0.95 is 95 %)", field: "confidence")
            }
            policy.confidence = value
        }
        if let raw = params["baseline_window"] {
            guard let window = BaselineWindow(rawValue: String(raw)) else {
                throw APIError.badRequest("must be days or sessions", field: "baseline_window")
            }
            policy.baselineWindow = window
        }
        if let problem = policy.problem { throw APIError.badRequest(problem.message, field: problem.field) }
        return policy
    }
}

/// The JSON of a release gate (snake_case; rates and interval ends are 0…1 and left out for "no data", `baseline` is
/// null without one): the API's answer, and what `faultline gate --json` prints (also when it read the data itself).
public struct ReleaseGateOut: Codable, ResponseEncodable {
    struct Rate: Codable {
        var outcome: String
        var crashFree: Int
        var total: Int
        var rate: Double?
        var lower: Double?
        var upper: Double?
        /// Percent, as the project's targets are set.
        var target: Double
        enum CodingKeys: String, CodingKey {
            case outcome, crashFree = "crash_free", total, rate, lower, upper, target
        }
        init(_ check: ReleaseGate.RateCheck) {
            outcome = check.outcome.rawValue
            crashFree = check.crashFree
            total = check.total
            rate = check.rate
            lower = check.interval?.lower
            upper = check.interval?.upper
            target = check.target
        }
    }
    struct Issue: Codable {
        var id: Int64
        var title: String
        var events: Int
        var users: Int
    }
    struct Issues: Codable {
        var outcome: String
        var allowed: Int
        var issues: [Issue]
        init(_ check: ReleaseGate.IssueCheck) {
            outcome = check.outcome.rawValue
            allowed = check.allowed
            issues = check.issues.map { Issue(id: $0.id.rawValue, title: $0.title, events: $0.events, users: $0.users) }
        }
    }
    struct Baseline: Codable {
        var release: String
        var outcome: String
        var window: String
        var windowDays: Int
        var sessions: Int
        var crashedSessions: Int
        var rate: Double?
        var lower: Double?
        var upper: Double?
        enum CodingKeys: String, CodingKey {
            case release, outcome, window, windowDays = "window_days", sessions, crashedSessions = "crashed_sessions"
            case rate, lower, upper
        }
        init(_ check: ReleaseGate.BaselineCheck) {
            release = check.release
            outcome = check.outcome.rawValue
            window = check.window.rawValue
            windowDays = check.windowDays
            sessions = check.health.sessions
            crashedSessions = check.health.crashedSessions
            rate = check.health.crashFreeSessions
            lower = check.interval?.lower
            upper = check.interval?.upper
        }
    }

    public var project: String
    public var release: String
    /// `pass`, `fail` or `not_enough_data`.
    public var verdict: String
    /// What `faultline gate` exits with: 0 pass, 1 fail, 2 not enough data.
    public var exitCode: Int32
    /// The verdict's reason first, then one sentence per check, failures first.
    public var reasons: [String]
    var sessions: Int
    var minSessions: Int
    var confidence: Double
    var crashFreeUsers: Rate
    var crashFreeSessions: Rate
    var newFatalIssues: Issues
    var regressedIssues: Issues
    var baseline: Baseline?

    enum CodingKeys: String, CodingKey {
        case project, release, verdict, exitCode = "exit_code", reasons, sessions, minSessions = "min_sessions"
        case confidence, crashFreeUsers = "crash_free_users", crashFreeSessions = "crash_free_sessions"
        case newFatalIssues = "new_fatal_issues", regressedIssues = "regressed_issues", baseline
    }

    /// The JSON of `gate`, a gate of a release of the project `project` (its slug).
    public init(project: String, gate: ReleaseGate) {
        self.project = project
        release = gate.release
        verdict = gate.verdict.rawValue
        exitCode = gate.verdict.exitCode
        reasons = gate.reasons
        sessions = gate.sessions
        minSessions = gate.policy.minSessions
        confidence = gate.policy.confidence
        crashFreeUsers = Rate(gate.crashFreeUsers)
        crashFreeSessions = Rate(gate.crashFreeSessions)
        newFatalIssues = Issues(gate.newFatalIssues)
        regressedIssues = Issues(gate.regressedIssues)
        baseline = gate.baseline.map(Baseline.init)
    }

    /// Encodes `baseline` as null when there is none (the key is always there, so clients need not guess).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(project, forKey: .project)
        try container.encode(release, forKey: .release)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(exitCode, forKey: .exitCode)
        try container.encode(reasons, forKey: .reasons)
        try container.encode(sessions, forKey: .sessions)
        try container.encode(minSessions, forKey: .minSessions)
        try container.encode(confidence, forKey: .confidence)
        try container.encode(crashFreeUsers, forKey: .crashFreeUsers)
        try container.encode(crashFreeSessions, forKey: .crashFreeSessions)
        try container.encode(newFatalIssues, forKey: .newFatalIssues)
        try container.encode(regressedIssues, forKey: .regressedIssues)
        try container.encode(baseline, forKey: .baseline)
    }
}
