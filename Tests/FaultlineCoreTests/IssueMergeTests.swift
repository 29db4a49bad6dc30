import FaultlineCore
import Testing

/// Merge and unmerge as pure rules (`IssueMerge`) and the alias lookup in the filing plan (`FilingPlanner`): what both
/// engines apply, without a database.
@Suite struct IssueMergeTests {
    typealias P = FilingPlannerTests

    static func candidate(_ id: Int64, project: Int64 = 1, fingerprint: String? = nil) -> IssueMerge.Candidate {
        IssueMerge.Candidate(
            id: id, project: project, fingerprint: fingerprint ?? "v2:\(id)", events: 1, earlyEvents: 0,
            timedEvents: 0, span: IssueSpan(firstSeen: 10, lastSeen: 20, firstRelease: "1.0", lastRelease: "1.0"))
    }

    @Test func aMergeIsCheckedBeforeAnythingIsWritten() throws {
        let found: [Int64: IssueMerge.Candidate] = [
            1: Self.candidate(1), 2: Self.candidate(2), 3: Self.candidate(3, project: 2),
        ]
        func refusal(_ others: [Int64], into survivor: Int64, project: Int64?) -> IssueMergeError? {
            do {
                _ = try IssueMerge.check(
                    survivor: IssueID(survivor), others: others.map { IssueID($0) }, found: found,
                    project: project.map { ProjectID($0) })
                return nil
            } catch let error as IssueMergeError {
                return error
            } catch { return nil }
        }
        #expect(refusal([2, 2], into: 1, project: 1) == nil)
        let (kept, merged) = try IssueMerge.check(
            survivor: IssueID(1), others: [IssueID(2), IssueID(2)], found: found, project: nil)
        #expect(kept.id == 1 && merged.map(\.id) == [2])
        #expect(refusal([], into: 1, project: 1) == .nothingToMerge)
        #expect(refusal([1], into: 1, project: 1) == .intoItself(IssueID(1)))
        #expect(refusal([9], into: 1, project: 1) == .noSuchIssue(IssueID(9)))
        // Another project's issue: unseen by the project's token, named for the admin.
        #expect(refusal([3], into: 1, project: 1) == .noSuchIssue(IssueID(3)))
        #expect(refusal([3], into: 1, project: nil) == .otherProject(IssueID(3)))
        #expect(refusal([2], into: 1, project: 2) == .noSuchIssue(IssueID(1)))
        let overflow = Self.candidate(4, fingerprint: IssueFiling.overflowFingerprint.rawValue)
        var withOverflow = found
        withOverflow[4] = overflow
        #expect(throws: IssueMergeError.overflow(IssueID(4))) {
            try IssueMerge.check(survivor: IssueID(1), others: [IssueID(4)], found: withOverflow, project: ProjectID(1))
        }
        #expect(throws: IssueMergeError.tooMany(101)) {
            try IssueMerge.ids(survivor: IssueID(1), others: (2...102).map { IssueID(Int64($0)) })
        }
    }

    @Test func theSpanOfAMergeIsTheEarliestAndLatestEventsWithTheirReleases() {
        let survivor = IssueSpan(firstSeen: 100, lastSeen: 200, firstRelease: nil, lastRelease: "2.0")
        #expect(
            IssueMerge.span(
                survivor, merging: IssueSpan(firstSeen: 50, lastSeen: 300, firstRelease: "1.0", lastRelease: nil))
                == IssueSpan(firstSeen: 50, lastSeen: 300, firstRelease: "1.0", lastRelease: "2.0"))
        #expect(
            IssueMerge.span(
                survivor, merging: IssueSpan(firstSeen: 150, lastSeen: 160, firstRelease: "1.5", lastRelease: "1.5"))
                == IssueSpan(firstSeen: 100, lastSeen: 200, firstRelease: "1.5", lastRelease: "2.0"))
    }

    @Test func anUnmergeIsCheckedAgainstTheSurvivorsProjectAndAliases() throws {
        let (fingerprint, survivor) = ("v2:bbbb", IssueID(7))
        func refusal(_ row: (project: Int64, aliasOf: Int64?)?, project: Int64?) -> IssueMergeError? {
            do {
                _ = try IssueMerge.checkUnmerge(
                    row, fingerprint: fingerprint, survivor: survivor, project: project.map { ProjectID($0) })
                return nil
            } catch { return error as? IssueMergeError }
        }
        #expect(try IssueMerge.checkUnmerge((1, 7), fingerprint: fingerprint, survivor: survivor, project: nil) == 1)
        #expect(refusal((1, 7), project: 1) == nil)
        #expect(refusal(nil, project: nil) == .noSuchIssue(survivor))
        #expect(refusal((1, 7), project: 2) == .noSuchIssue(survivor), "another project's survivor is not seen")
        #expect(refusal((1, nil), project: 1) == .notMerged(fingerprint: fingerprint, issue: survivor))
        #expect(refusal((1, 8), project: 1) == .notMerged(fingerprint: fingerprint, issue: survivor))
    }

    @Test func theStatementsOfSeveralMergesWidenTheSurvivorsSpanOneAfterTheOther() {
        let s = Self.candidate(1)
        var (o, p) = (Self.candidate(2), Self.candidate(3))
        o.span = IssueSpan(firstSeen: 5, lastSeen: 15, firstRelease: "0.9", lastRelease: "1.0")
        p.span = IssueSpan(firstSeen: 12, lastSeen: 30, firstRelease: "1.0", lastRelease: "1.1")
        let both = IssueMerge.statements(merging: [o, p], into: s, now: 5, by: nil, dialect: .sqlite)
        let first = IssueMerge.span(s.span, merging: o.span)
        let second = IssueMerge.span(first, merging: p.span)
        #expect(second == IssueSpan(firstSeen: 5, lastSeen: 30, firstRelease: "0.9", lastRelease: "1.1"))
        #expect(
            both
                == IssueMerge.statements(merging: o, into: s, span: first, now: 5, by: nil, dialect: .sqlite)
                + IssueMerge.statements(merging: p, into: s, span: second, now: 5, by: nil, dialect: .sqlite))
        // The last update of the survivor carries both ends: the first merge's earlier start, the second's later end.
        #expect(both.contains { $0.values.contains(.text("0.9")) && $0.values.contains(.text("1.1")) })
    }

    @Test func theStatementsAreTheSameTextOnBothEnginesButForPlaceholders() {
        let (s, o) = (Self.candidate(1), Self.candidate(2))
        let sqlite = IssueMerge.statements(merging: o, into: s, span: s.span, now: 5, by: nil, dialect: .sqlite)
        let postgres = IssueMerge.statements(merging: o, into: s, span: s.span, now: 5, by: nil, dialect: .postgres)
        #expect(sqlite.count == postgres.count)
        #expect(sqlite.map(\.values) == postgres.map(\.values))
        for (a, b) in zip(sqlite, postgres) {
            #expect(a.sql.replacingOccurrences(of: "?", with: "$") == b.sql)
        }
        // The merged issue goes last, after everything of it moved.
        #expect(sqlite.last?.sql.hasPrefix("DELETE FROM issues") == true)
    }

    @Test func aMergedFingerprintFilesIntoItsSurvivorWithoutAnAlert() throws {
        let a = P.grouping("aaaa")
        let b = P.grouping("bbbb")
        let state = FilingPlanner.State(
            issues: [P.key(a): P.existing(7, a, status: .muted)], budgets: P.budget(), aliases: [P.key(b): 7])
        let plan = try FilingPlanner.plan([P.report(1, b, user: "h1:u1")], state: state, now: 99)
        #expect(plan.newIssues.isEmpty)
        #expect(plan.filed == [1: FilingPlan.Filed(issue: 7, early: nil)])
        #expect(plan.alerts.isEmpty)
        #expect(plan.deltas.issues[7]?.events == 1)
        #expect(Needs.creating(b, aliases: state.aliases).isEmpty, "an aliased fingerprint creates no issue")
    }

    @Test func aMigrationOutOfASurvivorKeepsItsReportsTogether() throws {
        let old = Grouping.version - 1
        var oldA = P.grouping("aaaa")
        oldA.fingerprint = Fingerprint(version: old, hash: "aaaa")
        let (newA, newB) = (P.grouping("a2a2"), P.grouping("b2b2"))
        var survivor = P.existing(7, oldA)
        survivor.state.groupingVersion = old
        survivor.events = 2
        // Both reports were filed under 7 by the older grouping version.
        func migrating(_ id: Int64, _ g: GroupingResult) -> FilingPlanner.Report {
            var report = P.report(id, g)
            (report.issueID, report.groupingVersion) = (7, old)
            return report
        }
        let (first, second) = (migrating(1, newA), migrating(2, newB))
        let state = FilingPlanner.State(
            issues: [P.key(oldA): survivor], budgets: P.budget(), survivors: [7])
        let plan = try FilingPlanner.plan([first, second], state: state, now: 99)
        // The first rekeys the survivor, the second's new fingerprint becomes an alias of it: no split, no new issue.
        #expect(plan.newIssues.isEmpty)
        #expect(plan.filed.values.map(\.issue) == [7, 7])
        #expect(plan.issuesByKey[P.key(newA)]?.rekey?.fingerprint == newA.fingerprint.rawValue)
        #expect(plan.newAliases == [FilingPlan.NewAlias(key: P.key(newB), issue: 7)])
        #expect(plan.alerts.isEmpty)

        // Without the merge, the same migration splits the issue.
        let split = try FilingPlanner.plan(
            [first, second], state: FilingPlanner.State(issues: [P.key(oldA): survivor], budgets: P.budget()), now: 99)
        #expect(split.newIssues.count == 1)
        #expect(split.newAliases.isEmpty)
    }

    /// What `Needs.creating` counts for a batch of one report of `g`.
    enum Needs {
        static func creating(_ g: GroupingResult, aliases: [FilingPlanner.IssueKey: Int64]) -> [Int64: Int] {
            FilingPlanner.Needs([P.report(1, g)]).creating(given: [:], aliases: aliases)
        }
    }
}
