import Synchronization

/// When ingest last handed a write to the group commit: background work gives way to ingest while it is busy.
///
/// The symbolication worker asks before each batch. While reports arrive, it takes small batches on one core
/// (`SymbolicationWorker.sharedBatchSize`), so that ingest's group commits never queue for the database writer
/// behind a long batch transaction and the HTTP side keeps a core; once ingest has been quiet for `quiet`, the
/// worker takes its large batches on every core again and drains the backlog. A 2xx is what a client waits for;
/// grouping can come a moment later.
public final class IngestActivity: Sendable {
    let origin = ContinuousClock.now
    /// Nanoseconds since `origin` of the last write, or -1.
    let last = Atomic<Int64>(-1)
    /// How long after the last write ingest counts as busy.
    public let quiet: Duration

    public init(quiet: Duration = .milliseconds(250)) {
        self.quiet = quiet
    }

    /// Called for every write handed to the group commit (one atomic store).
    public func noteWrite() {
        last.store((ContinuousClock.now - origin).nanoseconds, ordering: .relaxed)
    }

    /// Whether a write came within `quiet`.
    public var isBusy: Bool {
        let at = last.load(ordering: .relaxed)
        guard at >= 0 else { return false }
        return (ContinuousClock.now - origin).nanoseconds &- at < quiet.nanoseconds
    }
}
