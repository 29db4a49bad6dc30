import CoreMetrics
import FaultlineCore
import Foundation
import Pipeline
import Synchronization
import Testing

/// An in-memory ingest store that records how writes were grouped and can be made slow or failing.
final class RecordingStore: IngestStore {
    let groups = Mutex<[Int]>([])
    let delay: Duration
    let failing: Bool
    init(delay: Duration = .milliseconds(20), failing: Bool = false) {
        self.delay = delay
        self.failing = failing
    }
    func commit(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        groups.withLock { $0.append(writes.count) }
        try await Task.sleep(for: delay)
        if failing { throw CancellationError() }
        return writes.map { write in
            guard case .reports(let batch) = write else { return .sessions(applied: 0, unchanged: 0) }
            return .reports(stored: batch.reports.map(\.report.eventID), duplicates: [])
        }
    }
}

func batch(_ n: Int) -> IngestWrite {
    let id = EventID(String(format: "%032x", n))!
    return .reports(
        ReportBatch(
            project: ProjectID(1), receivedAt: Date(),
            payload: StoredPayload(bytes: [], encoding: .gzip, inflatedSize: 0),
            reports: [PreparedReport(report: Report(eventID: id, kind: .crash, timestamp: Date()), range: 0..<1)]))
}

let telemetry = Telemetry(factory: NOOPMetricsHandler.instance)

/// A store whose first commit never returns (a database connection that stopped answering); later ones succeed.
final class StuckFirstCommitStore: IngestStore {
    let calls = Mutex(0)
    let committed = Mutex<[Int]>([])
    func commit(_ writes: [IngestWrite]) async throws -> [IngestOutcome] {
        if calls.withLock({
            $0 += 1; return $0
        }) == 1 {
            try await Task.sleep(for: .seconds(3600))
        }
        committed.withLock { $0.append(writes.count) }
        return writes.map { _ in .reports(stored: [], duplicates: []) }
    }
}

@Suite struct GroupCommitterTests {
    @Test func aWritePastTheDeadlineIsAnsweredUnavailableAndTheNextWritesAreNotHeldBehindIt() async throws {
        let store = StuckFirstCommitStore()
        let committer = GroupCommitter(store: store, telemetry: telemetry, deadline: .milliseconds(200))
        // The first commit never returns: its writer is answered `.unavailable` at the deadline, not never.
        let error = await #expect(throws: StorageError.self) { _ = try await committer.submit(batch(1)) }
        #expect(error?.code == .unavailable)
        // The next writes go to a new drain task and are committed, though the stuck commit still holds the old one.
        async let second = committer.submit(batch(2))
        async let third = committer.submit(batch(3))
        for outcome in try await [second, third] {
            guard case .reports = outcome else {
                Issue.record("not a report outcome: \(outcome)")
                continue
            }
        }
        #expect(store.committed.withLock { $0.reduce(0, +) } == 2)
    }

    /// Writes queued behind a commit that passed its deadline are committed by a new drain task at once, with no
    /// further write to start it (an idle server whose database came back answers them, not `503` at their deadline).
    @Test func writesQueuedBehindAStuckCommitAreCommittedWithoutAnotherWrite() async throws {
        let store = StuckFirstCommitStore()
        let committer = GroupCommitter(store: store, telemetry: telemetry, deadline: .seconds(2))
        let first = Task { try await committer.submit(batch(1)) }
        // Queued while the first commit hangs, well before that commit's deadline: their own deadlines come a second
        // after it, so only a drain started by the first one's expiry answers them with their commit.
        while store.calls.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .seconds(1))
        async let second = committer.submit(batch(2))
        async let third = committer.submit(batch(3))
        let error = await #expect(throws: StorageError.self) { _ = try await first.value }
        #expect(error?.code == .unavailable)
        for outcome in try await [second, third] {
            guard case .reports = outcome else {
                Issue.record("not a report outcome: \(outcome)")
                continue
            }
        }
        #expect(store.committed.withLock { $0.reduce(0, +) } == 2)
    }

    @Test func concurrentWritesShareCommitsAndEachGetsItsOwnOutcome() async throws {
        let store = RecordingStore()
        let committer = GroupCommitter(store: store, telemetry: telemetry)
        let outcomes = try await withThrowingTaskGroup(of: (Int, IngestOutcome).self) { group in
            for n in 0..<100 { group.addTask { (n, try await committer.submit(batch(n))) } }
            return try await group.reduce(into: [Int: IngestOutcome]()) { $0[$1.0] = $1.1 }
        }
        for n in 0..<100 {
            #expect(outcomes[n] == .reports(stored: [EventID(String(format: "%032x", n))!], duplicates: []))
        }
        let groups = store.groups.withLock { $0 }
        #expect(groups.reduce(0, +) == 100)
        #expect(groups.count < 100)  // grouped: while one commit sleeps the others queue up
    }

    @Test func everyWriteTellsTheIngestActivity() async throws {
        let activity = IngestActivity(quiet: .seconds(3600))
        let committer = GroupCommitter(store: RecordingStore(), telemetry: telemetry, activity: activity)
        #expect(!activity.isBusy)
        _ = try await committer.submit(batch(1))
        #expect(activity.isBusy)
    }

    @Test func groupsAreCappedInSize() async throws {
        let store = RecordingStore()
        let committer = GroupCommitter(store: store, telemetry: telemetry, maxWritesPerCommit: 8)
        try await withThrowingTaskGroup(of: IngestOutcome.self) { group in
            for n in 0..<50 { group.addTask { try await committer.submit(batch(n)) } }
            try await group.waitForAll()
        }
        #expect(store.groups.withLock { $0.allSatisfy { $0 <= 8 } })
    }

    @Test func aFailedCommitFailsEveryWriteInIt() async throws {
        let committer = GroupCommitter(store: RecordingStore(failing: true), telemetry: telemetry)
        await #expect(throws: CancellationError.self) { _ = try await committer.submit(batch(1)) }
        // The committer keeps working after a failure.
        await #expect(throws: CancellationError.self) { _ = try await committer.submit(batch(2)) }
    }
}
