import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Failed attempts per key (a client address, an account), counted in memory in a sliding window
/// (``LoginFailures``): after `maxFailures` within `window`, the key is refused (even with the right secret) until
/// the oldest of them ages out. A restart forgets the counts, which an attacker cannot cause.
///
/// The dashboard's per-address limit (``AdminSessionService``) and people's per-account limit (``PeopleService``)
/// are two of these. At most ``maxTrackedKeys`` keys are held: past it, keys without a failure in the window are
/// forgotten first, then all, so a flood of new keys cannot grow the map without bound.
final class FailureLimit: Sendable {
    let maxFailures: Int
    let window: TimeInterval
    let entries = Mutex<[String: LoginFailures]>([:])
    /// Most keys tracked at once.
    static let maxTrackedKeys = 10_000

    init(maxFailures: Int, window: TimeInterval) {
        self.maxFailures = max(1, maxFailures)
        self.window = window
    }

    /// Seconds `key` must wait at `now` before its next attempt is heard, or nil.
    func retryAfter(_ key: String, now: Date) -> Int? {
        entries.withLock { $0[key]?.retryAfter(now: now, maxFailures: maxFailures, window: window) }
    }

    /// Records a failed attempt of `key` at `now`.
    func record(_ key: String, now: Date) {
        let window = window
        let keep = maxFailures
        entries.withLock { all in
            if all.count >= Self.maxTrackedKeys {
                for (tracked, value) in all where value.retryAfter(now: now, maxFailures: 1, window: window) == nil {
                    all[tracked] = nil
                }
                if all.count >= Self.maxTrackedKeys { all.removeAll() }
            }
            var entry = all[key] ?? LoginFailures()
            entry.forget(before: now, window: window)
            entry.record(now, keep: keep)
            all[key] = entry
        }
    }

    /// Forgets `key`'s failures (it has just succeeded).
    func clear(_ key: String) {
        entries.withLock { $0[key] = nil }
    }
}
