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

    /// Sets an issue's status; nil when there is no such issue (in `project`, when given).
    public func setStatus(_ status: IssueStatus, issue: IssueID, project: ProjectID?) async throws -> IssueSummary? {
        let result = try await store.setStatus(status, issue: issue, project: project, at: clock.now())
        if result != nil { onChange() }
        return result
    }
}
