import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Issue state changes made by people (`faultline issues close|reopen|mute`, `PATCH /api/v1/issues/{id}`).
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

    /// Sets an issue's note (see ``IssueNote/validated(_:)``; empty clears it); false when there is no such issue.
    public func setNote(_ text: String, issue: IssueID, project: ProjectID?) async throws -> Bool {
        let note = try IssueNote.validated(text)
        let found = try await store.setNote(note, issue: issue, project: project, at: clock.now())
        if found { onChange() }
        return found
    }
}
