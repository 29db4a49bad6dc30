import ArgumentParser
import FaultlineApp

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline render --data DIR --out SITE`: renders the whole dashboard once, e.g. to publish it elsewhere.
struct Render: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Render the static HTML dashboard of a data folder into a folder.")
    @OptionGroup var dataOptions: DataOptions

    @Option(help: "Folder to write the site into (created; default: the data folder's site/).")
    var out: String?

    @Option(
        help: "Folder with the dashboard's templates/ and static/ (env FAULTLINE_WEB; default: the checkout's web/).")
    var web: String?

    func run() async throws {
        guard let webDirectory = web ?? Composition.locateWebDirectory() else {
            throw ValidationError("cannot find the dashboard templates: pass --web DIR (the checkout's web/ folder)")
        }
        let (pages, folder) = try await dataOptions.withComposition { root in
            let renderer = try root.siteRenderer(webDirectory: webDirectory)
            return (try await root.render(with: renderer, since: nil, into: out), root.folder)
        }
        print("rendered \(pages) pages into \(out ?? folder + "/site")")
    }
}
