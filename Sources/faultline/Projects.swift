import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline projects create|list`.
struct Projects: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create and list projects.", subcommands: [Create.self, List.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project and print its ingest key and upload token (shown once).")

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "Short name: lowercase letters, digits, - and _.")
        var slug: String

        @Option(help: "Reports per second the project may post (default 1000).")
        var rateLimit: Double?

        @Flag(help: "Print JSON.")
        var json = false

        @Option(help: "The address SDKs reach the server at, for the Sentry DSN (env FAULTLINE_PUBLIC_URL; default http://127.0.0.1:8080).")
        var publicURL: String?

        /// `http://<ingest key>@host:port[/prefix]/<project id>`: what any Sentry SDK takes as its DSN.
        func dsn(key: String, project: ProjectID) throws -> String {
            let env = Environment.current
            let base = try publicURL ?? env.url("FAULTLINE_PUBLIC_URL")
                ?? "http://\(env.string("FAULTLINE_HOST") ?? "127.0.0.1"):\(try env.int("FAULTLINE_PORT", in: 0...65535) ?? 8080)"
            var rest = Substring(base)
            var scheme = "http"
            if let range = base.range(of: "://") {
                scheme = String(base[..<range.lowerBound])
                rest = base[range.upperBound...]
            }
            while rest.hasSuffix("/") { rest = rest.dropLast() }
            return "\(scheme)://\(key)@\(rest)/\(project.rawValue)"
        }

        func validate() throws {
            if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
                throw ValidationError("--public-url must start with http:// or https://")
            }
            guard ProjectSlug(slug) != nil else {
                throw ValidationError("'\(slug)' is not a slug: use 1–64 lowercase letters, digits, '-' or '_'")
            }
            if let rateLimit, !(rateLimit > 0) { throw ValidationError("--rate-limit must be positive") }
            // The DSN printed is built from these: a bad value is named now, not turned into a wrong DSN.
            _ = try dsn(key: "", project: ProjectID(rawValue: 1))
        }

        func run() async throws {
            let root = try Composition(folder: dataOptions.folder)
            defer { try? root.database.close() }
            let credentials = try await root.projects.create(slug: ProjectSlug(slug)!, rateLimitPerSecond: rateLimit)
            if json {
                let out: [String: String] = [
                    "id": String(credentials.project.id.rawValue), "slug": slug, "ingest_key": credentials.ingestKey,
                    "upload_token": credentials.uploadToken,
                    "sentry_dsn": try dsn(key: credentials.ingestKey, project: credentials.project.id),
                ]
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(out), as: UTF8.self))
            } else {
                print("project:      \(slug) (id \(credentials.project.id))")
                print("ingest key:   \(credentials.ingestKey)")
                print("upload token: \(credentials.uploadToken)")
                print("sentry dsn:   \(try dsn(key: credentials.ingestKey, project: credentials.project.id))")
                print("Keep these now: only their hashes are stored.")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List projects.")
        @OptionGroup var dataOptions: DataOptions

        func run() async throws {
            let root = try Composition(folder: dataOptions.folder)
            defer { try? root.database.close() }
            let projects = try await root.projects.all()
            if projects.isEmpty {
                print("no projects; create one with: faultline projects create SLUG")
                return
            }
            print("id\tslug\trate limit/s")
            for project in projects {
                print("\(project.id)\t\(project.slug)\t\(project.rateLimitPerSecond)")
            }
        }
    }
}

/// `faultline admin-token`: replaces the admin token and prints the new one.
struct AdminToken: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token", abstract: "Create or replace the admin token and print it (shown once).")
    @OptionGroup var dataOptions: DataOptions

    func run() async throws {
        let root = try Composition(folder: dataOptions.folder)
        defer { try? root.database.close() }
        print(try await root.projects.rotateAdminToken())
    }
}
