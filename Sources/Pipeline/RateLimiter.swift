import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Per-project token buckets: a project may post `rate` reports per second on average, with bursts of
/// up to `burstSeconds × rate`. In memory only: after a restart every bucket starts full, which errs on
/// the side of accepting.
public final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Date
    }

    let clock: any WallClock
    let burstSeconds: Double
    let buckets = Mutex<[ProjectID: Bucket]>([:])

    public init(clock: any WallClock, burstSeconds: Double = 10) {
        self.clock = clock
        self.burstSeconds = burstSeconds
    }

    /// Takes `cost` tokens from `project`'s bucket.
    /// - Returns: nil when admitted, else the seconds to wait before `cost` tokens are available.
    public func admit(_ project: ProjectID, rate: Double, cost: Int) -> Double? {
        let now = clock.now()
        let capacity = max(rate * burstSeconds, Double(1))
        let cost = Double(cost)
        return buckets.withLock { buckets in
            var bucket = buckets[project] ?? Bucket(tokens: capacity, updated: now)
            let elapsed = max(0, now.timeIntervalSince(bucket.updated))
            bucket.tokens = min(capacity, bucket.tokens + elapsed * rate)
            bucket.updated = now
            defer { buckets[project] = bucket }
            // A batch bigger than the whole bucket is admitted once the bucket is full, so it can never
            // be refused forever; it leaves the bucket in debt.
            if bucket.tokens >= min(cost, capacity) {
                bucket.tokens -= cost
                return nil
            }
            return max(1, (min(cost, capacity) - bucket.tokens) / rate)
        }
    }
}
