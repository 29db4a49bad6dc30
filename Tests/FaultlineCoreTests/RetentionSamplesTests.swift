import FaultlineCore
import Testing

/// The samples retention keeps of each issue, and how a project's cap admits them: the rule book.
@Suite struct RetentionSamplesTests {
    @Test func anIssueKeepsItsFirstItsLatestAndTheFirstOfEachReleaseNewestFirst() {
        // Given an issue seen in 1.0 (reports 1–5), 1.1 (6–9) and 2.0 (10–12)
        let spans = [
            ReleaseSpan(release: "1.1", first: 6, latest: 9),
            ReleaseSpan(release: "1.0", first: 1, latest: 5),
            ReleaseSpan(release: "2.0", first: 10, latest: 12),
        ]
        // Then its first (1) and latest (12) are anchors, and 2.0's and 1.1's first reports follow (1.0's is report 1)
        #expect(
            RetentionSamples.choose(spans, limit: 8) == [
                SamplePick(report: 1, tier: .anchor), SamplePick(report: 12, tier: .anchor),
                SamplePick(report: 10, tier: .release), SamplePick(report: 6, tier: .release),
            ])
        // A smaller limit cuts from the end: the oldest releases go first
        #expect(RetentionSamples.choose(spans, limit: 3).map(\.report) == [1, 12, 10])
        #expect(RetentionSamples.choose(spans, limit: 0).isEmpty)
        #expect(RetentionSamples.choose([], limit: 8).isEmpty)
    }

    @Test func aSingleReportIsKeptOnce() {
        #expect(
            RetentionSamples.choose([ReleaseSpan(release: nil, first: 7, latest: 7)], limit: 8) == [
                SamplePick(report: 7, tier: .anchor)
            ])
    }

    @Test func theCapAdmitsEveryIssuesAnchorsBeforeAnyReleaseSample() {
        let a = [
            SamplePick(report: 1, tier: .anchor), SamplePick(report: 2, tier: .anchor),
            SamplePick(report: 3, tier: .release),
        ]
        let b = [SamplePick(report: 10, tier: .anchor), SamplePick(report: 11, tier: .release)]
        // Room for 4: three anchors, then the first release sample in issue order
        #expect(RetentionSamples.admit([a, b], room: 4, evictable: 0).kept.map(\.report) == [1, 2, 10, 3])
        // No room and nothing to evict: nothing
        #expect(RetentionSamples.admit([a, b], room: 0, evictable: 0).kept.isEmpty)
        // No room: anchors take the places of other issues' release samples, release samples never do
        let full = RetentionSamples.admit([a, b], room: 0, evictable: 2)
        #expect(full.kept.map(\.report) == [1, 2])
        #expect(full.evicted == 2)
        #expect(RetentionSamples.admit([a, b], room: -5, evictable: 10).kept.map(\.report) == [1, 2, 10])
    }

    @Test func aPolicyIsBoundedAndNoneKeepsNothing() {
        #expect(RetentionSamplePolicy().perIssue == 8)
        #expect(RetentionSamplePolicy().perProject == 2_000)
        #expect(RetentionSamplePolicy().keepsSamples)
        #expect(!RetentionSamplePolicy.none.keepsSamples)
        #expect(!RetentionSamplePolicy(perIssue: 3, perProject: 0).keepsSamples)
        #expect(
            RetentionSamplePolicy(perIssue: -1, perProject: .max)
                == RetentionSamplePolicy(perIssue: 0, perProject: 1_000_000))
    }

    @Test func aPassThatOnlyKeptSamplesIsNotEmpty() {
        #expect(!PruneResult(kept: 1).isEmpty)
        #expect(PruneResult().isEmpty)
    }
}
