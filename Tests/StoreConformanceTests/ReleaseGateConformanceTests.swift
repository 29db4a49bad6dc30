import FaultlineCore
import Foundation
import TestSupport
import Testing

/// The release gate's evidence (`InsightsReader.gateEvidence`) read by each engine from data made by the real stores:
/// the release's sessions, its new crash issues and the regressed ones it hit (muted ones left out), and the baseline's
/// daily sessions.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct ReleaseGateConformanceTests {
    let day0 = StoreRows.day0

    func sessions(_ db: Stores, _ p: Project, _ updates: [(String, String, Double, SessionStatus)]) async throws {
        _ = try await db.ingest.commit([
            .sessions(
                SessionBatch(
                    project: p.id, receivedAt: Date(),
                    updates: updates.map { id, release, offset, status in
                        SessionUpdate(
                            sessionID: SessionID(id)!, distinctID: "user-\(id)", release: release,
                            started: Date(timeIntervalSince1970: day0 + offset), status: status)
                    }))
        ])
    }

    @Test(arguments: Engine.allCases) func theEvidenceOfAReleaseAndItsBaseline(_ engine: Engine) async throws {
        try await withStores(engine) { db in
            let p = try await createProject(db)
            // Given 1.0 with 4 sessions (1 crashed) on day 0, and 2.0 with 3 sessions (1 crashed) on day 1
            try await sessions(
                db, p,
                [
                    ("a1", "1.0", 10, .exited), ("a2", "1.0", 20, .exited), ("a3", "1.0", 30, .exited),
                    ("a4", "1.0", 40, .crashed), ("b1", "2.0", 86_400 + 10, .exited),
                    ("b2", "2.0", 86_400 + 20, .exited), ("b3", "2.0", 86_400 + 30, .crashed),
                ])
            // …an issue of 1.0, closed, that 2.0 brings back (regressed); one new in 2.0; one new in 2.0 but muted.
            let prepared = StoreRows.reports([
                (1, "1.0", "u1", 50, nil), (2, "2.0", "u2", 86_400 + 40, nil), (3, "2.0", "u3", 86_400 + 50, nil),
                (4, "2.0", "u4", 86_400 + 60, nil),
            ])
            _ = try await db.ingest.commit([
                .reports(ReportBatch(project: p.id, receivedAt: Date(), payload: payload, reports: prepared))
            ])
            func group(_ n: Int, _ site: String) async throws -> IssueID? {
                try await db.symbolication.save(
                    SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                    grouping: StoreRows.grouping(site), reportID: try await db.reportID(eventID(n)), at: Date())
            }
            let old = try #require(try await group(1, "parse()"))
            _ = try await db.insights.setStatus(.closed, issue: old, project: p.id, at: Date())
            _ = try await group(2, "parse()")
            let fresh = try #require(try await group(3, "render()"))
            let muted = try #require(try await group(4, "draw()"))
            _ = try await db.insights.setStatus(.muted, issue: muted, project: p.id, at: Date())

            // When the gate's evidence of 2.0 is read on day 2
            let now = Date(timeIntervalSince1970: day0 + 2 * 86_400 + 60)
            let evidence = try await db.insights.gateEvidence(project: p.id, release: "2.0", baseline: nil, now: now)

            // Then it holds 2.0's sessions and users, the new and the regressed crash, and 1.0's days as the baseline
            #expect(evidence.health.sessions == 3 && evidence.health.crashedSessions == 1)
            #expect(evidence.health.users == 3 && evidence.health.crashedUsers == 1)
            #expect(evidence.newFatalIssues.map(\.id) == [fresh])
            #expect(evidence.regressedIssues.map(\.id) == [old])
            #expect(evidence.regressedIssues.first?.events == 1)  // its events in 2.0
            let baseline = try #require(evidence.baseline)
            #expect(baseline.release == "1.0")
            #expect(baseline.days.map(\.health.sessions).reduce(0, +) == 4)
            #expect(baseline.days.map(\.health.crashedSessions).reduce(0, +) == 1)

            // And the gate decides on it: the new and the regressed crash fail it.
            let gate = ReleaseGate.decide(evidence, policy: ReleaseGatePolicy(minSessions: 1))
            #expect(gate.verdict == .fail)
            #expect(gate.newFatalIssues.outcome == .fail && gate.regressedIssues.outcome == .fail)
            #expect(gate.baseline?.health.sessions == 4)

            // A named baseline, and a release the project never saw.
            let named = try await db.insights.gateEvidence(project: p.id, release: "2.0", baseline: "1.0", now: now)
            #expect(named.baseline?.release == "1.0")
            #expect(named.baseline?.days.map(\.health.sessions).reduce(0, +) == 4)  // found, not "no sessions"
            let none = try await db.insights.gateEvidence(project: p.id, release: "9.9", baseline: nil, now: now)
            #expect(none.health.sessions == 0 && none.baseline == nil && none.newFatalIssues.isEmpty)
            #expect(ReleaseGate.decide(none, policy: ReleaseGatePolicy()).verdict == .notEnoughData)
        }
    }
}
