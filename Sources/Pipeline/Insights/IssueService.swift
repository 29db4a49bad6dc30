import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issue state changes made by people (`faultline issues close|reopen|mute|merge|unmerge`, `PATCH /api/v1/issues/{id}`,
/// `POST /api/v1/issues/{id}/merge|unmerge`, the dashboard's issue forms).
public struct IssueService: Sendable {
    let store: any IssueStateStore
    let clock: any WallClock
    let onChange: @Sendable () -> Void

    public init(store: any IssueStateStore, clock: any WallClock, onChange: @escaping @Sendable () -> Void = {}) {
        self.store = store
        self.clock = clock
        self.onChange = onChange
    }

    /// Sets an issue's status, recording `by` as who changed it; nil when there is no such issue (in `project`,
    /// when given).
    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?, by: String) async throws
        -> IssueSummary?
    {
        let result = try await store.setStatus(status, issue: issue, project: project, by: by, at: clock.now())
        if result != nil { onChange() }
        return result
    }

    /// Merges `others` into `survivor` (`IssueMerge`: the survivor keeps its id and status, the others' events and
    /// future events join it), all of `project` (nil: the survivor's), recording `by`. Throws `IssueMergeError` when
    /// the merge is refused.
    public func merge(_ others: [IssueID], into survivor: IssueID, project: ProjectID?, by: String) async throws
        -> IssueMergeResult
    {
        let result = try await store.merge(others, into: survivor, project: project, by: by, at: clock.now())
        onChange()
        return result
    }

    /// Splits `fingerprint` back out of `survivor` (of `project`, when given): its reports are filed again, into an
    /// issue of their own, as the symbolication worker catches up. Throws `IssueMergeError` when it was not merged
    /// into the survivor.
    public func unmerge(fingerprint: String, from survivor: IssueID, project: ProjectID?) async throws
        -> IssueUnmergeResult
    {
        let result = try await store.unmerge(
            fingerprint: fingerprint, from: survivor, project: project, at: clock.now())
        onChange()
        return result
    }

    /// Records the URL of the tracker issue opened for an issue (``TrackerURL/validated(_:field:)``: http or https, at
    /// most 2 KB; empty clears it); false when there is no such issue.
    ///
    /// - Throws: `TrackerURLError` naming the field `tracker_url` when the URL is refused (nothing changes).
    public func setTrackerURL(_ text: String, issue: IssueID, project: ProjectID?) async throws -> Bool {
        let url = try TrackerURL.validated(text, field: "tracker_url")
        let found = try await store.setTrackerURL(url, issue: issue, project: project, at: clock.now())
        if found { onChange() }
        return found
    }

    /// Sets an issue's note (see ``IssueNote/validated(_:)``; empty clears it); false when there is no such issue.
    public func setNote(_ text: String, issue: IssueID, project: ProjectID?) async throws -> Bool {
        let note = try IssueNote.validated(text)
        let found = try await store.setNote(note, issue: issue, project: project, at: clock.now())
        if found { onChange() }
        return found
    }
}
