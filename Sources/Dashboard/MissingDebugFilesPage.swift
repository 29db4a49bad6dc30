import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/missing-debug-files.html`: build-ids whose reports were symbolicated without debug information (no file
/// at all, or only a stripped executable), with what the server holds for each.
struct MissingDebugFilesPage {
    /// One build-id.
    struct Row {
        var buildID: String
        var moduleName: String
        var reports: Int
        var releaseList: String
        /// What the server holds for the build-id ("nothing", or "executable (no debug information)").
        var holds: String
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
                reports: $0.reports, releaseList: $0.releases.isEmpty ? "unknown" : $0.releases.joined(separator: ", "),
                holds: Self.holds($0.has))
        }
        hasRows = !rows.isEmpty
    }

    /// What the "Server has" column says for the stored kinds of a build-id.
    static func holds(_ kinds: [DebugFileKind]) -> String {
        if kinds.contains(.debuginfo) { return "debug information (reports are being symbolicated again)" }
        if kinds.contains(.executable) { return "executable only (names, no files or lines)" }
        if kinds.contains(.sources) { return "source files only (no symbols)" }
        return "nothing"
    }
}
