/// A project's stability targets: the crash-free rates, in percent, the team means to stay at or above. Every page
/// that shows a crash-free rate shows it against its target (Crashlytics' "target" lines), so a release at 89.46 %
/// does not look like one at 99.21 %.
///
/// The defaults are the ones teams set most (users 99.5 %, sessions 99.9 %): a project that never set them is still
/// judged, rather than every rate looking fine. They are display targets; the stability alert has its own threshold
/// (`AlertSettings.crashFreeTarget`, off until set), so changing a target never starts a flow of alerts.
public struct CrashFreeTargets: Sendable, Equatable {
    /// Crash-free users target, in percent (0…100).
    public var users: Double
    /// Crash-free sessions target, in percent (0…100).
    public var sessions: Double

    /// The default crash-free users target, in percent.
    public static let defaultUsers = 99.5
    /// The default crash-free sessions target, in percent.
    public static let defaultSessions = 99.9

    /// Targets in percent; see the properties.
    public init(users: Double = Self.defaultUsers, sessions: Double = Self.defaultSessions) {
        self.users = users
        self.sessions = sessions
    }

    /// Why `percent` cannot be a target (a sentence), or nil when it can: a finite number from 0 to 100.
    public static func problem(_ percent: Double) -> String? {
        percent.isFinite && percent >= 0 && percent <= 100 ? nil : "must be a percentage from 0 to 100"
    }

    /// What is wrong with these targets (a snake_case field name and why), or nil when both are usable.
    public var problem: (field: String, message: String)? {
        if let message = Self.problem(users) { return ("crash_free_users_target", message) }
        if let message = Self.problem(sessions) { return ("crash_free_sessions_target", message) }
        return nil
    }
}

/// A crash-free rate judged against its target.
public enum TargetStanding: Sendable, Equatable {
    /// At or above the target.
    case met
    /// Below the target.
    case below
    /// No sessions: nothing to judge (never "met").
    case noData

    /// Judges `rate` (0…1; nil when there is no data) against `target` (percent).
    ///
    /// The rate is judged as pages show it, rounded to hundredths of a percent (`formatRate`), so a page never says
    /// "99.50 %" is below a 99.5 % target: a rate of 99.497 % is shown as 99.50 % and counts as meeting it.
    public static func judge(_ rate: Double?, target: Double) -> TargetStanding {
        guard let rate, rate.isFinite else { return .noData }
        // Both in whole hundredths of a percent, so 99.9 is 9990 exactly and no binary fraction tips the comparison.
        let shown = (rate * 10_000).rounded()
        let goal = (target * 100).rounded()
        return shown < goal ? .below : .met
    }
}
