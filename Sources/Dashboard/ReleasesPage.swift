import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/releases.html`: the project's releases, newest first.
struct ReleasesPage {
    var chrome: PageChrome
    var projectName: String
    var releaseRows: [ReleaseRowView]
    var hasReleases: Bool

    init(slug: ProjectSlug, releases: [ReleaseRow], now: Date) {
        let path = SitePaths.releases(slug)
        let rendered = Set(releases.map(\.release))
        chrome = PageChrome(path: path, title: "Releases", project: slug, now: now)
        projectName = slug.rawValue
        releaseRows = releases.map { ReleaseRowView($0, slug: slug, from: path, rendered: rendered) }
        hasReleases = !releaseRows.isEmpty
    }
}
