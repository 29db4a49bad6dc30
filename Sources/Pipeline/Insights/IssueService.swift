import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issue state changes made by people (`faultline issues close|reopen|mute|merge|unmerge`, `PATCH /api/v1/issues/{id}`,
/// `POST /api/v1/issues/{id}/merge|unmerge`, the dashboard's issue forms).
///
/// Each change is recorded in the audit trail with the `origin` its caller names (who, from where), right after it
/// is stored (``AuditTrail``).
public struct IssueService: Sendable {
    let store: any IssueStateStore
    let clock: any WallClock
    let onChange: @Sendable () -> Void
    /// Where changes are recorded; nil records nothing (tests of other concerns).
    let audit: (any AuditTrail)?
    /// The project of an issue changed without naming one (the admin token's API calls, the CLI), for its entry.
    let issues: (any ReportReader)?

    public init(
        store: any IssueStateStore, clock: any WallClock, audit: (any AuditTrail)? = nil,
        issues: (any ReportReader)? = nil, onChange: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.clock = clock
        self.audit = audit
        self.issues = issues
        self.onChange = onChange
    }

    /// Records a change of `issue` of `project` (nil: the issue's, looked up) made by `origin`.
    func record(
        _ kind: AuditKind, issue: IssueID, project: ProjectID?, _ origin: AuditOrigin, before: String? = nil,
        after: String?
    ) async throws {
        guard let audit else { return }
        var project = project
        if project == nil { project = try await issues?.project(ofIssue: issue) }
        try await audit.record(
            AuditEntry(
                project: project, at: clock.now(), origin: origin, kind: kind, subject: "issue \(issue.rawValue)",
                before: before, after: after))
    }

    /// Sets an issue's status, recording `by` as who changed it (on the issue) and `origin` (in the audit trail); nil
    /// when there is no such issue (in `project`, when given).
    public func setStatus(
        _ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String, origin: AuditOrigin
    ) async throws -> IssueSummary? {
        let result = try await store.setStatus(status, issue: issue, project: project, by: by, at: clock.now())
        if let result {
            onChange()
            try await record(.issueStatus, issue: issue, project: result.project, origin, after: status.rawValue)
        }
        return result
    }

    /// Merges `others` into `survivor` (`IssueMerge`: the survivor keeps its id and status, the others' events and
    /// future events join it), all of `project` (nil: the survivor's), recording `by`. Throws `IssueMergeError` when
    /// the merge is refused.
    public func merge(
        _ others: [IssueID], into survivor: IssueID, project: ProjectID?, by: String, origin: AuditOrigin
    ) async throws -> IssueMergeResult {
        let result = try await store.merge(others, into: survivor, project: project, by: by, at: clock.now())
        onChange()
        try await record(
            .issueMerge, issue: survivor, project: result.project, origin,
            after: "merged " + result.merged.map { "issue \($0.rawValue)" }.joined(separator: ", "))
        return result
    }

    /// Splits `fingerprint` back out of `survivor` (of `project`, when given): its reports are filed again, into an
    /// issue of their own, as the symbolication worker catches up. Throws `IssueMergeError` when it was not merged
    /// into the survivor.
    public func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?, origin: AuditOrigin)
        async throws -> IssueUnmergeResult
    {
        let result = try await store.unmerge(
            fingerprint: fingerprint, from: survivor, project: project, at: clock.now())
        onChange()
        try await record(
            .issueUnmerge, issue: survivor, project: project, origin, before: fingerprint,
            after: "split out (\(result.requeued) reports to file again)")
        return result
    }

    /// Records the URL of the tracker issue opened for an issue (``TrackerURL/validated(_:field:)``: http or https, at
    /// most 2 KB; empty clears it); false when there is no such issue.
    ///
    /// - Throws: `TrackerURLError` naming the field `tracker_url` when the URL is refused (nothing changes).
    public func setTrackerURL(_ text: String, issue: IssueID, project: ProjectID?, origin: AuditOrigin)
        async throws -> Bool
    {
        let url = try TrackerURL.validated(text, field: "tracker_url")
        let found = try await store.setTrackerURL(url, issue: issue, project: project, at: clock.now())
        if found {
            onChange()
            try await record(.issueTrackerURL, issue: issue, project: project, origin, after: url ?? "(none)")
        }
        return found
    }

    /// Sets an issue's note (see ``IssueNote/validated(_:)``; empty clears it); false when there is no such issue.
    public func setNote(_ text: String, issue: IssueID, project: ProjectID?, origin: AuditOrigin) async throws -> Bool {
        let note = try IssueNote.validated(text)
        let found = try await store.setNote(note, issue: issue, project: project, at: clock.now())
        if found {
            onChange()
            try await record(.issueNote, issue: issue, project: project, origin, after: note ?? "(none)")
        }
        return found
    }
}
