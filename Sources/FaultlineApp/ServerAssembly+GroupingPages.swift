import Dashboard
import FaultlineHTTP
import Pipeline

extension ServerAssembly {
    /// The fingerprint rules page (issue #36), through the same rules service as the API and the CLI; nil without the
    /// dashboard templates (the API still serves the rules).
    static func groupingPages(_ data: Composition, renderer: SiteRenderer?) -> GroupingRulesPages? {
        guard let renderer else { return nil }
        return GroupingRulesPages(
            service: data.groupingRules, projects: data.projects, audit: data.audit,
            render: { try renderer.groupingRulesPage($0) })
    }
}
