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
///
/// With a `deadline` (PostgreSQL: a database over the network can stop answering), a write not answered within it is
/// answered `StorageError(.unavailable)` (503 upstream), so a request never waits for a database that is down, cut
/// off or stalled: a write still queued is withdrawn (never stored); one inside the commit in flight may still be
/// stored when that commit ends (its outcome is unknown, and a retry is a duplicate report or an unchanged session).
/// A commit past the deadline no longer holds the queue: the writes queued behind it, or else the next write, start a
/// new drain task, and the old one stops once its commit returns (a connection that never answers again then costs one pooled connection, not ingest).
public final class GroupCommitter: Sendable {
    typealias Waiting = (id: UInt64, write: IngestWrite, continuation: CheckedContinuation<IngestOutcome, any Error>)
    struct Queue {
        var pending: [Waiting] = []
        /// Whether a drain task is running (it empties `pending` before it stops).
        var draining = false
        var nextID: UInt64 = 0
        /// Writes of the commit in flight that were answered when their deadline passed (not to be answered again).
        var answered: Set<UInt64> = []
        /// Writes of the commit in flight, answerable by their deadline.
        var inFlight: [UInt64: CheckedContinuation<IngestOutcome, any Error>] = [:]
        /// The deadline timers of writes not answered yet.
        var timers: [UInt64: Task<Void, Never>] = [:]
        /// The drain task that may take groups; one whose commit passed the deadline is replaced (`expire`).
        var drainGeneration: UInt64 = 0
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
    /// How long a write may wait for its commit before it is answered `.unavailable`; nil: as long as it takes.
    let deadline: Duration?

    public init(
        store: any IngestStore, telemetry: Telemetry, maxWritesPerCommit: Int = 512, activity: IngestActivity? = nil,
        deadline: Duration? = nil, onCommit: @escaping @Sendable () -> Void = {}
    ) {
        self.deadline = deadline
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
            let (id, startDrain) = queue.withLock { queue in
                let id = queue.nextID
                queue.nextID &+= 1
                queue.pending.append((id, write, continuation))
                guard !queue.draining else { return (id, false) }
                queue.draining = true
                return (id, true)
            }
            if let deadline {
                let timer = Task {
                    guard (try? await Task.sleep(for: deadline)) != nil else { return }
                    self.expire(id, after: deadline)
                }
                // A write answered before its timer was stored leaves the timer to find nothing when it fires.
                queue.withLock { queue in
                    if queue.pending.contains(where: { $0.id == id }) || queue.inFlight[id] != nil {
                        queue.timers[id] = timer
                    }
                }
            }
            if startDrain { Task { await self.drain() } }
        }
    }

    /// Answers write `id` `.unavailable` when its deadline passed: withdrawn when still queued, left to its commit
    /// (whose outcome is then not reported) when in flight.
    func expire(_ id: UInt64, after deadline: Duration) {
        let (continuation, restart) = queue.withLock {
            queue -> (CheckedContinuation<IngestOutcome, any Error>?, Bool) in
            queue.timers[id] = nil
            if let index = queue.pending.firstIndex(where: { $0.id == id }) {
                return (queue.pending.remove(at: index).continuation, false)
            }
            guard let continuation = queue.inFlight.removeValue(forKey: id) else { return (nil, false) }
            queue.answered.insert(id)
            // The commit in flight is stuck: writes from now on go to a new drain task, and so do the writes queued
            // behind it (else they would wait for the next write to start one, or for their own deadline).
            queue.drainGeneration &+= 1
            queue.draining = !queue.pending.isEmpty
            return (continuation, queue.draining)
        }
        if restart { Task { await self.drain() } }
        guard let continuation else { return }
        telemetry.count(Telemetry.Name.commitDeadlinePassed)
        continuation.resume(
            throwing: StorageError(.unavailable, "the database did not commit the write within \(deadline)"))
    }

    /// Takes the answer of `item` away from its deadline; false when the deadline answered it already.
    func claimAnswer(_ item: Waiting) -> Bool {
        queue.withLock { queue in
            queue.timers.removeValue(forKey: item.id)?.cancel()
            queue.inFlight[item.id] = nil
            return queue.answered.remove(item.id) == nil
        }
    }

    /// The next group to commit, or nil (and no drain running any more) when nothing waits.
    func nextGroup(generation: UInt64) -> [Waiting]? {
        queue.withLock { queue in
            guard queue.drainGeneration == generation else { return nil }
            guard !queue.pending.isEmpty else {
                queue.draining = false
                return nil
            }
            let group = Array(queue.pending.prefix(maxWritesPerCommit))
            queue.pending.removeFirst(group.count)
            if deadline != nil {
                for item in group { queue.inFlight[item.id] = item.continuation }
            }
            return group
        }
    }

    func drain() async {
        let clock = ContinuousClock()
        let generation = queue.withLock { $0.drainGeneration }
        while let group = nextGroup(generation: generation) {
            let started = clock.now
            do {
                let outcomes = try await store.commit(group.map(\.write))
                precondition(outcomes.count == group.count, "IngestStore must answer every write")
                for (item, outcome) in zip(group, outcomes) where deadline == nil || claimAnswer(item) {
                    item.continuation.resume(returning: outcome)
                }
                onCommit()
            } catch {
                for item in group where deadline == nil || claimAnswer(item) {
                    item.continuation.resume(throwing: error)
                }
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
