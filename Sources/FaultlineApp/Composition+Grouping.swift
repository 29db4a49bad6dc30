import FaultlineCore
import Pipeline

extension Composition {
    /// The projects' fingerprint rules, their dry run and regroup (issue #36).
    public var groupingRules: GroupingRulesService {
        GroupingRulesService(store: stores.projects, clock: clock, audit: stores.audit)
    }
}
