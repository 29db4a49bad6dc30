import FaultlineCore
import Foundation
import Testing

/// Crash-free math, velocity, regression and signals — the pure rules, with an injected clock.
@Suite struct InsightsRulesTests {
    @Test func crashFreeRatesSayNoDataInsteadOfHundredPercent() {
        let empty = ReleaseHealth()
        #expect(empty.crashFreeSessions == nil)
        #expect(empty.crashFreeUsers == nil)
        #expect(formatRate(empty.crashFreeSessions) == "no data")
        let h = ReleaseHealth(sessions: 625, crashedSessions: 3, users: 200, crashedUsers: 2)
        #expect(h.crashFreeSessions == 1 - 3.0 / 625)
        #expect(h.crashFreeUsers == 0.99)
        #expect(formatRate(h.crashFreeSessions) == "99.52 %")
        #expect(formatRate(1) == "100.00 %")
        #expect(formatRate(0.5) == "50.00 %")
    }

    @Test func sessionContributionCountsOnlyFatalCrashes() {
        let started = Date(timeIntervalSince1970: 86_400 * 20_000 + 10)
        func state(_ status: SessionStatus, errors: Int = 0) -> SessionState {
            SessionState(sessionID: SessionID("s1")!, distinctID: "u1", release: "1.0", environment: nil, started: started,
                         status: status, errors: errors, duration: nil, seq: nil)
        }
        #expect(SessionContribution(state(.crashed)).crashed)
        #expect(!SessionContribution(state(.abnormal)).crashed)
        #expect(SessionContribution(state(.abnormal)).abnormal)
        #expect(SessionContribution(state(.exited, errors: 2)).errored)
        #expect(!SessionContribution(state(.exited, errors: 2)).crashed)
        #expect(SessionContribution(state(.ok)).day == DayNumber(rawValue: 20_000))
    }

    @Test func trendFillsEmptyDaysAndComparesWindows() {
        let last = DayNumber(rawValue: 20_010)
        let series = [
            DailyHealth(day: last, health: ReleaseHealth(sessions: 100, crashedSessions: 1, users: 50, crashedUsers: 1)),
            DailyHealth(day: last.adding(-2), health: ReleaseHealth(sessions: 100, crashedSessions: 3)),
            DailyHealth(day: last.adding(-5), health: ReleaseHealth(sessions: 100, crashedSessions: 10)),  // previous window
        ]
        let trend = HealthTrend.make(series: series, last: last, length: 3)
        #expect(trend.days.map(\.day) == [last.adding(-2), last.adding(-1), last])
        #expect(trend.days[1].health.crashFreeSessions == nil)
        #expect(trend.total.sessions == 200)
        #expect(trend.total.crashedSessions == 4)
        #expect(trend.previous.sessions == 100)
        #expect(trend.crashFreeSessionsChange.map { ($0 * 100).rounded() / 100 } == 8)
    }

    @Test func dayNumbersPrintAsCalendarDates() {
        #expect(DayNumber(rawValue: 0).description == "1970-01-01")
        #expect(DayNumber(Date(timeIntervalSince1970: 1_763_769_600)).description == "2025-11-22")
        #expect(DayNumber(rawValue: 11_016).description == "2000-02-29")
    }

    @Test func velocityFiresOnlyAboveEveryThreshold() {
        let settings = AlertSettings()
        func window(_ issueSessions: Int, _ issueUsers: Int, _ releaseSessions: Int, _ releaseUsers: Int) -> VelocityWindow {
            VelocityWindow(issue: IssueID(1), release: "2.0", issueSessions: issueSessions, issueUsers: issueUsers,
                           releaseSessions: releaseSessions, releaseUsers: releaseUsers)
        }
        // 30 of 1,000 sessions (3 %) with 30 users on a release with 800 users: fires, and says why.
        let reason = AlertRules.velocity(window(30, 30, 1000, 800), settings: settings)
        #expect(reason?["share_percent"] == 3)
        #expect(reason?["issue_users"] == 30)
        #expect(reason?["threshold_percent"] == 1)
        // Steady noise: 5 of 1,000 sessions (0.5 %) — no alert.
        #expect(AlertRules.velocity(window(5, 5, 1000, 800), settings: settings) == nil)
        // Exactly 1 % is not "exceeds".
        #expect(AlertRules.velocity(window(10, 30, 1000, 800), settings: settings) == nil)
        // Enough share but too few users affected.
        #expect(AlertRules.velocity(window(24, 24, 100, 90), settings: settings) == nil)
        // Too few users on the release.
        var lenient = settings
        lenient.velocityMinUsers = 1
        #expect(AlertRules.velocity(window(5, 5, 9, 9), settings: lenient) == nil)
        #expect(AlertRules.velocity(window(5, 5, 12, 10), settings: lenient) != nil)
    }

    @Test func stabilityTargetNeedsEnoughSessions() {
        var settings = AlertSettings()
        #expect(AlertRules.belowTarget(ReleaseHealth(sessions: 1000, crashedSessions: 100), settings: settings) == nil)  // no target
        settings.crashFreeTarget = 99.5
        #expect(AlertRules.belowTarget(ReleaseHealth(sessions: 1000, crashedSessions: 10), settings: settings)?["crash_free_sessions_percent"] == 99)
        #expect(AlertRules.belowTarget(ReleaseHealth(sessions: 1000, crashedSessions: 5), settings: settings) == nil)  // exactly on target
        #expect(AlertRules.belowTarget(ReleaseHealth(sessions: 50, crashedSessions: 10), settings: settings) == nil)  // too few sessions
    }

    @Test func regressionIsAClosedIssueInANewRelease() {
        #expect(AlertRules.regresses(status: .closed, release: "2.0", seenInRelease: false))
        #expect(!AlertRules.regresses(status: .closed, release: "1.0", seenInRelease: true))
        #expect(!AlertRules.regresses(status: .open, release: "2.0", seenInRelease: false))
        #expect(!AlertRules.regresses(status: .muted, release: "2.0", seenInRelease: false))
        #expect(!AlertRules.regresses(status: .closed, release: nil, seenInRelease: false))
    }

    @Test func signalsFollowTheirDefinitions() {
        let now = Date(timeIntervalSince1970: 2_000_000_000)
        let fresh = IssueSignals.compute(firstSeen: now.addingTimeInterval(-6 * 86_400), regressed: false, repeatUsers: 0,
                                         earlyEvents: 0, timedEvents: 0, now: now)
        #expect(fresh.names == ["fresh"])
        let old = IssueSignals.compute(firstSeen: now.addingTimeInterval(-8 * 86_400), regressed: true, repeatUsers: 2,
                                       earlyEvents: 6, timedEvents: 10, now: now)
        #expect(old.names == ["regressed", "repetitive", "early"])
        let notEarly = IssueSignals.compute(firstSeen: now, regressed: false, repeatUsers: 0, earlyEvents: 5, timedEvents: 10, now: now)
        #expect(!notEarly.early)
        #expect(IssueSignals.isEarly(secondsIntoSession: 3))
        #expect(!IssueSignals.isEarly(secondsIntoSession: 11))
    }

    @Test func alertTextIsSlackReadable() {
        let text = AlertRules.text(
            project: "shop", kind: .velocity, title: "SIGSEGV in parse", release: "2.0",
            reason: ["issue_sessions": 30, "release_sessions": 1000, "share_percent": 3, "threshold_percent": 1, "issue_users": 30,
                     "window_minutes": 30],
            link: "http://x/shop/issues/4.html")
        #expect(text == "[shop] Trending in 2.0: SIGSEGV in parse — 30 of 1000 sessions (3 % > 1 %), 30 users in 30 min <http://x/shop/issues/4.html>")
    }

    @Test func settingsDecodeWithDefaultsAndValidate() throws {
        let settings = try JSONDecoder().decode(AlertSettings.self, from: Data(#"{"crash_free_target": 99.5}"#.utf8))
        #expect(settings.crashFreeTarget == 99.5)
        #expect(settings.velocityPercent == 1)
        #expect(settings.problem == nil)
        var bad = settings
        bad.webhookURL = "ftp://x"
        #expect(bad.problem?.field == "webhook_url")
    }
}
