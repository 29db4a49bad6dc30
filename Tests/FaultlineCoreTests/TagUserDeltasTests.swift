import FaultlineCore
import Testing

/// Users per breakdown value (issue #35: "Devices: iPhone 15 Pro, 41 % of users"): the filing plan's per-user rows of
/// each tag (`IssueRollupDeltas.tagUsers`), which both engines write and from which they move `issue_tags.users`.
@Suite struct TagUserDeltasTests {
    typealias Deltas = IssueRollupDeltas

    static func tagUser(_ issue: Int64, _ key: String, _ value: String, _ user: String) -> Deltas.TagUserKey {
        Deltas.TagUserKey(issue: issue, key: ExactText(key), value: ExactText(value), user: ExactText(user))
    }

    static func contribution(user: String?, device: String, os: String = "iOS 17.1") -> IssueContribution {
        IssueContribution(
            release: "1.0", occurredAt: FilingPlannerTests.t0, user: user,
            tags: [(key: "device", value: device), (key: "os", value: os)], early: nil)
    }

    @Test func eachReportAddsOneToItsUsersRowOfEveryTag() {
        var d = Deltas()
        d.add(Self.contribution(user: "h1:a", device: "iPhone16,1"), to: 7)
        d.add(Self.contribution(user: "h1:a", device: "iPhone16,1"), to: 7)
        d.add(Self.contribution(user: "h1:b", device: "iPhone16,1", os: "iOS 17.2"), to: 7)
        // A report without a user counts its events and no user.
        d.add(Self.contribution(user: nil, device: "Pixel 8"), to: 7)
        #expect(
            d.tagUsers == [
                Self.tagUser(7, "device", "iPhone16,1", "h1:a"): 2, Self.tagUser(7, "os", "iOS 17.1", "h1:a"): 2,
                Self.tagUser(7, "device", "iPhone16,1", "h1:b"): 1, Self.tagUser(7, "os", "iOS 17.2", "h1:b"): 1,
            ])
        #expect(d.tags[Deltas.TagKey(issue: 7, key: ExactText("device"), value: ExactText("Pixel 8"))] == 1)
        #expect(
            Self.tagUser(7, "os", "iOS 17.1", "h1:a").tag
                == Deltas.TagKey(
                    issue: 7, key: ExactText("os"), value: ExactText("iOS 17.1")))
    }

    @Test func aMoveTakesOffExactlyWhatItAddedAndDropForgetsAnIssue() {
        var d = Deltas()
        let c = Self.contribution(user: "h1:a", device: "iPhone16,1")
        // A report filed before moves from issue 3 to a new issue (-1): its rows go down by one there, up by one here.
        d.remove(c, from: 3)
        d.add(c, to: -1)
        #expect(d.tagUsers[Self.tagUser(3, "device", "iPhone16,1", "h1:a")] == -1)
        #expect(d.tagUsers[Self.tagUser(-1, "device", "iPhone16,1", "h1:a")] == 1)
        // Moved back in the same batch: the deltas cancel out, nothing is written twice.
        d.remove(c, from: -1)
        d.add(c, to: 3)
        #expect(d.tagUsers.values.allSatisfy { $0 == 0 })
        d.add(c, to: 5)
        d.drop(issue: 5)
        #expect(d.tagUsers.keys.allSatisfy { $0.issue != 5 })
    }

    @Test func aPlanCountsTheTagUsersOfItsReports() throws {
        let g = FilingPlannerTests.grouping("cccc")
        let tags: [(key: String, value: String)] = [(key: "device", value: "iPhone16,1")]
        let plan = try FilingPlanner.plan(
            [
                FilingPlannerTests.report(1, g, user: "h1:u1", tags: tags),
                FilingPlannerTests.report(2, g, user: "h1:u1", tags: tags),
                FilingPlannerTests.report(3, g, user: "h1:u2", tags: tags),
                FilingPlannerTests.report(4, g, tags: tags),
            ], state: FilingPlanner.State(budgets: FilingPlannerTests.budget()), now: 99)
        #expect(
            plan.deltas.tagUsers == [
                Self.tagUser(-1, "device", "iPhone16,1", "h1:u1"): 2,
                Self.tagUser(-1, "device", "iPhone16,1", "h1:u2"): 1,
            ])
        #expect(
            plan.deltas.tags == [Deltas.TagKey(issue: -1, key: ExactText("device"), value: ExactText("iPhone16,1")): 4])
    }
}
