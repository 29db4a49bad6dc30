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
///
/// Several nodes behind a load balancer each keep their own buckets and allow `share()` of each rate (1 ÷ the live
/// nodes): when the balancer spreads a project's requests evenly, the project gets about its limit in all.
public final class RateLimiter: Sendable {
    /// What a bucket counts: each project has one bucket per budget.
    public enum Budget: Sendable, Hashable {
        /// Reports (events, crashes, minidumps): `rateLimitPerSecond`.
        case reports
        /// Sessions (updates and the counts of aggregates), at their own, larger rate: a crash storm that exhausts the
        /// reports' budget must not stop the sessions that crash-free rates are made of.
        case sessions
    }

    struct Bucket {
        var tokens: Double
        var updated: Date
    }

    struct Key: Hashable {
        var project: ProjectID
        var budget: Budget
    }

    let clock: any WallClock
    let burstSeconds: Double
    let buckets = Mutex<[Key: Bucket]>([:])
    /// The part of each rate this server allows (1 alone; 1 ÷ N with N nodes sharing one database).
    let share: @Sendable () -> Double

    public init(clock: any WallClock, burstSeconds: Double = 10, share: @escaping @Sendable () -> Double = { 1 }) {
        self.clock = clock
        self.burstSeconds = burstSeconds
        self.share = share
    }

    /// Takes `cost` tokens from `project`'s bucket of `budget`.
    /// - Returns: nil when admitted, else the seconds to wait before `cost` tokens are available.
    public func admit(_ project: ProjectID, rate: Double, cost: Int, budget: Budget = .reports) -> Double? {
        let key = Key(project: project, budget: budget)
        let now = clock.now()
        let part = share()
        let rate = rate * (part.isFinite && part > 0 && part <= 1 ? part : 1)
        let capacity = max(rate * burstSeconds, Double(1))
        let cost = Double(cost)
        return buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
            let elapsed = max(0, now.timeIntervalSince(bucket.updated))
            bucket.tokens = min(capacity, bucket.tokens + elapsed * rate)
            bucket.updated = now
            defer { buckets[key] = bucket }
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
