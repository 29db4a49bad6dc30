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
            SessionState(
                sessionID: SessionID("s1")!, distinctID: "u1", release: "1.0", environment: nil, started: started,
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
            DailyHealth(
                day: last, health: ReleaseHealth(sessions: 100, crashedSessions: 1, users: 50, crashedUsers: 1)),
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
        func window(_ issueSessions: Int, _ issueUsers: Int, _ releaseSessions: Int, _ releaseUsers: Int)
            -> VelocityWindow
        {
            VelocityWindow(
                issue: IssueID(1), release: "2.0", issueSessions: issueSessions, issueUsers: issueUsers,
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
        #expect(
            AlertRules.belowTarget(ReleaseHealth(sessions: 1000, crashedSessions: 10), settings: settings)?[
                "crash_free_sessions_percent"] == 99)
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
        let fresh = IssueSignals.compute(
            firstSeen: now.addingTimeInterval(-6 * 86_400), regressed: false, repeatUsers: 0,
            earlyEvents: 0, timedEvents: 0, now: now)
        #expect(fresh.names == ["fresh"])
        let old = IssueSignals.compute(
            firstSeen: now.addingTimeInterval(-8 * 86_400), regressed: true, repeatUsers: 2,
            earlyEvents: 6, timedEvents: 10, now: now)
        #expect(old.names == ["regressed", "repetitive", "early"])
        let notEarly = IssueSignals.compute(
            firstSeen: now, regressed: false, repeatUsers: 0, earlyEvents: 5, timedEvents: 10, now: now)
        #expect(!notEarly.early)
        #expect(IssueSignals.isEarly(secondsIntoSession: 3))
        #expect(!IssueSignals.isEarly(secondsIntoSession: 11))
    }

    @Test func alertTextIsSlackReadable() {
        let text = AlertRules.text(
            project: "shop", kind: .velocity, title: "SIGSEGV in parse", release: "2.0",
            reason: [
                "issue_sessions": 30, "release_sessions": 1000, "share_percent": 3, "threshold_percent": 1,
                "issue_users": 30,
                "window_minutes": 30,
            ],
            link: "http://x/shop/issues/4.html")
        #expect(
            text
                == "[shop] Trending in 2.0: SIGSEGV in parse — 30 of 1000 sessions (3 % > 1 %), 30 users in 30 min <http://x/shop/issues/4.html>"
        )
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

/// The new-issue cap (issue #39, finding 11): a client that chooses fingerprints (or sends addresses nobody can
/// symbolicate) must not mint one permanent issue and alert per report. The rule book, without SQL.
@Suite struct NewIssueCapTests {
    let fingerprint = Grouping.fingerprint(kind: .crash, source: .client, components: ["chosen-by-the-client-1"])

    func input(
        current: IssueFiling.IssueState? = nil, target: IssueFiling.IssueState? = nil, created: Int, cap: Int = 3,
        overflow: IssueFiling.IssueState? = nil, alert: Bool = true, reportVersion: Int = Grouping.version
    ) -> IssueFiling.Input {
        IssueFiling.Input(
            grouping: GroupingResult(
                fingerprint: fingerprint, source: .client, components: ["x"], title: "x", culprit: nil),
            current: current, reportGroupingVersion: reportVersion, target: target, targetSeenInRelease: true,
            release: "1.0",
            alertOnNewIssue: alert, alertOnRegression: true,
            newIssues: target == nil
                ? IssueFiling.NewIssueBudget(cap: cap, createdInWindow: created, overflow: overflow) : nil)
    }

    func overflow(_ id: Int64, _ status: IssueStatus = .open) -> IssueFiling.IssueState {
        IssueFiling.IssueState(
            id: id, status: status.rawValue, fingerprint: IssueFiling.overflowFingerprint.rawValue, titleRank: 3)
    }

    @Test func underTheCapANewFingerprintMakesAnIssueAndAnnouncesIt() {
        #expect(
            IssueFiling.decide(input(created: 2)) == [
                .createIssue(statusFrom: nil), .move(from: nil, carryHistory: false), .alertNewIssue,
            ])
    }

    @Test func atTheCapTheReportIsHeldInTheOverflowIssueWithOneFoldedAlert() {
        // The first held report of a project makes its overflow issue; later ones join it.
        #expect(
            IssueFiling.decide(input(created: 3))
                == [.holdInOverflow(existing: nil), .move(from: nil, carryHistory: false), .alertNewIssuesHeld])
        #expect(
            IssueFiling.decide(input(created: 4, overflow: overflow(9)))
                == [.holdInOverflow(existing: 9), .move(from: nil, carryHistory: false), .alertNewIssuesHeld])
        // A project that turned new-issue alerts off holds without the folded alert.
        #expect(
            IssueFiling.decide(input(created: 3, overflow: overflow(9), alert: false))
                == [.holdInOverflow(existing: 9), .move(from: nil, carryHistory: false)])
    }

    @Test func theCapNeverKeepsAReportFromAnIssueThatExists() {
        let existing = IssueFiling.IssueState(id: 4, status: .open, groupingVersion: Grouping.version, titleRank: 3)
        #expect(IssueFiling.decide(input(target: existing, created: 99)) == [.move(from: nil, carryHistory: false)])
    }

    @Test func aBudgetNobodyReadCountsAsReached() {
        var unread = input(created: 0)
        unread.newIssues = nil
        #expect(
            IssueFiling.decide(unread) == [
                .holdInOverflow(existing: nil), .move(from: nil, carryHistory: false), .alertNewIssuesHeld,
            ])
    }

    @Test func aHeldReportRegroupedLaterLeavesOnlyForAnIssueOrABudget() {
        let held = overflow(9)
        // Still past the cap: it stays where it is (no action), also when the grouping rules changed.
        #expect(IssueFiling.decide(input(current: held, created: 5, overflow: held)) == [])
        #expect(IssueFiling.decide(input(current: held, created: 5, overflow: held, reportVersion: 1)) == [])
        // Under the cap in a later window: it gets its own issue, quietly (a move is not news).
        #expect(
            IssueFiling.decide(input(current: held, created: 0, reportVersion: 1))
                == [.createIssue(statusFrom: nil), .move(from: 9, carryHistory: false)])
        // Its fingerprint's issue exists: it joins it; the overflow's alert history stays with the overflow.
        let existing = IssueFiling.IssueState(id: 4, status: .open, groupingVersion: Grouping.version, titleRank: 3)
        #expect(
            IssueFiling.decide(input(current: held, target: existing, created: 5, reportVersion: 1)) == [
                .move(from: 9, carryHistory: false)
            ])
    }

    @Test func aReportMovedByLateSymbolsPastTheCapIsHeldQuietly() {
        let old = IssueFiling.IssueState(id: 2, status: .open, groupingVersion: Grouping.version, titleRank: 1)
        #expect(
            IssueFiling.decide(input(current: old, created: 3, overflow: overflow(9)))
                == [.holdInOverflow(existing: 9), .move(from: 2, carryHistory: false)])
    }

    @Test func theOverflowFingerprintIsNoGroupingVersionsAndIsRecognised() {
        #expect(IssueFiling.overflowFingerprint.version == 0)
        #expect(Fingerprint(IssueFiling.overflowFingerprint.rawValue) == IssueFiling.overflowFingerprint)
        #expect(overflow(9).isOverflow)
        #expect(
            !IssueFiling.IssueState(id: 1, status: "open", fingerprint: fingerprint.rawValue, titleRank: 1).isOverflow)
        #expect(IssueFiling.overflowGrouping.fingerprint == IssueFiling.overflowFingerprint)
    }

    @Test func windowsAreFixedAndBounded() {
        let hour: Int64 = 3_600_000
        #expect(IssueFiling.window(containing: 5 * hour + 17, minutes: 60) == 5 * hour..<6 * hour)
        #expect(IssueFiling.window(containing: 5 * hour, minutes: 60) == 5 * hour..<6 * hour)
        #expect(IssueFiling.window(containing: -1, minutes: 60) == -hour..<0)
        // A stored value out of range counts as an hour rather than trapping.
        #expect(IssueFiling.window(containing: 5 * hour + 1, minutes: 0) == 5 * hour..<6 * hour)
        #expect(IssueFiling.window(containing: Int64.max, minutes: Int.max).upperBound == Int64.max)
        #expect(IssueFiling.window(containing: Int64.min, minutes: 60).lowerBound == Int64.min)
    }

    @Test func theFoldedAlertFiresOncePerWindowAndSaysWhy() throws {
        var settings = AlertSettings()
        settings.newIssueCap = 100
        let hour: Int64 = 3_600_000
        func held(at now: Int64) throws -> AlertDraft {
            try #require(
                IssueAlerts.draft(
                    .alertNewIssuesHeld,
                    IssueAlerts.Context(
                        project: ProjectID(1), issue: 9, title: "ignored", release: "1.0", occurredAt: 0, now: now),
                    settings: settings))
        }
        #expect(try held(at: 7 * hour + 1).dedupeKey == held(at: 8 * hour - 1).dedupeKey)
        #expect(try held(at: 7 * hour + 1).dedupeKey != held(at: 8 * hour).dedupeKey)
        let draft = try held(at: 7 * hour)
        #expect(draft.kind == .newIssue)
        #expect(draft.issue == IssueID(9))
        #expect(draft.reason[IssueAlerts.heldCapKey] == 100)
        let text = AlertRules.text(
            project: "shop", kind: draft.kind, title: draft.title, release: nil, reason: draft.reason, link: nil)
        #expect(
            text == "[shop] More than 100 new issues in 60 min: further new issues are held in one issue, not announced"
        )
        // A new issue's own alert is keyed by its issue, as before.
        let single = IssueAlerts.draft(
            .alertNewIssue,
            IssueAlerts.Context(project: ProjectID(1), issue: 5, title: "x", release: nil, occurredAt: 0, now: 0),
            settings: settings)
        #expect(single?.dedupeKey == "new:5")
    }

    @Test func theCapIsAProjectSettingWithBounds() throws {
        let defaults = try JSONDecoder().decode(AlertSettings.self, from: Data("{}".utf8))
        #expect(defaults.newIssueCap == 100)
        #expect(defaults.newIssueWindowMinutes == 60)
        let set = try JSONDecoder().decode(
            AlertSettings.self, from: Data(#"{"new_issue_cap": 5, "new_issue_window_minutes": 1440}"#.utf8))
        #expect(set.newIssueCap == 5 && set.newIssueWindowMinutes == 1440 && set.problem == nil)
        var bad = set
        bad.newIssueCap = 0
        #expect(bad.problem?.field == "new_issue_cap")
        bad.newIssueCap = AlertSettings.maxNewIssueCap + 1
        #expect(bad.problem?.field == "new_issue_cap")
        bad = set
        bad.newIssueWindowMinutes = 0
        #expect(bad.problem?.field == "new_issue_window_minutes")
    }
}
