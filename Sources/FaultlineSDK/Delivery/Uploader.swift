/// Sends what the ``DeliveryQueue`` holds: oldest first, each item to its route, retried with backoff.
///
/// CONTRACT (owner: sdk-delivery helper). A 2xx removes the item. A network error, 408, 5xx or 507 keeps it
/// and backs off (exponential, with jitter, capped), `Retry-After` (seconds or HTTP date) and
/// `X-Sentry-Rate-Limits` setting the earliest next try when the server sends them; a 429 does the same.
/// Other 4xx answers mean the item can never be accepted: it is removed and counted. Reports carry their
/// event id, so a retry of a request whose answer was lost is a duplicate on the server, not a second event.
package actor Uploader {
    package init(dsn: DSN, queue: DeliveryQueue, transport: any HTTPTransport) {}

    /// Sends until the queue is empty, or until `deadline`, whichever comes first; answers whether the queue
    /// is empty. Waits out backoff and `Retry-After` only while the deadline allows.
    package func drain(deadline: ContinuousClock.Instant) async -> Bool { false }

    /// Runs until the task is cancelled: drains, then sleeps until ``notify()`` or the next retry time.
    package func run() async {}

    /// Something was enqueued: wake ``run()``.
    package nonisolated func notify() {}
}
