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
        command = "faultline gate --project \(slug.rawValue) --release \(Self.shellWord(gate.release))"
        let policy = gate.policy
        policyText =
            "at least \(policy.minSessions) sessions, \(ReleaseGate.percentText(policy.confidence * 100)) % confidence, "
            + "\(policy.maxNewFatalIssues) new fatal issues and \(policy.maxRegressedIssues) regressed crashes allowed"
    }

    /// `text` as one word for a POSIX shell: as it is when it holds only characters no shell treats specially, else
    /// in single quotes (a `'` inside as `'\''`). A release name comes from the apps' reports, so a command people
    /// copy from the page must never run what a hostile name (`1.0;rm -rf ~`) spells.
    static func shellWord(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: "+"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: ","):
                    true
                default: false
                }
            }
        if plain { return text }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
