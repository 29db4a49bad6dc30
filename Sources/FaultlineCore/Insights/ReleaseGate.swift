/// The release gate: whether the evidence so far says a release may be promoted — the decision `faultline gate`,
/// `GET /api/v1/releases/{r}/gate` and the release page share (docs/release-gate.md, decision 0064).
///
/// A release **fails** when any check fails:
/// - crash-free users or sessions: even the Wilson interval's optimistic (upper) end is below the project's target,
///   so a few sessions with one crash are "not known to be bad yet" while many sessions with many crashes are bad;
/// - new fatal issues (crashes first seen in the release) or regressed crashes the release hits: more than the
///   policy allows (none by default; muted issues never count: the team chose to ignore them);
/// - the baseline: the release's crash-free sessions interval lies wholly below the baseline release's over the same
///   window since each one's start.
///
/// Otherwise it has **not enough data** while it has fewer sessions than the policy's minimum (at least 1), and it
/// **passes** once it has them. A failure is never hidden behind "not enough data": a canary that crashes on every
/// launch fails on its first twenty sessions, because even then the interval's optimistic end is far below target.
public struct ReleaseGate: Sendable, Equatable {
    /// What CI does next.
    public enum Verdict: String, Sendable {
        /// Promote: every check passed on enough sessions.
        case pass
        /// Roll back: a check failed.
        case fail
        /// Wait: nothing failed, but the release has fewer sessions than the policy asks for.
        case notEnoughData = "not_enough_data"

        /// `pass`, `fail`, `not enough data yet`: how the reasons start.
        public var label: String {
            switch self {
            case .pass: "pass"
            case .fail: "fail"
            case .notEnoughData: "not enough data yet"
            }
        }

        /// The process exit status of `faultline gate`: 0 pass, 1 fail, 2 not enough data.
        public var exitCode: Int32 {
            switch self {
            case .pass: 0
            case .fail: 1
            case .notEnoughData: 2
            }
        }
    }

    /// How one check came out.
    public enum Outcome: String, Sendable {
        case pass
        case fail
        /// Nothing to judge (no sessions, no users, no baseline): never a failure, never a pass on its own.
        case noData = "no_data"
    }

    /// A crash-free rate judged against its target through its Wilson interval.
    public struct RateCheck: Sendable, Equatable {
        /// Crash-free sessions (or users) and all of them.
        public var crashFree: Int
        public var total: Int
        /// nil without any.
        public var interval: WilsonInterval?
        /// The target, in percent.
        public var target: Double
        public var outcome: Outcome

        /// crashFree ÷ total; nil without any.
        public var rate: Double? { total > 0 ? Double(crashFree) / Double(total) : nil }
    }

    /// Issues that count against the release, and how many the policy allows.
    public struct IssueCheck: Sendable, Equatable {
        public var issues: [GateIssue]
        public var allowed: Int
        public var outcome: Outcome
    }

    /// The release's crash-free sessions against the baseline release's over the same window since each one's start.
    public struct BaselineCheck: Sendable, Equatable {
        public var release: String
        /// How the window was matched, and its length in days from the baseline's first day.
        public var window: BaselineWindow
        public var windowDays: Int
        /// The baseline's sessions in the window.
        public var health: ReleaseHealth
        /// The baseline's crash-free sessions interval (nil without sessions).
        public var interval: WilsonInterval?
        public var outcome: Outcome
    }

    public var release: String
    public var verdict: Verdict
    public var policy: ReleaseGatePolicy
    public var crashFreeUsers: RateCheck
    public var crashFreeSessions: RateCheck
    public var newFatalIssues: IssueCheck
    public var regressedIssues: IssueCheck
    /// nil when there is no baseline release to compare with.
    public var baseline: BaselineCheck?
    /// Why the verdict, in a few words (`2 checks failed`).
    public var summary: String
    /// The verdict and its summary (`fail: 2 checks failed`), then one sentence per check, failures first; what CI
    /// prints.
    public var reasons: [String]

    /// The release's sessions (what the minimum is compared with).
    public var sessions: Int { crashFreeSessions.total }

    /// Decides the gate of `evidence` under `policy`. Pure: the same evidence always gives the same gate.
    public static func decide(_ evidence: ReleaseGateEvidence, policy: ReleaseGatePolicy) -> ReleaseGate {
        let release = evidence.release
        let health = evidence.health
        let confidence = policy.confidence
        let users = rateCheck(
            crashed: health.crashedUsers, total: health.users, target: policy.targets.users, confidence: confidence)
        let sessions = rateCheck(
            crashed: health.crashedSessions, total: health.sessions, target: policy.targets.sessions,
            confidence: confidence)
        let newFatal = issueCheck(evidence.newFatalIssues, allowed: policy.maxNewFatalIssues)
        let regressed = issueCheck(evidence.regressedIssues, allowed: policy.maxRegressedIssues)
        let baseline = evidence.baseline.map {
            baselineCheck($0, evidence: evidence, policy: policy, releaseInterval: sessions.interval)
        }

        var failed: [String] = []
        var passed: [String] = []
        func add(_ outcome: Outcome, _ sentence: String) {
            if outcome == .fail { failed.append(sentence) } else { passed.append(sentence) }
        }
        let level = percentText(confidence * 100)
        add(users.outcome, rateSentence("crash-free users", "users", users, level: level))
        add(sessions.outcome, rateSentence("crash-free sessions", "sessions", sessions, level: level))
        add(
            newFatal.outcome,
            issueSentence(("new fatal issue", "new fatal issues"), "first seen in \(release)", newFatal))
        add(regressed.outcome, issueSentence(("regressed crash", "regressed crashes"), "hit by \(release)", regressed))
        if let baseline {
            add(baseline.outcome, baselineSentence(baseline, release: sessions, level: level))
        } else {
            passed.append("no baseline release to compare with")
        }

        let minimum = max(1, policy.minSessions)
        let verdict: Verdict
        let summary: String
        if !failed.isEmpty {
            verdict = .fail
            summary = "\(failed.count) check\(failed.count == 1 ? "" : "s") failed"
        } else if health.sessions < minimum {
            verdict = .notEnoughData
            summary =
                "\(health.sessions) session\(health.sessions == 1 ? "" : "s") of \(release), the gate needs \(minimum)"
        } else {
            verdict = .pass
            summary = "no check failed on \(health.sessions) sessions"
        }
        return ReleaseGate(
            release: release, verdict: verdict, policy: policy, crashFreeUsers: users,
            crashFreeSessions: sessions, newFatalIssues: newFatal, regressedIssues: regressed, baseline: baseline,
            summary: summary, reasons: ["\(verdict.label): \(summary)"] + failed + passed)
    }

    /// How many of `total` did not crash when `crashed` did: never negative, never more than `total`, whatever the
    /// counts say.
    static func crashFree(crashed: Int, total: Int) -> Int {
        max(0, total - min(max(0, crashed), total))
    }

    static func rateCheck(crashed: Int, total: Int, target: Double, confidence: Double) -> RateCheck {
        let crashFree = crashFree(crashed: crashed, total: total)
        let interval = WilsonInterval(successes: crashFree, trials: total, confidence: confidence)
        let outcome: Outcome
        if let interval {
            // The optimistic end judged as pages show rates (hundredths of a percent), so the gate never fails a
            // release whose upper end a page would print as the target itself.
            outcome = TargetStanding.judge(interval.upper, target: target) == .below ? .fail : .pass
        } else {
            outcome = .noData
        }
        return RateCheck(crashFree: crashFree, total: total, interval: interval, target: target, outcome: outcome)
    }

    static func issueCheck(_ issues: [GateIssue], allowed: Int) -> IssueCheck {
        IssueCheck(issues: issues, allowed: allowed, outcome: issues.count > max(0, allowed) ? .fail : .pass)
    }

    static func baselineCheck(
        _ baseline: ReleaseGateEvidence.Baseline, evidence: ReleaseGateEvidence, policy: ReleaseGatePolicy,
        releaseInterval: WilsonInterval?
    ) -> BaselineCheck {
        let (health, days) = baseline.window(
            policy.baselineWindow, releaseDays: evidence.daysOut, releaseSessions: evidence.health.sessions)
        let interval = WilsonInterval(
            successes: crashFree(crashed: health.crashedSessions, total: health.sessions), trials: health.sessions,
            confidence: policy.confidence)
        let outcome: Outcome
        if let interval, let releaseInterval {
            outcome = releaseInterval.upper < interval.lower ? .fail : .pass
        } else {
            outcome = .noData
        }
        return BaselineCheck(
            release: baseline.release, window: policy.baselineWindow, windowDays: days, health: health,
            interval: interval, outcome: outcome)
    }

    // MARK: Sentences

    static func rateSentence(_ name: String, _ noun: String, _ check: RateCheck, level: String) -> String {
        let target = percentText(check.target) + " %"
        guard let interval = check.interval else {
            return "\(name): no data (no \(noun) reported)"
        }
        let counts = "\(formatRate(check.rate)) (\(check.crashFree) of \(check.total) \(noun) crash-free)"
        let range = "\(level) % interval \(formatRate(interval.lower)) – \(formatRate(interval.upper))"
        switch check.outcome {
        case .fail: return "\(name) \(counts), \(range): even its optimistic end is below the \(target) target"
        default: return "\(name) \(counts), \(range): its optimistic end reaches the \(target) target"
        }
    }

    static func issueSentence(_ noun: (one: String, many: String), _ scope: String, _ check: IssueCheck) -> String {
        let count = check.issues.count
        let allowed = "(\(check.allowed) allowed)"
        if count == 0 { return "no \(noun.many) \(scope) \(allowed)" }
        let shown = check.issues.prefix(5).map { "#\($0.id) \($0.title) (\($0.users) users, \($0.events) events)" }
        let more = count > 5 ? "; \(count - 5) more" : ""
        return
            "\(count) \(count == 1 ? noun.one : noun.many) \(scope) \(allowed): \(shown.joined(separator: "; "))\(more)"
    }

    static func baselineSentence(_ check: BaselineCheck, release: RateCheck, level: String) -> String {
        let window =
            (check.windowDays == 1 ? "its first day" : "its first \(check.windowDays) days")
            + (check.window == .sessions ? " (matched by sessions)" : "")
        guard let interval = check.interval, let releaseInterval = release.interval else {
            return "baseline \(check.release): no sessions in \(window) to compare with"
        }
        let baseline =
            "baseline \(check.release) \(formatRate(check.health.crashFreeSessions)) crash-free sessions "
            + "(\(check.health.sessions) sessions in \(window), \(level) % interval \(formatRate(interval.lower)) – "
            + "\(formatRate(interval.upper)))"
        switch check.outcome {
        case .fail:
            return
                "\(baseline): this release's interval (up to \(formatRate(releaseInterval.upper))) is wholly below it"
        default: return "\(baseline): this release's interval overlaps it or is above it"
        }
    }

    /// `95`, `99.9`, `99.95`: a percentage with at most two decimals and no trailing zeros.
    public static func percentText(_ value: Double) -> String {
        guard value.isFinite else { return "?" }
        let hundredths = Int((value * 100).rounded())
        let whole = hundredths / 100
        let fraction = hundredths % 100
        if fraction == 0 { return "\(whole)" }
        if fraction % 10 == 0 { return "\(whole).\(fraction / 10)" }
        return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
