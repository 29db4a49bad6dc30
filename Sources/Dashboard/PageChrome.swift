import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `layout.mustache` needs on every page: the `<title>`, the stylesheet link and the navigation, all
/// relative to the page's own path.
struct PageChrome {
    /// A link of the navigation; `current` marks the page itself (`aria-current="page"`).
    struct NavLink {
        var href: String
        var label: String
        var current: Bool
    }

    var pageTitle: String
    var stylesheetHref: String
    var navLinks: [NavLink]
    var generated: TimeView?
    /// Where the nav's search form goes (`<slug>/search`, served by the server); nil outside a project.
    var searchHref: String?
    /// The text the search box shows (the search page's own query).
    var searchQuery: String
    /// Where the page sends the browser at once (`<meta http-equiv="refresh">`): a merged issue's page, to the issue
    /// it was merged into. Nil for every other page.
    var refreshHref: String? = nil
    /// The signed-in person's links: their account page (`/account`, served by the server) and the sign-out form
    /// (`POST /logout`). A page rendered once for every reader has them too (it cannot know who reads it): there
    /// `/account` sends a reader who is not signed in to the login form. Nil on pages shown before signing in.
    var accountHref: String?
    var accountCurrent: Bool
    var signOutHref: String?
    /// The session's CSRF token for the sign-out form, on a page rendered for one session (`/account`). A page
    /// rendered for everyone has none: its sign-out asks once more, on a page that has the token (`POST /logout`).
    var csrf: String? = nil

    /// The chrome of the page at `path` (relative to the site root).
    ///
    /// - Parameters:
    ///   - title: the page's subject; the `<title>` adds the project and the site name.
    ///   - project: adds the project's pages to the navigation.
    ///   - now: when the page was rendered (shown in the footer); nil for pages served live.
    ///   - navigation: false for pages shown before signing in, which link nowhere.
    ///   - searchQuery: the text the search box shows.
    init(
        path: String, title: String, project: ProjectSlug?, now: Date?, navigation: Bool = true,
        searchQuery: String = ""
    ) {
        func link(_ target: String, _ label: String) -> NavLink {
            NavLink(href: SitePaths.relative(from: path, to: target), label: label, current: target == path)
        }
        var links = [link(SitePaths.index, "All projects")]
        if let project {
            links += [
                link(SitePaths.overview(project), "Overview"),
                link(SitePaths.issues(project), "Issues"),
                link(SitePaths.releases(project), "Releases"),
                link(SitePaths.alerts(project), "Alerts"),
                link(SitePaths.missingDebugFiles(project), "Missing debug files"),
                link(SitePaths.settings(project), "Settings"),
            ]
        }
        pageTitle = project.map { "\(title) · \($0.rawValue) · Faultline" } ?? "\(title) · Faultline"
        stylesheetHref = SitePaths.relative(from: path, to: SitePaths.stylesheet)
        navLinks = navigation ? links : []
        generated = now.map(TimeView.init)
        searchHref = navigation ? project.map { SitePaths.relative(from: path, to: SitePaths.search($0)) } : nil
        self.searchQuery = searchQuery
        accountHref = navigation ? SitePaths.relative(from: path, to: SitePaths.account) : nil
        accountCurrent = path == SitePaths.account
        signOutHref = navigation ? SitePaths.relative(from: path, to: SitePaths.logout) : nil
    }
}
