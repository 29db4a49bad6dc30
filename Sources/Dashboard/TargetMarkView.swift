import FaultlineCore

/// A crash-free rate's standing against the project's target, as words with an icon: `▼ below 99.5 % target`,
/// `✓ meets 99.9 % target`, or `99.5 % target` when there is no data to judge.
///
/// The icon is decoration (`aria-hidden` in `target.mustache`); the words carry the meaning, so the mark is read
/// the same without colour, by a screen reader and in a copy-paste. The colour class only repeats what they say.
struct TargetMarkView: Equatable {
    /// `▼`, `✓` or empty.
    var targetIcon: String
    /// `below 99.5 % target`, `meets 99.9 % target`, `99.5 % target`.
    var targetText: String
    /// `target-mark target-below`, `target-mark target-met` or `target-mark target-none`.
    var targetClass: String
    /// Whether the rate is below its target.
    var isBelow: Bool

    /// The mark of `rate` (0…1, nil for no data) against `target` (percent).
    init(rate: Double?, target: Double) {
        let percent = Self.percent(target)
        switch TargetStanding.judge(rate, target: target) {
        case .below:
            targetIcon = "▼"
            targetText = "below \(percent) target"
            targetClass = "target-mark target-below"
            isBelow = true
        case .met:
            targetIcon = "✓"
            targetText = "meets \(percent) target"
            targetClass = "target-mark target-met"
            isBelow = false
        case .noData:
            targetIcon = ""
            targetText = "\(percent) target"
            targetClass = "target-mark target-none"
            isBelow = false
        }
    }

    /// A target as pages write it: `99.5 %`, `100 %`, `99.95 %`.
    static func percent(_ target: Double) -> String { Format.trimmed(target, places: 2) + " %" }

    /// The users and sessions marks of one health figure.
    static func pair(_ health: ReleaseHealth, targets: CrashFreeTargets) -> (users: Self, sessions: Self) {
        (
            Self(rate: health.crashFreeUsers, target: targets.users),
            Self(rate: health.crashFreeSessions, target: targets.sessions)
        )
    }
}

extension TargetMarkView: MustacheFields {
    var mustacheFields: [(String, Any)] {
        [
            ("targetIcon", targetIcon), ("targetText", targetText), ("targetClass", targetClass),
            ("isBelow", isBelow),
        ]
    }
}
