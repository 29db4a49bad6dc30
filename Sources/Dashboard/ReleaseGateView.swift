import FaultlineCore

/// The release gate as a release page shows it: the verdict in words (the colour class only repeats them), the
/// reasons, and the command CI runs to ask the same question.
///
/// The page judges with `faultline gate`'s defaults (``ReleaseGatePolicy``'s, with the project's targets) against
/// the release that came out before it; a pipeline's own `--min-sessions` or `--baseline` may answer differently, and
/// the page says so.
struct ReleaseGateView: Equatable {
    /// `Pass`, `Fail` or `Not enough data yet`.
    var verdictText: String
    /// `gate-verdict gate-pass`, `gate-verdict gate-fail` or `gate-verdict gate-wait`.
    var verdictClass: String
    /// Why the verdict, in a few words (`2 checks failed`).
    var summary: String
    /// One sentence per check, failures first.
    var reasons: [String]
    /// `faultline gate --project shop --release 2.4.0`.
    var command: String
    /// `100 sessions, 95 % confidence, no new fatal issues or regressed crashes allowed`.
    var policyText: String

    init(_ gate: ReleaseGate, slug: ProjectSlug) {
        switch gate.verdict {
        case .pass:
            verdictText = "Pass"
            verdictClass = "gate-verdict gate-pass"
        case .fail:
            verdictText = "Fail"
            verdictClass = "gate-verdict gate-fail"
        case .notEnoughData:
            verdictText = "Not enough data yet"
            verdictClass = "gate-verdict gate-wait"
        }
        summary = gate.summary
        reasons = Array(gate.reasons.dropFirst())
        let release = gate.release.contains(where: { $0 == " " || $0 == "'" }) ? "'\(gate.release)'" : gate.release
        command = "faultline gate --project \(slug.rawValue) --release \(release)"
        let policy = gate.policy
        policyText =
            "at least \(policy.minSessions) sessions, \(ReleaseGate.percentText(policy.confidence * 100)) % confidence, "
            + "\(policy.maxNewFatalIssues) new fatal issues and \(policy.maxRegressedIssues) regressed crashes allowed"
    }
}
