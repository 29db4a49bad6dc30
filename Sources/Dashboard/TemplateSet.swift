import FaultlineCore
import Mustache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The templates of `web/templates` and the stylesheet of `web/static`, read once from a folder given at run time
/// (not SwiftPM resources, so an operator can restyle the dashboard without rebuilding).
struct TemplateSet: Sendable {
    /// The templates the renderer needs: pages and the partials they include (Mustache renders a missing partial
    /// as nothing, so a missing file must fail here, not produce half a page).
    static let required = [
        "layout", "index", "overview", "issues", "issue", "issue_gone", "releases", "release", "alerts",
        "missing_debug_files", "login", "chart", "top_issues", "issue_cell", "release_table", "release_name",
        "alert_list", "event", "trend", "search", "event_page", "frame_list", "target", "thread_frames", "event_nav",
        "trending_issues", "trending_mark", "invite", "account", "login_code", "grouping_rules",
        "settings",
    ]

    let library: MustacheLibrary
    let stylesheet: String
    /// What issue pages name as their renderer (``IssuePageMark``): FNV-1a 64 of `build` and every template's name
    /// and text, so a page rendered by another program or from other templates is not taken as current.
    let stamp: String
    /// The "still being processed" banner of every page this set renders (`processing` in `layout`); nil: none.
    var notice: ProcessingNotice?

    /// Loads every `*.mustache` of `<web>/templates` and `<web>/static/style.css`.
    ///
    /// - Throws: `DashboardError` `.missingPath` naming the folder or file that is missing, `.badTemplate` naming
    ///   the template that does not parse.
    init(webDirectory: String, build: String) throws {
        let web = webDirectory.hasSuffix("/") ? String(webDirectory.dropLast()) : webDirectory
        let folder = web + "/templates"
        let files: [String]
        do {
            files = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw DashboardError(.missingPath, "dashboard templates folder not found: \(folder)", underlying: error)
        }
        var templates: [String: MustacheTemplate] = [:]
        var fingerprint = build
        for file in files.sorted() where file.hasSuffix(".mustache") {
            let path = folder + "/" + file
            let text = try Self.readText(path)
            fingerprint += "\u{1f}" + file + "\u{1f}" + text
            do {
                templates[String(file.dropLast(".mustache".count))] = try MustacheTemplate(string: text)
            } catch {
                throw DashboardError(.badTemplate, "dashboard template does not parse: \(path)", underlying: error)
            }
        }
        for name in Self.required where templates[name] == nil {
            throw DashboardError(.missingPath, "dashboard template not found: \(folder)/\(name).mustache")
        }
        library = MustacheLibrary(templates: templates)
        stamp = FNV1a.hex64(fingerprint)
        stylesheet = try Self.readText(web + "/static/style.css")
    }

    /// Renders `model` with the template `name`.
    func render(_ model: Any, as name: String) throws -> String {
        var tree = MustacheTree.convert(model)
        if let notice, var fields = tree as? [String: Any] {
            fields["processing"] = ["text": notice.text, "time": notice.time, "iso": notice.iso]
            tree = fields
        }
        guard let html = library.render(tree, withTemplate: name) else {
            throw DashboardError(.renderFailed, "dashboard template not registered: \(name)")
        }
        return html
    }

    private static func readText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DashboardError(.missingPath, "dashboard file not found: \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
