import FaultlineCore
import Testing

/// The filing plan of a batch, exact to the row and with no database: what both engines write.
@Suite struct FilingPlannerTests {
    /// 2026-01-01 10:00 UTC and the day it falls on.
    static let t0: Int64 = 1_767_261_600_000
    static let day = Int64(t0 / 86_400_000)

    static func grouping(_ hash: String, title: String = "SIGSEGV", rank: Int = Grouping.TitleRank.signal)
        -> GroupingResult
    {
        GroupingResult(
            fingerprint: Fingerprint(version: Grouping.version, hash: hash), source: .stack, components: [hash],
            title: title,
            culprit: "f()", titleRank: rank)
    }

    static func report(
        _ id: Int64, _ g: GroupingResult, at offset: Int64 = 0, release: String? = "1.0", user: String? = nil,
        session: String? = nil, tags: [(key: String, value: String)] = []
    ) -> FilingPlanner.Report {
        FilingPlanner.Report(
            id: id, project: ProjectID(1), kind: "crash", occurredAt: t0 + offset, release: release, user: user,
            sessionID: session,
            issueID: nil, early: nil, groupingVersion: Grouping.version, grouping: g,
            groupingJSON: "{\"h\":\"\(g.fingerprint.hash)\"}",
            tags: tags)
    }

    static func key(_ g: GroupingResult) -> FilingPlanner.IssueKey {
        FilingPlanner.IssueKey(project: 1, fingerprint: g.fingerprint.rawValue)
    }

    static func existing(_ id: Int64, _ g: GroupingResult, status: IssueStatus = .open, releases: Set<String> = [])
        -> FilingPlanner.Issue
    {
        FilingPlanner.Issue(
            state: IssueFiling.IssueState(
                id: id, status: status, groupingVersion: Grouping.version, titleRank: g.titleRank),
            title: g.title,
            span: IssueSpan(firstSeen: t0 - 5_000, lastSeen: t0 - 5_000, firstRelease: "0.9", lastRelease: "0.9"),
            releases: releases)
    }

    static func budget(cap: Int = 100, created: Int = 0) -> [Int64: IssueFiling.NewIssueBudget] {
        [1: IssueFiling.NewIssueBudget(cap: cap, createdInWindow: created, overflow: nil)]
    }

    @Test func newFingerprintsCreateOneIssueEachAndCountEveryRow() throws {
        let a = Self.grouping("aaaa")
        let reports = [
            Self.report(
                1, a, user: "h1:u1", session: "s1", tags: [(key: "os", value: "linux"), (key: "device", value: "x")]),
            Self.report(2, a, at: 2_000, user: "h1:u1", tags: [(key: "os", value: "linux")]),
        ]
        let state = FilingPlanner.State(
            budgets: Self.budget(), sessions: [FilingPlanner.SessionKey(project: 1, session: "s1"): Self.t0 - 3_000])
        let plan = try FilingPlanner.plan(reports, state: state, now: 99)

        #expect(plan.newIssues.map(\.key) == [Self.key(a)])
        #expect(plan.newIssues.first?.occurredAt == Self.t0)
        #expect(
            plan.filed == [1: FilingPlan.Filed(issue: -1, early: true), 2: FilingPlan.Filed(issue: -1, early: nil)])
        let d = plan.deltas
        #expect(d.issues == [-1: IssueRollupDeltas.Counts(events: 2, early: 1, timed: 1)])
        #expect(
            d.releases == [
                IssueRollupDeltas.ReleaseKey(issue: -1, release: ExactText("1.0")):
                    IssueRollupDeltas.ReleaseCounts(events: 2, firstSeen: Self.t0, lastSeen: Self.t0 + 2_000)
            ])
        #expect(d.days == [IssueRollupDeltas.DayKey(issue: -1, day: Self.day): IssueRollupDeltas.DayCounts(events: 2)])
        #expect(d.users == [IssueRollupDeltas.UserKey(issue: -1, user: ExactText("h1:u1")): 2])
        #expect(
            d.releaseUsers == [
                IssueRollupDeltas.ReleaseUserKey(issue: -1, release: ExactText("1.0"), user: ExactText("h1:u1")): 2
            ])
        #expect(d.dayUsers == [IssueRollupDeltas.DayUserKey(issue: -1, day: Self.day, user: ExactText("h1:u1")): 2])
        #expect(
            d.tags == [
                IssueRollupDeltas.TagKey(issue: -1, key: ExactText("device"), value: ExactText("x")): 1,
                IssueRollupDeltas.TagKey(issue: -1, key: ExactText("os"), value: ExactText("linux")): 2,
            ])
        #expect(
            plan.issuesByKey[Self.key(a)]?.span
                == IssueSpan(
                    firstSeen: Self.t0, lastSeen: Self.t0 + 2_000, firstRelease: "1.0", lastRelease: "1.0"))
        // One new-issue alert, its dedupe key the core's, made once the issue has its id.
        let drafts = plan.drafts { $0 == -1 ? 41 : $0 }
        #expect(drafts.map(\.dedupeKey) == ["new:41"])
        #expect(drafts.first?.title == "SIGSEGV")
    }

    @Test func aClosedIssueSeenInAnotherReleaseReopensRetitlesAndAlertsOnce() throws {
        let b = Self.grouping("bbbb")
        let better = Self.grouping("bbbb", title: "Fatal error: index out of range", rank: Grouping.TitleRank.cause)
        let state = FilingPlanner.State(issues: [Self.key(b): Self.existing(7, b, status: .closed, releases: ["0.9"])])
        let plan = try FilingPlanner.plan(
            [Self.report(1, better, release: "2.0"), Self.report(2, b, at: -10_000, release: "2.0")], state: state,
            now: 99)

        #expect(plan.newIssues.isEmpty)
        #expect(plan.filed == [1: FilingPlan.Filed(issue: 7, early: nil), 2: FilingPlan.Filed(issue: 7, early: nil)])
        let issue = try #require(plan.issuesByKey[Self.key(b)])
        #expect(issue.reopened)
        #expect(issue.state.status == .open)
        #expect(issue.retitle?.title == "Fatal error: index out of range")
        // The second report is older than the issue's first event: it becomes the first, with its release.
        #expect(
            issue.span
                == IssueSpan(firstSeen: Self.t0 - 10_000, lastSeen: Self.t0, firstRelease: "2.0", lastRelease: "2.0"))
        #expect(plan.deltas.issues == [7: IssueRollupDeltas.Counts(events: 2)])
        // The second report finds the release seen: no second regression.
        #expect(plan.drafts { $0 }.map(\.dedupeKey) == ["regression:7:2.0"])
        #expect(plan.drafts { $0 }.first?.title == "Fatal error: index out of range")
    }

    @Test func aMutedIssueCountsItsEventsButRaisesNoAlert() throws {
        let m = Self.grouping("mmmm")
        let state = FilingPlanner.State(issues: [Self.key(m): Self.existing(9, m, status: .muted)])
        let plan = try FilingPlanner.plan([Self.report(1, m, release: "3.0")], state: state, now: 99)
        #expect(plan.alerts.isEmpty)
        #expect(plan.deltas.issues == [9: IssueRollupDeltas.Counts(events: 1)])
    }

    @Test func pastTheCapReportsAreHeldInOneOverflowIssueCreatedOnce() throws {
        let a = Self.grouping("aaaa")
        let b = Self.grouping("bbbb")
        let c = Self.grouping("cccc")
        // One issue left in the window: the first fingerprint gets it, the next two are held.
        let plan = try FilingPlanner.plan(
            [Self.report(1, a), Self.report(2, b), Self.report(3, c, release: nil)],
            state: FilingPlanner.State(budgets: Self.budget(cap: 2, created: 1)), now: 99)

        #expect(plan.newIssues.map(\.key) == [Self.key(a), .overflow(project: 1)])
        #expect(plan.newIssues.last?.title == IssueFiling.overflowGrouping.title)
        #expect(plan.filed.mapValues(\.issue) == [1: -1, 2: -2, 3: -2])
        #expect(
            plan.deltas.issues == [-1: IssueRollupDeltas.Counts(events: 1), -2: IssueRollupDeltas.Counts(events: 2)])
        #expect(plan.deltas.releases[IssueRollupDeltas.ReleaseKey(issue: -2, release: ExactText(""))]?.events == 1)
        #expect(plan.issuesByKey[.overflow(project: 1)]?.span.lastRelease == "1.0")
        // A new-issue alert, then the window's folded alert (its dedupe key fires once per window).
        let kinds = plan.alerts.map(\.action)
        #expect(kinds == [.alertNewIssue, .alertNewIssuesHeld, .alertNewIssuesHeld])
        let keys = plan.drafts { -$0 }.map(\.dedupeKey)
        #expect(keys[0] == "new:1")
        #expect(keys[1] == keys[2])
    }

    @Test func aNewIssueIsMarkedAHangAsItsFirstReportWasButTheOverflowIssueNever() throws {
        let (a, b, c) = (Self.grouping("aaaa"), Self.grouping("bbbb"), Self.grouping("cccc"))
        var hang = Self.report(1, a)
        hang.hang = true
        var held = Self.report(3, c)
        held.hang = true
        // One issue left in the window: the hang gets it; a second hang is held in the overflow issue.
        let plan = try FilingPlanner.plan(
            [hang, Self.report(2, a), held, Self.report(4, b)],
            state: FilingPlanner.State(budgets: Self.budget(cap: 2, created: 1)), now: 99)
        #expect(plan.newIssues.map(\.key) == [Self.key(a), .overflow(project: 1)])
        #expect(plan.newIssues.map(\.hang) == [true, false])
    }

    @Test func withoutABudgetANewFingerprintIsHeldNeverLetThrough() throws {
        let plan = try FilingPlanner.plan(
            [Self.report(1, Self.grouping("aaaa"))], state: FilingPlanner.State(), now: 99)
        #expect(plan.newIssues.map(\.key) == [.overflow(project: 1)])
    }

    @Test func aReportFiledBeforeIsRefused() {
        var moved = Self.report(1, Self.grouping("aaaa"))
        moved.issueID = 3
        #expect(throws: FilingPlanner.Refusal.self) {
            try FilingPlanner.plan([moved], state: FilingPlanner.State(), now: 99)
        }
    }

    @Test func releasesAndUsersAreKeyedByteForByte() throws {
        let a = Self.grouping("aaaa")
        // "é" precomposed and decomposed: one key to Swift's String equality, two rows to either database.
        let plan = try FilingPlanner.plan(
            [
                Self.report(1, a, release: "caf\u{e9}", user: "h1:\u{e9}"),
                Self.report(2, a, release: "cafe\u{301}", user: "h1:e\u{301}"),
            ],
            state: FilingPlanner.State(budgets: Self.budget()), now: 99)
        #expect(plan.deltas.releases.count == 2)
        #expect(plan.deltas.users.count == 2)
    }

    @Test func needsListEachIssueProjectReleaseAndSessionOnce() {
        let a = Self.grouping("aaaa")
        let reports = [
            Self.report(1, a, session: "s"), Self.report(2, a, release: "2.0", session: "s"),
            Self.report(3, Self.grouping("bbbb")),
        ]
        let needs = FilingPlanner.Needs(reports)
        #expect(needs.keys == [Self.key(a), Self.key(Self.grouping("bbbb"))])
        #expect(needs.releases == ["1.0", "2.0"])
        #expect(needs.projects == [1])
        #expect(needs.sessions == [FilingPlanner.SessionKey(project: 1, session: "s")])
        #expect(needs.creating(given: [Self.key(a): Self.existing(4, a)]) == [1: 1])
    }
}
