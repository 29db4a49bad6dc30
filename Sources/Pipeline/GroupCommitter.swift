import FaultlineCore

/// Folds concurrent ingest writes into shared transactions (group commit).
///
/// SQLite commits one transaction at a time, and with `synchronous = FULL` every commit pays an fsync.
/// One transaction per request would cap ingest at the disk's fsync rate; here every write that arrives
/// while a commit is in flight joins the next one, so a busy server commits large groups and an idle one
/// commits at once, with no timer and no added latency. Each caller resumes only after the commit that
/// holds its write is durable.
public actor GroupCommitter {
    let store: any IngestStore
    let telemetry: Telemetry
    let clock = ContinuousClock()
    /// Most writes folded into one transaction (bounds the transaction's size and latency).
    let maxWritesPerCommit: Int
    var pending: [(write: IngestWrite, continuation: CheckedContinuation<IngestOutcome, any Error>)] = []
    var draining = false
    /// Called after each successful commit (tells the dashboard renderer that data changed).
    let onCommit: @Sendable () -> Void
    /// Told of every write (background work gives way while ingest is busy).
    nonisolated let activity: IngestActivity?

    public init(store: any IngestStore, telemetry: Telemetry, maxWritesPerCommit: Int = 512, activity: IngestActivity? = nil,
                onCommit: @escaping @Sendable () -> Void = {}) {
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
            pending.append((write, continuation))
            if !draining {
                draining = true
                Task { await self.drain() }
            }
        }
    }

    func drain() async {
        while !pending.isEmpty {
            let group = Array(pending.prefix(maxWritesPerCommit))
            pending.removeFirst(group.count)
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
        draining = false
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
