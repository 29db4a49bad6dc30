import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A project's fingerprint rules (docs/grouping.md, "Fingerprint rules"): setting a version (which starts the
/// background regroup of stored reports), reading the versions, the regroup's progress, and the dry run of a rules
/// text over stored reports, which changes nothing. The CLI (`faultline grouping`), the API and the settings page
/// all call this.
public struct GroupingRulesService: Sendable {
    let store: any GroupingRulesStore
    let clock: any WallClock
    /// Where a new version is recorded (`project.grouping_rules`); nil records nothing.
    let audit: (any AuditTrail)?

    public init(store: any GroupingRulesStore, clock: any WallClock, audit: (any AuditTrail)? = nil) {
        self.store = store
        self.clock = clock
        self.audit = audit
    }

    /// Reports read per batch by the dry run.
    public static let dryRunBatch = 10_000

    /// Parses `text` and stores it as the project's next version; the regroup of its stored reports starts. The
    /// audit trail records the version and its rule count, as made by `origin` (`by` is the short label stored with
    /// the version itself).
    ///
    /// - Throws: `FingerprintRulesError` (line and column) when the text does not parse; nothing is stored then.
    public func set(_ text: String, project: ProjectID, by: String?, origin: AuditOrigin) async throws -> Int {
        let rules = try FingerprintRules.parse(text)
        let version = try await store.setGroupingRules(text, project: project, by: by, at: clock.now())
        // Versions count up from 1 per project, so the one replaced is the one before (no read of the history).
        try await audit?.record(
            AuditEntry(
                project: project, at: clock.now(), origin: origin, kind: .projectGroupingRules,
                subject: "fingerprint rules", before: version > 1 ? "version \(version - 1)" : nil,
                after: "version \(version): \(rules.rules.count) rule\(rules.rules.count == 1 ? "" : "s")"))
        return version
    }

    /// Every version, newest first.
    public func versions(project: ProjectID) async throws -> [GroupingRulesVersion] {
        try await store.groupingRules(project: project)
    }

    public func progress(project: ProjectID) async throws -> RegroupProgress? {
        try await store.regroupProgress(project: project)
    }

    /// Runs `text` over the project's reports received in the last `days` days, from their stored grouping facts.
    ///
    /// - Throws: `FingerprintRulesError` when the text does not parse.
    public func dryRun(_ text: String, project: ProjectID, days: Int) async throws -> GroupingDryRunAnswer {
        let rules = try FingerprintRules.parse(text)
        let targets = try await store.groupingTargets(project: project)
        let since = clock.now().addingTimeInterval(-Double(max(0, min(days, GroupingDryRun.maxDays))) * 86_400)
        let run = Mutex(GroupingDryRun(rules: rules, targets: targets))
        try await store.groupingRows(project: project, since: since, batch: Self.dryRunBatch) { rows in
            run.withLock { $0.add(rows) }
        }
        return run.withLock { $0.answer() }
    }
}
