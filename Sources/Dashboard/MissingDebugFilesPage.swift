import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/missing-debug-files.html`: build-ids whose debug files reports needed and the server lacks.
struct MissingDebugFilesPage {
    /// One build-id.
    struct Row {
        var buildID: String
        var moduleName: String
        var reports: Int
        var releaseList: String
    }

    var chrome: PageChrome
    var projectName: String
    var rows: [Row]
    var hasRows: Bool

    init(slug: ProjectSlug, missing: [MissingDebugFileSummary], now: Date) {
        chrome = PageChrome(
            path: SitePaths.missingDebugFiles(slug), title: "Missing debug files", project: slug, now: now)
        projectName = slug.rawValue
        rows = missing.map {
            Row(
                buildID: $0.buildID.rawValue, moduleName: $0.module.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown",
                reports: $0.reports, releaseList: $0.releases.isEmpty ? "unknown" : $0.releases.joined(separator: ", "))
        }
        hasRows = !rows.isEmpty
    }
}
