import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `<slug>/missing-debug-files.html`: build-ids whose reports were symbolicated without debug information (no file
/// at all, or only a stripped executable), with what the server holds for each, and per release which are missing
/// (Crashlytics' "missing dSYM" list). Apple's modules are named as Apple's tools name them: the UUID upper-case and
/// hyphenated, the missing file a dSYM.
struct MissingDebugFilesPage {
    /// One build-id.
    struct Row {
        /// The build-id, or a Mach-O module's UUID in Apple's spelling.
        var buildID: String
        var moduleName: String
        var reports: Int
        var releaseList: String
        /// What the server holds for the build-id ("nothing", or "executable (no debug information)").
        var holds: String
        /// A Mach-O module (by its UUID's shape): its debug file is a dSYM.
        var apple: Bool
        /// "dSYM" for a Mach-O module, "debug file" otherwise.
        var fileKind: String
        /// One of Apple's own libraries (UIKitCore, libswiftCore.dylib): no dSYM of the app's to upload, so it is
        /// left out of the per-release lists.
        var systemLibrary: Bool
    }

    /// One release and what its reports lacked.
    struct ReleaseGroup {
        var releaseName: String
        var lacking: [Row]
        var lackingCount: Int
    }

    var chrome: PageChrome
    var projectName: String
    var rows: [Row]
    var hasRows: Bool
    var releaseGroups: [ReleaseGroup]
    var hasReleaseGroups: Bool

    init(slug: ProjectSlug, missing: [MissingDebugFileSummary], now: Date) {
        chrome = PageChrome(
            path: SitePaths.missingDebugFiles(slug), title: "Missing debug files", project: slug, now: now)
        projectName = slug.rawValue
        rows = missing.map(Self.row)
        hasRows = !rows.isEmpty
        var byRelease: [String: [Row]] = [:]
        for (summary, row) in zip(missing, rows) where !row.systemLibrary {
            for release in summary.releases { byRelease[release, default: []].append(row) }
        }
        releaseGroups = byRelease.keys.sorted(by: >).map { release in
            let lacking = byRelease[release] ?? []
            return ReleaseGroup(releaseName: release, lacking: lacking, lackingCount: lacking.count)
        }
        hasReleaseGroups = !releaseGroups.isEmpty
    }

    static func row(_ summary: MissingDebugFileSummary) -> Row {
        let apple = AppleUUID.looksLikeMachOUUID(summary.buildID)
        let system = apple && summary.module.map { Grouping.isSystemModule(name: $0, path: nil) } == true
        return Row(
            buildID: apple ? AppleUUID.spelling(summary.buildID) : summary.buildID.rawValue,
            moduleName: summary.module.flatMap { $0.isEmpty ? nil : $0 } ?? "unknown", reports: summary.reports,
            releaseList: summary.releases.isEmpty ? "unknown" : summary.releases.joined(separator: ", "),
            holds: system
                ? "an Apple system library (its symbols are Apple's; nothing to upload)"
                : holds(summary.has, apple: apple),
            apple: apple, fileKind: apple ? "dSYM" : "debug file", systemLibrary: system)
    }

    /// What the "Server has" column says for the stored kinds of a build-id (`apple`: a Mach-O module, whose debug
    /// file is a dSYM).
    static func holds(_ kinds: [DebugFileKind], apple: Bool = false) -> String {
        if kinds.contains(.debuginfo) { return "debug information (reports are being symbolicated again)" }
        if kinds.contains(.executable) {
            return apple
                ? "executable only, no dSYM (names, no files or lines)" : "executable only (names, no files or lines)"
        }
        if kinds.contains(.sources) { return "source files only (no symbols)" }
        return apple ? "no dSYM" : "nothing"
    }
}
