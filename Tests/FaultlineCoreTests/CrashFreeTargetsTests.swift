import FaultlineCore
import Testing

/// A project's crash-free targets: the defaults, what a target may be, and how a rate is judged against one.
@Suite struct CrashFreeTargetsTests {
    @Test func theDefaultsAreTheTargetsTeamsSet() {
        let targets = CrashFreeTargets()
        #expect(targets.users == 99.5)
        #expect(targets.sessions == 99.9)
        #expect(targets.problem == nil)
    }

    @Test func aTargetIsAPercentageFromZeroToAHundred() {
        for fine in [0, 0.01, 50, 99.5, 99.95, 100.0] { #expect(CrashFreeTargets.problem(fine) == nil, "\(fine)") }
        for bad in [-0.01, 100.01, 1000, .infinity, -.infinity, .nan] {
            #expect(CrashFreeTargets.problem(bad) != nil, "\(bad)")
        }
        // The field named is the one that is wrong.
        #expect(CrashFreeTargets(users: 101, sessions: 99).problem?.field == "crash_free_users_target")
        #expect(CrashFreeTargets(users: 99, sessions: -1).problem?.field == "crash_free_sessions_target")
    }

    @Test func aRateBelowItsTargetIsBelowAndNoSessionsIsNoData() {
        // 2.4.0's 89.46 % crash-free users against 99.5 %; 2.3.0's 99.21 % too; a clean 99.95 % meets it.
        #expect(TargetStanding.judge(0.8946, target: 99.5) == .below)
        #expect(TargetStanding.judge(0.9921, target: 99.5) == .below)
        #expect(TargetStanding.judge(0.9995, target: 99.5) == .met)
        #expect(TargetStanding.judge(1, target: 100) == .met)
        #expect(TargetStanding.judge(0, target: 0) == .met)
        // No sessions is never "met".
        #expect(TargetStanding.judge(nil, target: 99.5) == .noData)
        #expect(TargetStanding.judge(.nan, target: 99.5) == .noData)
    }

    @Test func aRateIsJudgedAsPagesShowIt() {
        // 99.497 % is shown as "99.50 %": it meets a 99.5 % target, so no page says 99.50 % is below 99.5 %.
        #expect(formatRate(0.99497) == "99.50 %")
        #expect(TargetStanding.judge(0.99497, target: 99.5) == .met)
        // 99.494 % is shown as "99.49 %": below.
        #expect(formatRate(0.99494) == "99.49 %")
        #expect(TargetStanding.judge(0.99494, target: 99.5) == .below)
        // Exactly on the target meets it, whatever binary fractions 99.9 and 0.999 are.
        #expect(TargetStanding.judge(0.999, target: 99.9) == .met)
        #expect(TargetStanding.judge(1 - 1.0 / 1000, target: 99.9) == .met)
        #expect(TargetStanding.judge(1 - 2.0 / 1000, target: 99.9) == .below)
    }
}
