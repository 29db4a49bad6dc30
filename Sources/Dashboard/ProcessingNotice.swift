import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The banner every page shows while reports wait to be symbolicated and grouped: "N reports are still being
/// processed, updated HH:MM:SS UTC". The site is static, so the page says when it was drawn rather than claiming to be
/// live; the first render after the backlog is gone draws every page without it (pages drawn with it are never taken
/// as current: ``IssuePageLedger/noticeDrawn``).
struct ProcessingNotice: Equatable {
    /// Counted up to this many: a storm's backlog costs one bounded index read per render.
    static let countLimit = 100_000

    /// Reports waiting (at most ``countLimit``).
    var pending: Int
    /// When the count was read.
    var at: Date

    /// The notice for `pending` reports waiting at `at`; nil when none wait.
    init?(pending: Int, at: Date) {
        guard pending > 0 else { return nil }
        self.pending = pending
        self.at = at
    }

    /// The notice as of `now`, from `sources`' backlog count.
    static func read(_ sources: DashboardSources, now: Date) async throws -> ProcessingNotice? {
        ProcessingNotice(pending: try await sources.pendingReports(countLimit), at: now)
    }

    /// `3 reports are still being processed` (`More than 100000 reports…` at the count's limit).
    var text: String {
        if pending >= Self.countLimit { return "More than \(Self.countLimit) reports are still being processed" }
        return pending == 1 ? "1 report is still being processed" : "\(pending) reports are still being processed"
    }

    /// `12:04:59 UTC`.
    var time: String { Format.clockTime(at) }

    /// `2026-11-22T12:04:59Z`, for `<time datetime>`.
    var iso: String { Format.isoTime(at) }
}
