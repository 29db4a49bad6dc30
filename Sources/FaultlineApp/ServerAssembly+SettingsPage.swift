import Dashboard
import FaultlineCore

extension ServerAssembly {
    /// A project's settings page (issue #37), rendered by `renderer`; a plain note when the template fails.
    static func settingsPage(_ renderer: SiteRenderer, _ overview: ProjectSettingsOverview) -> String {
        let path = "/\(overview.project.slug.rawValue)/settings"
        return (try? renderer.settingsPage(overview))
            ?? LoginFallback.html(error: "The settings page could not be rendered.", next: path)
    }
}
