import FaultlineCore
import Pipeline

extension Composition {
    /// The audit trail (``AuditTrail``): who changed what, when and from where.
    public var audit: any AuditTrail { stores.audit }

    /// Issue changes (status, notes, tracker issue, merges) over this data, recorded in the audit trail; `onChange`
    /// runs after each (the server re-renders).
    public func issueService(onChange: @escaping @Sendable () -> Void = {}) -> IssueService {
        IssueService(
            store: stores.insights, clock: clock, audit: stores.audit, issues: stores.reports, onChange: onChange)
    }
}
