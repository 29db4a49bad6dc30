import FaultlineCore
import Testing

/// The release gate as a rule book: the Wilson interval against a reference computation, then a synthetic release
/// history with known answers, across the threshold.
@Suite struct ReleaseGateTests {
    // MARK: The interval

    /// Reference values from Python's standard library (`statistics.NormalDist` for z), the standard formula:
    ///
    ///     python3 -c "
    ///     from statistics import NormalDist; from math import sqrt
    ///     def w(s,n,c):
    ///         z=NormalDist().inv_cdf(1-(1-c)/2); p=s/n; d=1+z*z/n; ce=(p+z*z/(2*n))/d
    ///         h=z/d*sqrt(p*(1-p)/n+z*z/(4*n*n)); return (max(0,ce-h),min(1,ce+h))
    ///     for a in [(39,40,.95),(360,400,.95),(0,10,.95),(10,10,.95),(999,1000,.95),(1,1,.95),(9990,10000,.99),
    ///               (7,20,.9)]: print(a, w(*a))"
    static let reference: [(successes: Int, trials: Int, confidence: Double, lower: Double, upper: Double)] = [
        (39, 40, 0.95, 0.8711863103652591, 0.9955731684973186),
        (360, 400, 0.95, 0.8666894236725972, 0.9257007408599657),
        (0, 10, 0.95, 0, 0.27753279986288915),
        (10, 10, 0.95, 0.7224672001371109, 1),
        (999, 1000, 0.95, 0.9943574414020421, 0.9998234536293739),
        (1, 1, 0.95, 0.20654931437723745, 1),
        (9990, 10000, 0.99, 0.997790584698193, 0.999547691667814),
        (7, 20, 0.9, 0.20226004005676104, 0.5334873111515283),
    ]

    @Test func theIntervalMatchesTheReferenceComputation() throws {
        for row in Self.reference {
            let interval = try #require(
                WilsonInterval(successes: row.successes, trials: row.trials, confidence: row.confidence))
            #expect(abs(interval.lower - row.lower) < 1e-9, "\(row) lower \(interval.lower)")
            #expect(abs(interval.upper - row.upper) < 1e-9, "\(row) upper \(interval.upper)")
        }
    }

    @Test func theEndsAreTheRootsOfTheScoreTest() throws {
        // Independently of the closed form: Wilson's ends are the rates π where the score test sits exactly at z,
        // n (p̂ − π)² = z² π (1 − π). Checked for every count of 0…50 out of 50 at 95 %.
        let z = try #require(WilsonInterval.z(confidence: 0.95))
        for successes in 0...50 {
            let interval = try #require(WilsonInterval(successes: successes, trials: 50, confidence: 0.95))
            let p = Double(successes) / 50
            for end in [interval.lower, interval.upper] where end > 0 && end < 1 {
                let score = 50 * (p - end) * (p - end) - z * z * end * (1 - end)
                #expect(abs(score) < 1e-9, "\(successes)/50 at \(end): \(score)")
            }
            #expect(interval.lower <= p && p <= interval.upper)
        }
    }

    @Test func theQuantileMatchesTheReference() throws {
        // python3 -c "from statistics import NormalDist; print(NormalDist().inv_cdf(1-(1-c)/2))" for each c.
        let reference: [(Double, Double)] = [
            (0.9, 1.6448536269514715), (0.95, 1.9599639845400536), (0.99, 2.5758293035489),
            (0.999, 3.2905267314919255), (0.9999, 3.89059188641312),
        ]
        for (confidence, z) in reference {
            let computed = try #require(WilsonInterval.z(confidence: confidence))
            #expect(abs(computed - z) < 1e-9, "\(confidence): \(computed)")
        }
        for bad in [0.49, 1, 0.99999, .nan, .infinity, -0.95] {
            #expect(WilsonInterval.z(confidence: bad) == nil, "\(bad)")
        }
    }

    @Test func countsThatAreNotCountsHaveNoInterval() {
        #expect(WilsonInterval(successes: 0, trials: 0, confidence: 0.95) == nil)
        #expect(WilsonInterval(successes: 5, trials: 4, confidence: 0.95) == nil)
        #expect(WilsonInterval(successes: -1, trials: 4, confidence: 0.95) == nil)
        #expect(WilsonInterval(successes: Int.max, trials: Int.max, confidence: 0.95)?.upper == 1)
    }

    // MARK: The gate on a synthetic release history

    /// `sessions` sessions of which `crashed` crashed, one user each.
    func evidence(
        _ release: String = "2.0.0", sessions: Int, crashed: Int, newFatal: Int = 0, regressed: Int = 0,
        baseline: ReleaseGateEvidence.Baseline? = nil, daysOut: Int = 1
    ) -> ReleaseGateEvidence {
        ReleaseGateEvidence(
            release: release,
            health: ReleaseHealth(sessions: sessions, crashedSessions: crashed, users: sessions, crashedUsers: crashed),
            daysOut: daysOut,
            newFatalIssues: (0..<newFatal).map {
                GateIssue(id: IssueID(Int64(10 + $0)), title: "Fatal error \($0)", events: 3, users: 2)
            },
            regressedIssues: (0..<regressed).map {
                GateIssue(id: IssueID(Int64(50 + $0)), title: "Came back \($0)", events: 1, users: 1)
            },
            baseline: baseline)
    }

    /// Both targets at `target` percent.
    func policy(_ target: Double = 99.5, minSessions: Int = 40) -> ReleaseGatePolicy {
        ReleaseGatePolicy(targets: CrashFreeTargets(users: target, sessions: target), minSessions: minSessions)
    }

    @Test func fortySessionsDoNotFailOnOneCrashFourHundredWithTenPercentDo() {
        // 39 of 40 crash-free: the interval reaches 99.56 %, above 99.5 %: not known to be bad.
        let few = ReleaseGate.decide(evidence(sessions: 40, crashed: 1), policy: policy())
        #expect(few.verdict == .pass)
        #expect(few.crashFreeSessions.outcome == .pass)
        #expect(few.reasons.contains { $0.contains("its optimistic end reaches the 99.5 % target") }, "\(few.reasons)")
        // 360 of 400: even the optimistic end (92.57 %) is below: fail, with the numbers that say why.
        let many = ReleaseGate.decide(evidence(sessions: 400, crashed: 40), policy: policy())
        #expect(many.verdict == .fail)
        #expect(many.verdict.exitCode == 1)
        #expect(many.crashFreeUsers.outcome == .fail && many.crashFreeSessions.outcome == .fail)
        #expect(
            many.reasons.contains {
                $0.hasPrefix(
                    "crash-free sessions 90.00 % (360 of 400 sessions crash-free), 95 % interval 86.67 % – 92.57 %")
                    && $0.hasSuffix("even its optimistic end is below the 99.5 % target")
            }, "\(many.reasons)")
        #expect(many.reasons.first == "fail: 2 checks failed")
        #expect(many.summary == "2 checks failed")
    }

    @Test func acrossTheThreshold() {
        // 1,000 sessions against 99.5 %: 9 crashes leave the optimistic end at 99.53 % (pass), 10 at 99.46 % (fail).
        for crashed in 0...9 {
            #expect(ReleaseGate.decide(evidence(sessions: 1000, crashed: crashed), policy: policy()).verdict == .pass)
        }
        for crashed in [10, 11, 50, 1000] {
            #expect(ReleaseGate.decide(evidence(sessions: 1000, crashed: crashed), policy: policy()).verdict == .fail)
        }
        // The confidence moves the threshold: at 99 % the interval is wider and 10 crashes still pass.
        var wider = policy()
        wider.confidence = 0.99
        #expect(ReleaseGate.decide(evidence(sessions: 1000, crashed: 10), policy: wider).verdict == .pass)
    }

    @Test func fewerSessionsThanTheMinimumIsNotEnoughDataUnlessSomethingFailed() {
        let early = ReleaseGate.decide(evidence(sessions: 40, crashed: 1), policy: policy(minSessions: 100))
        #expect(early.verdict == .notEnoughData)
        #expect(early.verdict.exitCode == 2)
        #expect(early.reasons.first == "not enough data yet: 40 sessions of 2.0.0, the gate needs 100")
        // A canary that crashes on every launch fails on its first 20 sessions: not "wait".
        let broken = ReleaseGate.decide(evidence(sessions: 20, crashed: 20), policy: policy(minSessions: 100))
        #expect(broken.verdict == .fail)
        // No sessions at all is never a pass, even with a minimum of 0.
        let none = ReleaseGate.decide(evidence(sessions: 0, crashed: 0), policy: policy(minSessions: 0))
        #expect(none.verdict == .notEnoughData)
        #expect(none.crashFreeSessions.outcome == .noData && none.crashFreeUsers.outcome == .noData)
        #expect(none.reasons.contains("crash-free sessions: no data (no sessions reported)"))
    }

    @Test func sessionsWithoutUsersJudgeTheSessionsAlone() {
        var health = evidence(sessions: 500, crashed: 0)
        health.health.users = 0
        health.health.crashedUsers = 0
        let gate = ReleaseGate.decide(health, policy: policy())
        #expect(gate.verdict == .pass)
        #expect(gate.crashFreeUsers.outcome == .noData)
    }

    @Test func newFatalAndRegressedIssuesFailUpToWhatThePolicyAllows() {
        let one = ReleaseGate.decide(evidence(sessions: 1000, crashed: 0, newFatal: 1), policy: policy())
        #expect(one.verdict == .fail)
        #expect(
            one.reasons.contains(
                "1 new fatal issue first seen in 2.0.0 (0 allowed): #10 Fatal error 0 (2 users, 3 events)"),
            "\(one.reasons)")
        var lenient = policy()
        lenient.maxNewFatalIssues = 1
        #expect(ReleaseGate.decide(evidence(sessions: 1000, crashed: 0, newFatal: 1), policy: lenient).verdict == .pass)
        #expect(ReleaseGate.decide(evidence(sessions: 1000, crashed: 0, newFatal: 2), policy: lenient).verdict == .fail)

        let back = ReleaseGate.decide(evidence(sessions: 1000, crashed: 0, regressed: 7), policy: policy())
        #expect(back.verdict == .fail)
        #expect(back.regressedIssues.outcome == .fail)
        #expect(
            back.reasons.contains {
                $0.hasPrefix("7 regressed crashes hit by 2.0.0 (0 allowed)") && $0.hasSuffix("; 2 more")
            })
        #expect(back.newFatalIssues.outcome == .pass)
    }

    @Test func theBaselineOverTheSameDaysSinceItsStart() {
        // The baseline 1.9.0: 5,000 sessions with 5 crashes in its first 3 days, then a bad day 4 outside the window.
        let start = DayNumber(rawValue: 20_000)
        let baseline = ReleaseGateEvidence.Baseline(
            release: "1.9.0", firstDay: start,
            days: [
                DailyHealth(day: start, health: ReleaseHealth(sessions: 2000, crashedSessions: 2, users: 900)),
                DailyHealth(day: start.adding(1), health: ReleaseHealth(sessions: 2000, crashedSessions: 2)),
                DailyHealth(day: start.adding(2), health: ReleaseHealth(sessions: 1000, crashedSessions: 1)),
                DailyHealth(day: start.adding(3), health: ReleaseHealth(sessions: 1000, crashedSessions: 900)),
            ])
        // 2.0.0 out for 3 days: 2,000 sessions, 40 crashed (98.00 %, interval up to 98.53 %) against a low target,
        // below the baseline's 99.90 % (interval from 99.77 %): fail on the baseline alone.
        let worse = ReleaseGate.decide(
            evidence(sessions: 2000, crashed: 40, baseline: baseline, daysOut: 3), policy: policy(95))
        #expect(worse.crashFreeSessions.outcome == .pass)
        #expect(worse.baseline?.outcome == .fail)
        #expect(worse.baseline?.health.sessions == 5000)
        #expect(worse.baseline?.health.crashedSessions == 5)
        #expect(worse.baseline?.health.users == 0)  // daily users are not distinct: sessions alone
        #expect(worse.baseline?.windowDays == 3)
        #expect(worse.verdict == .fail)
        #expect(
            worse.reasons.contains {
                $0.hasPrefix("baseline 1.9.0 99.90 % crash-free sessions (5000 sessions in its first 3 days")
                    && $0.hasSuffix("is wholly below it")
            }, "\(worse.reasons)")
        // 4 crashes in 2,000 (99.80 %): the intervals overlap, pass.
        let alike = ReleaseGate.decide(
            evidence(sessions: 2000, crashed: 4, baseline: baseline, daysOut: 3), policy: policy(95))
        #expect(alike.baseline?.outcome == .pass)
        #expect(alike.verdict == .pass)
        // Out for 4 days, the baseline's bad 4th day joins the window and 2.0.0 is no longer worse than it.
        let longer = ReleaseGate.decide(
            evidence(sessions: 2000, crashed: 40, baseline: baseline, daysOut: 4), policy: policy(95))
        #expect(longer.baseline?.health.sessions == 6000)
        #expect(longer.baseline?.outcome == .pass)
        // Matched by sessions: the baseline's first day already has 2,000 sessions.
        var bySessions = policy(95)
        bySessions.baselineWindow = .sessions
        let matched = ReleaseGate.decide(
            evidence(sessions: 2000, crashed: 40, baseline: baseline, daysOut: 9), policy: bySessions)
        #expect(matched.baseline?.health.sessions == 2000)
        #expect(matched.baseline?.windowDays == 1)
        #expect(matched.baseline?.outcome == .fail)
        // 4,500 sessions need the baseline's first three days (whole days).
        let more = ReleaseGate.decide(
            evidence(sessions: 4500, crashed: 90, baseline: baseline, daysOut: 9), policy: bySessions)
        #expect(more.baseline?.health.sessions == 5000)
        #expect(more.baseline?.windowDays == 3)
        // A baseline without sessions in the window compares nothing.
        let empty = ReleaseGateEvidence.Baseline(release: "1.8.0", firstDay: start, days: [])
        let nothing = ReleaseGate.decide(
            evidence(sessions: 2000, crashed: 0, baseline: empty, daysOut: 3), policy: policy(95))
        #expect(nothing.baseline?.outcome == .noData)
        #expect(nothing.verdict == .pass)
    }

    @Test func aPolicyNamesWhatIsWrongWithIt() {
        #expect(ReleaseGatePolicy().problem == nil)
        #expect(ReleaseGatePolicy(minSessions: -1).problem?.field == "min_sessions")
        #expect(ReleaseGatePolicy(confidence: 1).problem?.field == "confidence")
        #expect(ReleaseGatePolicy(confidence: .nan).problem?.field == "confidence")
        #expect(ReleaseGatePolicy(maxNewFatalIssues: -1).problem?.field == "max_new_fatal")
        #expect(ReleaseGatePolicy(maxRegressedIssues: 1_000_000).problem?.field == "max_regressed")
        #expect(ReleaseGatePolicy(targets: CrashFreeTargets(users: 101)).problem?.field == "crash_free_users_target")
    }

    @Test func percentagesAreWrittenShort() {
        #expect(ReleaseGate.percentText(95) == "95")
        #expect(ReleaseGate.percentText(99.9) == "99.9")
        #expect(ReleaseGate.percentText(99.95) == "99.95")
        #expect(ReleaseGate.percentText(99.05) == "99.05")
    }
}
