#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What one pruning pass removed.
public struct PruneResult: Sendable, Equatable {
    public var reports: Int
    public var sessions: Int
    /// Sentry attachments (files sent with an event: logs, minidumps), which may hold personal data too.
    public var attachments: Int
    /// Reports newly kept as samples (`RetentionSamplePolicy`): the pass changed something, so another may find more.
    public var kept: Int
    public init(reports: Int = 0, sessions: Int = 0, attachments: Int = 0, kept: Int = 0) {
        self.reports = reports
        self.sessions = sessions
        self.attachments = attachments
        self.kept = kept
    }

    /// Whether the pass removed or kept nothing (else another pass may find more).
    public var isEmpty: Bool { reports == 0 && sessions == 0 && attachments == 0 && kept == 0 }
}

/// Removes raw data older than the retention period, except each issue's samples. Issue and rollup counters are not
/// touched: they were counted when the data arrived and stay exact after the raw rows are gone.
public protocol RetentionStore: Sendable {
    /// Prunes at most `limit` request payloads (with their reports) received before `cutoff`, sessions last
    /// updated before it, and attachments received before it whose event is no stored report; call again while it
    /// returns a non-empty result.
    ///
    /// First the issues about to lose reports choose their samples again (`RetentionSamples.choose`, admitted under
    /// `samples.perProject` by `RetentionSamples.admit`): a sample report stays with its payload, result, search entry
    /// and attachments, and a payload goes once none of its reports is a sample. A report that stops being a sample
    /// (the latest moved on, or a project past its cap) goes in a later pass.
    ///
    /// The issues that lose reports are marked changed at `now` (their `updated_at`), in the same transaction: an
    /// issue page shows a sample report (its user id, custom keys, breadcrumbs), and a page nothing marks is never
    /// rendered again, so it would go on showing what retention deleted.
    func prune(before cutoff: Date, limit: Int, now: Date, samples: RetentionSamplePolicy) async throws -> PruneResult

    /// Gives the space that pruning freed inside the store back to the file system, in small steps (at most
    /// `maxBytes` in all); returns the bytes given back. Called after a pass that pruned something, which makes
    /// retention a relief valve for a full disk.
    func releaseFreeSpace(maxBytes: Int64) async throws -> Int64

    /// Rewrites the search index's storage so that the deleted entries' words are gone from it (SQLite's FTS5 keeps
    /// them in its segments until they are merged), in small steps. Called after every pruning pass except under
    /// storage pressure; a failure is logged and the next pass merges again.
    func mergeSearchIndex() async throws

    /// Adds the quota counts kept per fingerprint of days before `day` to their day and release's total row, and
    /// deletes them (``QuotaCountKeep``), in one transaction; returns the rows folded. Totals are unchanged.
    func foldQuotaCounts(before day: DayNumber) async throws -> Int
}

extension RetentionStore {
    /// Prunes without keeping samples (`RetentionSamplePolicy.none`).
    public func prune(before cutoff: Date, limit: Int, now: Date) async throws -> PruneResult {
        try await prune(before: cutoff, limit: limit, now: now, samples: .none)
    }

    /// A store whose deletions give their space back by themselves (or have none to give).
    public func releaseFreeSpace(maxBytes: Int64) async throws -> Int64 { 0 }

    /// A store whose search entries go with their rows (PostgreSQL's `tsvector`).
    public func mergeSearchIndex() async throws {}
}
