import FaultlineCore
import Testing

/// The filing plan of reports filed before: moves after late symbols and grouping-version migrations, exact to the
/// row and with no database (what `Grouper.file` applied one report at a time, both engines now write from the plan).
@Suite struct FilingPlannerMoveTests {
    typealias T = FilingPlannerTests
    static let t0 = FilingPlannerTests.t0
    static let day = FilingPlannerTests.day

    /// A report filed before under `issue`, with the grouping version it was filed with.
    static func filed(
        _ id: Int64, _ g: GroupingResult, under issue: Int64, version: Int = Grouping.version, at offset: Int64 = 0,
        release: String? = "1.0", user: String? = "h1:u1", early: Bool? = true,
        tags: [(key: String, value: String)] = [(key: "os", value: "linux")]
    ) -> FilingPlanner.Report {
        var report = T.report(id, g, at: offset, release: release, user: user, tags: tags)
        report.issueID = issue
        report.groupingVersion = version
        report.early = early
        return report
    }

    /// `report`, a hang.
    static func hang(_ report: FilingPlanner.Report) -> FilingPlanner.Report {
        var report = report
        report.hang = true
        return report
    }

    /// A stored issue of `events` events, keyed by `g` (or an older grouping version's fingerprint of it).
    static func stored(
        _ id: Int64, _ g: GroupingResult, version: Int = Grouping.version, events: Int64, status: IssueStatus = .open
    ) -> (FilingPlanner.IssueKey, FilingPlanner.Issue) {
        let fingerprint = Fingerprint(version: version, hash: g.fingerprint.hash)
        var issue = FilingPlanner.Issue(
            state: IssueFiling.IssueState(id: id, status: status, groupingVersion: version, titleRank: g.titleRank),
            title: g.title,
            span: IssueSpan(firstSeen: t0 - 5_000, lastSeen: t0 - 5_000, firstRelease: "0.9", lastRelease: "0.9"),
            events: events)
        if status != .open { (issue.regressed, issue.statusChangedAt, issue.statusChangedBy) = (true, 42, "ann") }
        return (FilingPlanner.IssueKey(project: 1, fingerprint: fingerprint.rawValue), issue)
    }

    static func state(_ issues: [(FilingPlanner.IssueKey, FilingPlanner.Issue)]) -> FilingPlanner.State {
        FilingPlanner.State(issues: Dictionary(uniqueKeysWithValues: issues), budgets: T.budget())
    }

    @Test func aMoveTakesTheReportOffItsOldIssueByNegativeDeltasAndAddsItToTheNew() throws {
        let (a, b) = (T.grouping("aaaa"), T.grouping("bbbb"))
        let plan = try FilingPlanner.plan(
            [Self.filed(1, b, under: 7)],
            state: Self.state([Self.stored(7, a, events: 3), Self.stored(8, b, events: 1)]),
            now: 99)
        let d = plan.deltas
        #expect(d.issues[7] == IssueRollupDeltas.Counts(events: -1, early: -1, timed: -1))
        #expect(d.issues[8] == IssueRollupDeltas.Counts(events: 1, early: 1, timed: 1))
        let old = IssueRollupDeltas.ReleaseKey(issue: 7, release: ExactText("1.0"))
        #expect(d.releases[old] == IssueRollupDeltas.ReleaseCounts(events: -1, firstSeen: .max, lastSeen: .min))
        #expect(d.days[IssueRollupDeltas.DayKey(issue: 7, day: Self.day)] == IssueRollupDeltas.DayCounts(events: -1))
        #expect(d.users[IssueRollupDeltas.UserKey(issue: 7, user: ExactText("h1:u1"))] == -1)
        #expect(d.users[IssueRollupDeltas.UserKey(issue: 8, user: ExactText("h1:u1"))] == 1)
        #expect(d.tags[IssueRollupDeltas.TagKey(issue: 7, key: ExactText("os"), value: ExactText("linux"))] == -1)
        #expect(plan.deletions.isEmpty && plan.newIssues.isEmpty && plan.alerts.isEmpty)
        // The stored early flag moves with the report; the old issue keeps its first and last events.
        #expect(plan.filed[1] == FilingPlan.Filed(issue: 8, early: true))
        #expect(plan.issuesByKey[T.key(a)]?.events == 2)
        #expect(plan.issuesByKey[T.key(a)]?.span == Self.stored(7, a, events: 3).1.span)
        #expect(plan.issuesByKey[T.key(b)]?.span.lastSeen == Self.t0)
    }

    @Test func anIssueLeftWithNoEventsIsDeletedWithItsDeltasAndItsFingerprintCreatedAgainAfter() throws {
        let (a, b) = (T.grouping("aaaa"), T.grouping("bbbb"))
        // Report 1 (the only event of issue 7, fingerprint a) moves to a new fingerprint b; report 2 is new, of a.
        let plan = try FilingPlanner.plan(
            [Self.filed(1, b, under: 7), T.report(2, a, at: 1_000)], state: Self.state([Self.stored(7, a, events: 1)]),
            now: 99)
        #expect(plan.newIssues.map(\.key) == [T.key(b), T.key(a)])
        #expect(plan.deletions == [FilingPlan.Deletion(issue: 7, alertsTo: nil, afterNewIssues: 1)])
        #expect(plan.deltas.issues[7] == nil)
        #expect(!plan.deltas.releases.keys.contains { $0.issue == 7 })
        #expect(plan.filed[1]?.issue == -1 && plan.filed[2]?.issue == -2)
        // The recreated issue is new again: announced, as its first one was. The moved report announces nothing.
        #expect(plan.alerts.map(\.issue) == [-2])
        #expect(plan.issuesByKey[T.key(a)]?.state.id == -2)
    }

    @Test func aMigrationRekeysTheIssueThenSplitsWithItsStatusAndCarriesHistoryWhenItEmpties() throws {
        let (a, b, c) = (T.grouping("aaaa"), T.grouping("bbbb"), T.grouping("cccc", title: "better", rank: 9))
        let old = Grouping.version - 1
        let plan = try FilingPlanner.plan(
            [
                // Issue 7 (old version, 2 events, closed): its first report rekeys it to a, the second splits off to b.
                // (Report 1 is a hang: the rekeyed issue becomes one.)
                Self.hang(Self.filed(1, a, under: 7, version: old)),
                Self.filed(2, b, under: 7, version: old, release: "2.0"),
                // Issue 9 (old version, 1 event) has a report whose new fingerprint c is issue 10's: it empties, and its
                // alert history follows the event.
                Self.filed(3, c, under: 9, version: old),
            ],
            state: Self.state([
                Self.stored(7, a, version: old, events: 2, status: .closed),
                Self.stored(9, T.grouping("dddd"), version: old, events: 1),
                Self.stored(10, c, events: 4),
            ]), now: 99)
        let rekeyed = try #require(plan.issuesByKey[T.key(a)])
        #expect(rekeyed.state.id == 7 && rekeyed.rekey?.fingerprint == T.key(a).fingerprint && rekeyed.events == 1)
        #expect(rekeyed.rekey?.hang == true, "the report that rekeys it decides its category, as its kind")
        #expect(plan.newIssues.count == 1)
        let split = try #require(plan.newIssues.first)
        #expect(split.key == T.key(b) && split.status == .closed && split.regressed && split.statusChangedBy == "ann")
        #expect(!split.hang)
        #expect(plan.filed[1]?.issue == 7 && plan.filed[2]?.issue == -1 && plan.filed[3]?.issue == 10)
        #expect(plan.deltas.issues[7]?.events == -1 && plan.deltas.issues[-1]?.events == 1)
        #expect(plan.deletions == [FilingPlan.Deletion(issue: 9, alertsTo: 10, afterNewIssues: 1)])
        // A better title comes with the move; a migration announces nothing, and reopens nothing.
        #expect(plan.issuesByKey[T.key(c)]?.retitle == nil && plan.alerts.isEmpty)
        #expect(plan.issuesByKey[T.key(c)]?.events == 5)
    }

    @Test func aMoveIntoAClosedIssueFromANewReleaseRegressesIt() throws {
        let (a, b) = (T.grouping("aaaa"), T.grouping("bbbb"))
        let plan = try FilingPlanner.plan(
            [Self.filed(1, b, under: 7, release: "3.0")],
            state: Self.state([Self.stored(7, a, events: 2), Self.stored(8, b, events: 1, status: .closed)]), now: 99)
        let b8 = try #require(plan.issuesByKey[T.key(b)])
        #expect(b8.reopened && b8.state.status == .open && b8.statusChangedAt == 99 && b8.statusChangedBy == nil)
        #expect(plan.alerts.map(\.action) == [.alertRegression])
    }

    /// Issue 8 (closed) has one event in 1.0 and one in 2.0. Report 1, its 1.0 event, moves to a new issue b; report 2,
    /// new, of 8's fingerprint in 1.0, then comes to an issue no longer seen in 1.0: filed one at a time, it regresses.
    @Test func aMoveThatEmptiesAClosedIssuesReleaseLetsALaterReportOfThatReleaseRegressIt() throws {
        let (a, b) = (T.grouping("aaaa"), T.grouping("bbbb"))
        var (key, closed) = Self.stored(8, a, events: 2, status: .closed)
        (closed.releases, closed.releaseEvents) = (["1.0", "2.0"], ["1.0": 1, "2.0": 1])
        let plan = try FilingPlanner.plan(
            [Self.filed(1, b, under: 8), T.report(2, a, at: 1_000)], state: Self.state([(key, closed)]), now: 99)
        let a8 = try #require(plan.issuesByKey[key])
        #expect(a8.reopened && a8.state.status == .open && a8.regressed)
        // The moved report announces nothing (its first issue was announced); the regression is announced.
        #expect(plan.alerts.map(\.action) == [.alertRegression])
        #expect(plan.alerts.first?.issue == 8 && plan.alerts.first?.release == "1.0")
        // Seen in 2.0 still: a report of 2.0 would not have regressed it.
        #expect(a8.releases == ["1.0", "2.0"] && a8.releaseEvents == ["1.0": 1, "2.0": 1])
    }

    @Test func aMoveThatTakesARowsLastEventAndALaterReportRefillingItRestartsTheRowsBounds() throws {
        let (a, b) = (T.grouping("aaaa"), T.grouping("bbbb"))
        let row = IssueRollupDeltas.ReleaseKey(issue: 7, release: ExactText("1.0"))
        for (events, restarted) in [(Int64(1), true), (2, false)] {
            var (key, issue) = Self.stored(7, a, events: 3)
            issue.releaseEvents = ["1.0": events]
            let plan = try FilingPlanner.plan(
                [Self.filed(1, b, under: 7, at: -60_000), T.report(2, a, at: 2_000)],
                state: Self.state([(key, issue)]), now: 99)
            // Emptied, the row's first and last event are report 2's alone; not emptied, the stored ones widen by it.
            #expect(
                plan.deltas.releases[row]
                    == IssueRollupDeltas.ReleaseCounts(
                        events: 0, firstSeen: Self.t0 + 2_000, lastSeen: Self.t0 + 2_000, restarted: restarted))
            #expect(plan.deltas.releases[row]?.replacesBounds == restarted)
            #expect(plan.issuesByKey[key]?.releaseEvents == ["1.0": events])
        }
        // Emptied and not refilled: no bounds to replace (the engine deletes the row at 0).
        var (key, issue) = Self.stored(7, a, events: 3)
        issue.releaseEvents = ["1.0": 1]
        let plan = try FilingPlanner.plan([Self.filed(1, b, under: 7)], state: Self.state([(key, issue)]), now: 99)
        #expect(plan.deltas.releases[row]?.events == -1 && plan.deltas.releases[row]?.replacesBounds == false)
    }

    @Test func needsReadTheIssuesMovedOutOfAndABudgetForTheirProjects() {
        let a = T.grouping("aaaa")
        let needs = FilingPlanner.Needs([Self.filed(1, a, under: 7), Self.filed(2, a, under: 7), T.report(3, a)])
        #expect(needs.current == [7])
        #expect(needs.moving == [1: 1])
        #expect(needs.creating(given: [T.key(a): Self.stored(8, a, events: 1).1]) == [1: 1])
    }
}
