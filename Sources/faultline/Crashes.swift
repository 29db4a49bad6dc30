import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Formats
import Foundation
import Pipeline

/// `faultline crashes import`: Apple's crash reports brought in from files.
struct Crashes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring in crash reports written outside an SDK.", subcommands: [Import.self])

    /// Reads `.ips` and `.crash` files into a project through the data folder, exactly as `POST /api/v1/crashes/apple`
    /// would (the same parser, privacy rules, limits, duplicate check and rate limit), one line per file; exits 1
    /// when any file was refused. A running server on the same data picks the reports up (its symbolication worker
    /// reads the database).
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import Apple crash reports (.ips, .crash) into a project.",
            discussion: """
                Folders are searched (with their subfolders) for *.ips and *.crash files. Prints one line per file: \
                "accepted", "duplicate" (the same incident was imported before) or "refused" and why. Exits 1 when \
                any file was refused. To send files to a server on another machine, POST each one to \
                /api/v1/crashes/apple with an ingest key (docs/protocol.md).
                """)

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The project's slug.")
        var project: String

        @Argument(help: "Crash report files, or folders to search for *.ips and *.crash.")
        var paths: [String]

        @Option(help: "The environment to file the reports under (for example production).")
        var environment: String?

        @Option(
            help: """
                The release to file every report under instead of the version each report names (for example the \
                Sentry release your SDK's sessions use, com.example.app@2.1+42).
                """)
        var release: String?

        func validate() throws {
            if paths.isEmpty { throw ValidationError("name at least one file or folder") }
        }

        func run() async throws {
            let files = try Self.files(in: paths)
            guard !files.isEmpty else {
                throw ValidationError("no .ips or .crash file in \(paths.joined(separator: ", "))")
            }
            let refused = try await dataOptions.withComposition(announcing: true) { root in
                guard let slug = ProjectSlug(project), let found = try await root.projects.project(slug: slug) else {
                    throw ValidationError("no project '\(project)'")
                }
                let ingest = root.ingestService(storage: root.storagePressure(minFreeBytes: 0))
                var refused = 0
                for file in files {
                    let metadata = SwiftCrashReports.Metadata(
                        eventID: "", appVersion: release, appBuild: release == nil ? nil : "", environment: environment)
                    let line = await Self.importOne(file, into: found, ingest: ingest, metadata: metadata)
                    if line.hasPrefix("refused") { refused += 1 }
                    print(line)
                }
                return refused
            }
            if refused > 0 { throw ExitCode(1) }
        }

        /// One file in: its line of output.
        static func importOne(
            _ path: String, into project: Project, ingest: some ReportIngesting, metadata: SwiftCrashReports.Metadata
        )
            async -> String
        {
            let limits = IngestLimits()
            do {
                let bytes = try read(path, limit: limits.maxBatchBytes)
                let (report, payload) = try AppleCrashReports.prepare(
                    file: bytes, metadata: metadata,
                    scrubber: project.scrubber,
                    limits: limits, hasher: SHA256ContentHasher())
                let receipt = try await acceptPatiently(report, payload: payload, project: project, ingest: ingest)
                let id = report.report.eventID.rawValue
                return receipt.duplicates.isEmpty ? "accepted\t\(path)\tevent \(id)" : "duplicate\t\(path)\tevent \(id)"
            } catch let error as FormatError {
                return "refused\t\(path)\t\(error.field.map { "\($0): " } ?? "")\(error.message)"
            } catch let error as IngestError {
                return "refused\t\(path)\t\(error.message)"
            } catch {
                return "refused\t\(path)\t\(error)"
            }
        }

        /// `accept`, waiting out the project's rate limit (a folder of thousands is imported at the project's pace). A
        /// quota's window may last a month: past a quota the report is refused at once.
        static func acceptPatiently(
            _ report: PreparedReport, payload: StoredPayload, project: Project, ingest: some ReportIngesting
        )
            async throws -> ReportReceipt
        {
            var waits = 0
            while true {
                do {
                    return try await ingest.accept([report], payload: payload, for: project)
                } catch let error as IngestError
                    where error.code == .rateLimited && error.limitedBy == .rateLimit && waits < 60
                {
                    waits += 1
                    try await Task.sleep(for: .seconds(max(1, error.retryAfter ?? 1)))
                }
            }
        }

        static func read(_ path: String, limit: Int) throws -> [UInt8] {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.intValue ?? 0
            guard size <= limit else { throw FormatError(.tooLarge, "the file is larger than \(limit) bytes") }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw FormatError(.invalidField, "cannot be read")
            }
            return Array(data)
        }

        /// The files `paths` name: files as given, folders searched for `*.ips` and `*.crash` (sorted by path).
        static func files(in paths: [String]) throws -> [String] {
            var out: [String] = []
            for path in paths {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                    throw ValidationError("no such file or folder: \(path)")
                }
                guard isFolder.boolValue else {
                    out.append(path)
                    continue
                }
                let found = (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter {
                    let lower = $0.lowercased()
                    return lower.hasSuffix(".ips") || lower.hasSuffix(".crash")
                }
                out += found.sorted().map { path.hasSuffix("/") ? path + $0 : path + "/" + $0 }
            }
            return out
        }
    }
}
