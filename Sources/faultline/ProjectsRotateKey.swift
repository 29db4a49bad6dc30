import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Projects {
    /// `faultline projects rotate-key SLUG --ingest [--keep-old-days N] | --upload`: a new project secret, shown once.
    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Replace a project's ingest key or upload token and print the new one (shown once).",
            discussion: """
                --ingest makes a new ingest key (and Sentry DSN); the old key stays accepted for --keep-old-days \
                days (default 7, 0: refused at once), so apps shipped with the old DSN keep reporting until the \
                new one ships. --upload makes a new upload token; the old one is refused at once. A running server \
                sees the change within a minute. The audit trail records the rotation, never the key.
                """)

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The project's slug.")
        var slug: String

        @Flag(help: "Replace the ingest key (the DSN's key that SDKs send).")
        var ingest = false

        @Flag(help: "Replace the upload token (CI's symbol uploads).")
        var upload = false

        @Option(help: "Days the old ingest key stays accepted (0-\(KeyRotation.maxKeepOldDays); default 7).")
        var keepOldDays: Int?

        @Option(
            help:
                "The address SDKs reach the server at, for the Sentry DSN (env FAULTLINE_PUBLIC_URL; default: the address the server last listened on)."
        )
        var publicURL: String?

        @Flag(help: "Print JSON.")
        var json = false

        func validate() throws {
            guard ingest != upload else { throw ValidationError("give one of --ingest or --upload") }
            if upload, keepOldDays != nil {
                throw ValidationError("--keep-old-days is for --ingest: an old upload token is refused at once")
            }
            if let keepOldDays, !(0...KeyRotation.maxKeepOldDays).contains(keepOldDays) {
                throw ValidationError("--keep-old-days must be from 0 to \(KeyRotation.maxKeepOldDays)")
            }
            if let publicURL, !(publicURL.hasPrefix("http://") || publicURL.hasPrefix("https://")) {
                throw ValidationError("--public-url must start with http:// or https://")
            }
            guard ProjectSlug(slug) != nil else { throw ValidationError("no project with the slug '\(slug)'") }
        }

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            guard let slug = ProjectSlug(slug),
                let rotation = try await root.projects.rotate(
                    ingest ? .ingest : .upload, slug: slug, keepOldDays: keepOldDays ?? KeyRotation.defaultKeepOldDays,
                    by: .cli)
            else { throw ValidationError("no project with the slug '\(self.slug)'") }
            let dsn =
                ingest
                ? Projects.sentryDSN(
                    base: try ServerURLRecord.base(publicURL: publicURL, folder: dataOptions.filesFolder),
                    key: rotation.secret, project: rotation.project.id) : nil
            let until = rotation.oldAcceptedUntil.map { $0.formatted(.iso8601) }
            if json {
                let out = RotatedOut(
                    slug: rotation.project.slug.rawValue, kind: rotation.kind.rawValue,
                    ingestKey: ingest ? rotation.secret : nil, uploadToken: upload ? rotation.secret : nil,
                    sentryDSN: dsn, oldAcceptedUntil: until)
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(out), as: UTF8.self))
                return
            }
            print("project:      \(rotation.project.slug) (id \(rotation.project.id))")
            if let dsn {
                print("ingest key:   \(rotation.secret)")
                print("sentry dsn:   \(dsn)")
                print("old key:      " + (until.map { "accepted until \($0)" } ?? "refused from now on"))
            } else {
                print("upload token: \(rotation.secret)")
                print("old token:    refused from now on")
            }
            print("Keep it now: only its hash is stored.")
        }
    }

    /// What `projects rotate-key --json` prints (the field of the other kind is absent).
    struct RotatedOut: Encodable {
        var slug: String
        var kind: String
        var ingestKey: String?
        var uploadToken: String?
        var sentryDSN: String?
        /// ISO 8601; absent when the old secret was refused at once.
        var oldAcceptedUntil: String?
        enum CodingKeys: String, CodingKey {
            case slug, kind, ingestKey = "ingest_key", uploadToken = "upload_token", sentryDSN = "sentry_dsn"
            case oldAcceptedUntil = "old_accepted_until"
        }
    }
}
