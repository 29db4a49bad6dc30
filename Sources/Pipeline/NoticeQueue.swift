/// Notices on their way from a path that must not wait (ingest, the storage probe) to a writer that may fail (the
/// alert writer): recorded with one append, taken by the writer, and given back, before any newer ones, when it could
/// not write them, so a notice is written once the database takes it again.
///
/// Not a lock of its own: it lives in its owner's `Mutex` state (`DiskGuard`, `SpikeGuard`), so recording costs
/// nothing the owner's lock does not already cost. Past `capacity` the oldest notices go (a writer that stays away
/// for days must not grow memory; the newest say most).
struct NoticeQueue<Notice: Sendable>: Sendable {
    let capacity: Int
    private(set) var pending: [Notice] = []

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    mutating func append(_ notice: Notice) {
        pending.append(notice)
        if pending.count > capacity { pending.removeFirst(pending.count - capacity) }
    }

    /// The notices not yet written, oldest first; the queue is emptied.
    mutating func take() -> [Notice] {
        defer { pending = [] }
        return pending
    }

    /// Puts back notices `take` returned that could not be written, before any newer ones.
    mutating func giveBack(_ notices: [Notice]) {
        guard !notices.isEmpty else { return }
        pending = Array((notices + pending).suffix(capacity))
    }
}
