#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one pruning pass removed.
public struct PruneResult: Sendable, Equatable {
    public var reports: Int
    public var sessions: Int
    public init(reports: Int = 0, sessions: Int = 0) {
        self.reports = reports
        self.sessions = sessions
    }
}

/// Removes raw data older than the retention period. Issue and rollup counters are not touched: they were
/// counted when the data arrived and stay exact after the raw rows are gone.
public protocol RetentionStore: Sendable {
    /// Prunes at most `limit` request payloads (with their reports) received before `cutoff`, and sessions last
    /// updated before it; call again while it returns non-zero counts.
    func prune(before cutoff: Date, limit: Int) async throws -> PruneResult

    /// Gives the space that pruning freed inside the store back to the file system, in small steps (at most
    /// `maxBytes` in all); returns the bytes given back. Called after a pass that pruned something, which makes
    /// retention a relief valve for a full disk.
    func releaseFreeSpace(maxBytes: Int64) async throws -> Int64
}

extension RetentionStore {
    /// A store whose deletions give their space back by themselves (or have none to give).
    public func releaseFreeSpace(maxBytes: Int64) async throws -> Int64 { 0 }
}
