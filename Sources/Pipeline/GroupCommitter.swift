import FaultlineCore
import Synchronization

/// Folds concurrent ingest writes into shared transactions (group commit).
///
/// SQLite commits one transaction at a time, and with `synchronous = FULL` every commit pays an fsync.
/// One transaction per request would cap ingest at the disk's fsync rate; here every write that arrives
/// while a commit is in flight joins the next one, so a busy server commits large groups and an idle one
/// commits at once, with no timer and no added latency. Each caller resumes only after the commit that
/// holds its write is durable.
///
/// Not an actor: a request's write joins the queue under a lock in the request's own task, so the request
/// waits on its continuation without first hopping onto an actor's executor (one task switch less per
/// request on the ingest hot path). One drain task at a time takes groups off the queue.
public final class GroupCommitter: Sendable {
    typealias Waiting = (write: IngestWrite, continuation: CheckedContinuation<IngestOutcome, any Error>)
    struct Queue {
        var pending: [Waiting] = []
        /// Whether a drain task is running (it empties `pending` before it stops).
        var draining = false
    }

    let store: any IngestStore
    let telemetry: Telemetry
    /// Most writes folded into one transaction (bounds the transaction's size and latency).
    let maxWritesPerCommit: Int
    let queue = Mutex(Queue())
    /// Called after each successful commit (tells the dashboard renderer that data changed).
    let onCommit: @Sendable () -> Void
    /// Told of every write (background work gives way while ingest is busy).
    let activity: IngestActivity?

    public init(
        store: any IngestStore, telemetry: Telemetry, maxWritesPerCommit: Int = 512, activity: IngestActivity? = nil,
        onCommit: @escaping @Sendable () -> Void = {}
    ) {
        self.onCommit = onCommit
        self.activity = activity
        self.store = store
        self.telemetry = telemetry
        self.maxWritesPerCommit = max(1, maxWritesPerCommit)
    }

    /// Commits `write` together with whatever else is waiting; returns once it is durable.
    public func submit(_ write: IngestWrite) async throws -> IngestOutcome {
        activity?.noteWrite()
        return try await withCheckedThrowingContinuation { continuation in
            let startDrain = queue.withLock { queue in
                queue.pending.append((write, continuation))
                guard !queue.draining else { return false }
                queue.draining = true
                return true
            }
            if startDrain { Task { await self.drain() } }
        }
    }

    /// The next group to commit, or nil (and no drain running any more) when nothing waits.
    func nextGroup() -> [Waiting]? {
        queue.withLock { queue in
            guard !queue.pending.isEmpty else {
                queue.draining = false
                return nil
            }
            let group = Array(queue.pending.prefix(maxWritesPerCommit))
            queue.pending.removeFirst(group.count)
            return group
        }
    }

    func drain() async {
        let clock = ContinuousClock()
        while let group = nextGroup() {
            let started = clock.now
            do {
                let outcomes = try await store.commit(group.map(\.write))
                precondition(outcomes.count == group.count, "IngestStore must answer every write")
                for (item, outcome) in zip(group, outcomes) { item.continuation.resume(returning: outcome) }
                onCommit()
            } catch {
                for item in group { item.continuation.resume(throwing: error) }
            }
            let elapsed = clock.now - started
            telemetry.recordDuration(Telemetry.Name.commitDuration, nanoseconds: elapsed.nanoseconds)
            telemetry.recordValue(Telemetry.Name.commitWrites, Double(group.count))
        }
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
