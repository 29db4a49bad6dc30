#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One version of a project's fingerprint rules, as stored: every change is a new version, the old ones kept.
public struct GroupingRulesVersion: Sendable, Equatable, Codable {
    public var version: Int
    /// The text as it was set (it parsed when it was stored).
    public var rules: String
    public var createdAt: Date
    /// Who set it (a person's name, `admin`, `cli`), when known.
    public var createdBy: String?
    public init(version: Int, rules: String, createdAt: Date, createdBy: String?) {
        self.version = version
        self.rules = rules
        self.createdAt = createdAt
        self.createdBy = createdBy
    }
    enum CodingKeys: String, CodingKey {
        case version, rules, createdAt = "created_at", createdBy = "created_by"
    }
}

/// One stored report as a dry run reads it: its issue, its user, and its stored grouping facts.
public struct StoredGroupingRow: Sendable {
    public var eventID: String
    public var issue: IssueID?
    public var user: String?
    /// `GroupingFacts`' stored form; nil for a report filed before facts were stored.
    public var facts: String?
    public init(eventID: String, issue: IssueID?, user: String?, facts: String?) {
        self.eventID = eventID
        self.issue = issue
        self.user = user
        self.facts = facts
    }
}

/// How far the background regroup of a project's reports after its rules changed has come.
public struct RegroupProgress: Sendable, Equatable, Codable {
    /// The rules version being applied.
    public var rulesVersion: Int
    /// The project's reports when the regroup started, and how many were queued to be grouped again so far.
    public var total: Int
    public var requeued: Int
    /// Reports of the project still waiting for the worker (queued, not yet grouped again).
    public var waiting: Int
    public var startedAt: Date
    public var finishedAt: Date?
    public init(rulesVersion: Int, total: Int, requeued: Int, waiting: Int, startedAt: Date, finishedAt: Date?) {
        self.rulesVersion = rulesVersion
        self.total = total
        self.requeued = requeued
        self.waiting = waiting
        self.startedAt = startedAt
        self.finishedAt = finishedAt
    }
    /// Done: every report was queued and the worker has grouped each again.
    public var done: Bool { finishedAt != nil && waiting == 0 }
    enum CodingKeys: String, CodingKey {
        case rulesVersion = "rules_version", total, requeued, waiting, startedAt = "started_at"
        case finishedAt = "finished_at", done
    }
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(rulesVersion, forKey: .rulesVersion)
        try c.encode(total, forKey: .total)
        try c.encode(requeued, forKey: .requeued)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(startedAt, forKey: .startedAt)
        try c.encodeIfPresent(finishedAt, forKey: .finishedAt)
        try c.encode(done, forKey: .done)
    }
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rulesVersion = try c.decode(Int.self, forKey: .rulesVersion)
        total = try c.decode(Int.self, forKey: .total)
        requeued = try c.decode(Int.self, forKey: .requeued)
        waiting = try c.decode(Int.self, forKey: .waiting)
        startedAt = try c.decode(Date.self, forKey: .startedAt)
        finishedAt = try c.decodeIfPresent(Date.self, forKey: .finishedAt)
    }
}

/// Where a project's fingerprint rules, their versions and the background regroup live (both engines).
public protocol GroupingRulesStore: Sendable {
    /// Every version of the project's rules, newest first (the first is in force); empty: none ever set.
    func groupingRules(project: ProjectID) async throws -> [GroupingRulesVersion]
    /// Stores `rules` (already parsed by the caller) as the project's next version, and starts (or restarts) the
    /// background regroup of the project's stored reports under it, in one transaction. Returns the new version.
    func setGroupingRules(_ rules: String, project: ProjectID, by: String?, at date: Date) async throws -> Int
    /// The project's reports received at or after `since`, in id order, in batches of at most `batch` rows, each
    /// handed to `body` (the dry run reads a million reports without holding them all).
    func groupingRows(
        project: ProjectID, since: Date, batch: Int, _ body: @Sendable ([StoredGroupingRow]) throws -> Void
    ) async throws
    /// Where a fingerprint files today: the project's issues by fingerprint, and its merged fingerprints' survivors.
    func groupingTargets(project: ProjectID) async throws -> GroupingTargets
    /// One step of every unfinished regroup: queues at most `limit` more reports (in id order from the cursor) to be
    /// grouped again by the worker. Returns how many were queued.
    func regroupStep(limit: Int, at date: Date) async throws -> Int
    /// The project's latest regroup, nil when none ever ran.
    func regroupProgress(project: ProjectID) async throws -> RegroupProgress?
}

/// Where a fingerprint files: an issue of its own, else the survivor it was merged into, else a new issue.
public struct GroupingTargets: Sendable {
    public var issues: [String: IssueID]
    public var aliases: [String: IssueID]
    public init(issues: [String: IssueID] = [:], aliases: [String: IssueID] = [:]) {
        self.issues = issues
        self.aliases = aliases
    }
    public func issue(for fingerprint: Fingerprint) -> IssueID? {
        let key = fingerprint.rawValue
        return issues[key] ?? aliases[key]
    }
}
