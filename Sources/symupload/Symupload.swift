import ArgumentParser
import AsyncHTTPClient
import FaultlineCore
import Foundation
import SymbolUpload
import Synchronization

/// `symupload`: uploads debug files (ELF files; Mach-O files and dSYMs, one per architecture slice) to a
/// Faultline server from CI or an Xcode build phase.
///
/// Exit codes: 0 all done (and, with `--check`, nothing missing); 1 the server could not be reached or an
/// upload failed; 3 `--check` found a problem (a file without build-id or UUID, a build-id or UUID without
/// debug information among the files given, or one still missing on the server); 64 bad command line.
@main
struct Symupload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "symupload",
        abstract: "Upload debug files (ELF files, Mach-O files and dSYMs) to Faultline.",
        discussion: """
            Walks PATH (files and folders: a build folder, an Xcode archive, ${DWARF_DSYM_FOLDER_PATH}), reads
            each ELF file's GNU build-id and each Mach-O slice's LC_UUID (dSYM bundles, executables, dylibs,
            frameworks; a universal file gives one debug file per architecture) and what it holds, asks the
            server in one request which it lacks, and uploads only those, gzip'd and streamed.
            Exit codes: 0 done; 1 server unreachable or upload failed; 3 --check found a problem; 64 usage.
            """)

    @Option(help: "Faultline server URL, e.g. http://127.0.0.1:8080 (env FAULTLINE_URL).") var server: String?
    @Option(help: "The project's upload token (env FAULTLINE_UPLOAD_TOKEN).") var token: String?
    @Flag(help: "Ask the server what is missing, upload nothing.") var dryRun = false
    @Flag(
        help:
            "Exit 3 if any file has no build-id or UUID, or no debug information (no dSYM), or is still missing on the server; lists each (Mach-O by UUID, architecture and file)."
    )
    var check = false
    @Flag(
        name: [.short, .long],
        help: "Also list what was skipped as not a debug file (sources, object files, links out of the folder).")
    var verbose = false
    @Flag(help: "Print a JSON summary instead of text.") var json = false
    @Flag(
        help:
            "Also upload, per build-id, a source bundle of the source files its line tables name that exist on this machine under a source root (the dashboard then shows the lines around each frame; debuginfod clients can fetch them)."
    )
    var includeSources = false
    @Option(
        name: .customLong("source-root"),
        help: ArgumentHelp(
            "With --include-sources, also take source files under this folder (any number of times); the units' compilation directories always count.",
            valueName: "dir"))
    var sourceRoots: [String] = []
    @Option(help: "Attempts per request (retries back off exponentially).") var attempts = 4
    @Argument(help: "Files or folders to scan for debug files.") var paths: [String]

    var serverURL: String? { server ?? ProcessInfo.processInfo.environment["FAULTLINE_URL"] }
    var uploadToken: String? { token ?? ProcessInfo.processInfo.environment["FAULTLINE_UPLOAD_TOKEN"] }

    func validate() throws {
        guard let url = serverURL, url.hasPrefix("http://") || url.hasPrefix("https://") else {
            throw ValidationError("give the server as --server http://HOST:PORT or FAULTLINE_URL")
        }
        guard uploadToken?.isEmpty == false else {
            throw ValidationError("give the upload token as --token or FAULTLINE_UPLOAD_TOKEN")
        }
        guard !paths.isEmpty else { throw ValidationError("give at least one file or folder") }
        guard attempts >= 1 else { throw ValidationError("--attempts must be at least 1") }
        guard sourceRoots.isEmpty || includeSources else {
            throw ValidationError("--source-root needs --include-sources")
        }
        guard !includeSources || SourceBundler.isAvailable else { throw ValidationError(SourceBundler.unavailable) }
        _ = try explicitRoots()
    }

    /// The `--source-root` folders, resolved and checked.
    func explicitRoots() throws -> SourceRoots {
        var roots = SourceRoots()
        for folder in sourceRoots {
            do { try roots.addExplicit(folder) } catch { throw ValidationError("\(error)") }
        }
        return roots
    }

    func run() async throws {
        let output = Output(json: json)
        // The images of `.zip` archives of dSYMs are taken out here, and uploaded from here.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("symupload-zips-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let (files, skipped) = DebugFileScanner.scan(paths, scratch: scratch)
        output.line("found \(files.count) debug file\(files.count == 1 ? "" : "s")")
        for file in files where file.facts.format == .macho {
            output.line("  \(file.label): UUID \(file.displayID) (\(file.facts.architecture), \(file.facts.fileType))")
        }
        for s in skipped where verbose || !s.quiet { output.line("skipped \(s.path): \(s.reason)") }

        // Our own retries with backoff decide; AsyncHTTPClient's pool would otherwise keep retrying a refused
        // connection until the request's deadline.
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = .seconds(10)
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        let outcome: Result<Void, any Error>
        do {
            try await upload(files: files, skipped: skipped, output: output, http: http)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        try? await http.shutdown()
        try outcome.get()
    }

    func upload(files: [LocalDebugFile], skipped: [DebugFileScanner.Skipped], output: Output, http: HTTPClient)
        async throws
    {
        let client = FaultlineClient(client: http, server: serverURL!, token: uploadToken!, attempts: attempts)
        var report = Report(
            scanned: files.count, skipped: skipped.filter { verbose || !$0.quiet }.map { "\($0.path): \($0.reason)" })
        let missing: [BuildID: Set<DebugFileKind>]
        do {
            missing = try await client.missing(wants(files))
        } catch {
            output.error("\(error)")
            report.failed.append("\(error)")
            output.finish(report)
            throw ExitCode(1)
        }
        let plan = UploadPlan(files: files, missing: missing)
        for file in plan.present { report.present.append(file.label) }
        for upload in plan.uploads {
            let kinds = upload.kinds.sorted().map(\.rawValue).joined(separator: ", ")
            let label = "\(upload.file.label) (\(upload.file.displayID), \(kinds), \(Output.size(upload.file.size)))"
            let uploaded = Report.Uploaded(
                path: upload.file.label, buildID: upload.file.facts.buildID?.rawValue ?? "",
                kinds: upload.kinds.sorted().map(\.rawValue))
            if dryRun {
                output.line("would upload \(label)")
                report.uploaded.append(uploaded)
                continue
            }
            output.line("uploading \(label)")
            do {
                let total = upload.file.size
                try await client.upload(upload.file) { done in output.progress(label, done, total) }
                output.line("uploaded \(upload.file.label)")
                report.uploaded.append(uploaded)
            } catch {
                output.error("\(error)")
                report.failed.append("\(upload.file.label): \(error)")
            }
        }

        if includeSources {
            let roots = try explicitRoots()  // checked in validate(); a folder removed since then fails here
            await uploadSources(
                files: files, missing: missing, roots: roots, client: client, output: output, report: &report)
        }

        var problems = plan.problems
        if check {
            // The gate: ask again, after uploading, so "nothing to upload" can never hide a missing file.
            let stillMissing = dryRun ? missing : ((try? await client.missing(wants(files))) ?? missing)
            for file in files {
                guard let id = file.facts.buildID, let lacking = stillMissing[id],
                    !lacking.isDisjoint(with: file.facts.kinds)
                else { continue }
                problems.append(.init(.missingOnServer, of: file))
            }
        }
        report.problems = problems.map(\.description)
        if check { for p in problems { output.error(p.description) } }
        output.line(
            "\(files.count) scanned: \(report.uploaded.count) \(dryRun ? "to upload" : "uploaded"), \(report.present.count) already on the server, \(report.failed.count) failed"
                + (check ? ", \(problems.count) problem\(problems.count == 1 ? "" : "s")" : ""))
        output.finish(report)
        if !report.failed.isEmpty { throw ExitCode(1) }
        if check && !problems.isEmpty { throw ExitCode(3) }
    }
}

extension Symupload {
    /// What to ask the server about: the files' kinds, and with `--include-sources` the sources of every
    /// ELF build-id that has debug information here (source bundles of dSYMs are not made yet).
    func wants(_ files: [LocalDebugFile]) -> [BuildID: Set<DebugFileKind>] {
        var wants = UploadPlan.wants(files)
        if includeSources {
            for file in files where file.facts.format == .elf && file.facts.kinds.contains(.debuginfo) {
                if let id = file.facts.buildID { wants[id, default: []].insert(.sources) }
            }
        }
        return wants
    }

    /// Bundles and uploads the sources of each build-id the server lacks them for, from its smallest file
    /// with debug information (a split `.debug` file names the same sources as the unstripped binary).
    func uploadSources(
        files: [LocalDebugFile], missing: [BuildID: Set<DebugFileKind>], roots: SourceRoots, client: FaultlineClient,
        output: Output, report: inout Report
    ) async {
        var best: [BuildID: LocalDebugFile] = [:]
        for file in files where file.facts.format == .elf && file.facts.kinds.contains(.debuginfo) {
            guard let id = file.facts.buildID, missing[id]?.contains(.sources) == true else { continue }
            if let current = best[id], (current.size, current.path) <= (file.size, file.path) { continue }
            best[id] = file
        }
        guard !best.isEmpty else { return }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("symupload-sources-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for (id, file) in best.sorted(by: { $0.key < $1.key }) {
            let bundle: SourceBundler.Bundle?
            do {
                bundle = try SourceBundler.bundle(of: file, in: folder, roots: roots)
            } catch {
                output.error("cannot bundle the sources of \(file.path): \(error)")
                report.failed.append("\(file.path) (sources): \(error)")
                continue
            }
            guard let bundle else { continue }
            report.note(bundle, of: file, id: id, output: output)
            guard let bundled = bundle.file else {
                output.line(
                    "no sources of \(file.path) (\(id.rawValue)) can be bundled from this machine; none uploaded")
                continue
            }
            let label =
                "sources of \(file.path) (\(id.rawValue), \(bundle.included.count) files, \(bundle.absent.count) not found here, \(bundle.leftOut.count) left out, \(Output.size(bundled.size)))"
            if dryRun {
                output.line("would upload \(label)")
                report.uploaded.append(
                    .init(path: file.path, buildID: id.rawValue, kinds: [DebugFileKind.sources.rawValue]))
                continue
            }
            output.line("uploading \(label)")
            do {
                let total = bundled.size
                try await client.upload(bundled) { done in output.progress(label, done, total) }
                output.line("uploaded the sources of \(file.path)")
                report.uploaded.append(
                    .init(path: file.path, buildID: id.rawValue, kinds: [DebugFileKind.sources.rawValue]))
            } catch {
                output.error("\(error)")
                report.failed.append("\(file.path) (sources): \(error)")
            }
        }
    }
}

/// The `--json` summary.
struct Report: Encodable {
    struct Uploaded: Encodable {
        var path: String
        var buildID: String
        var kinds: [String]
        enum CodingKeys: String, CodingKey { case path, buildID = "build_id", kinds }
    }
    /// A source file the line tables of a build-id name that was not bundled (`--include-sources`).
    struct LeftOut: Encodable {
        var buildID: String
        var path: String
        var reason: String
        enum CodingKeys: String, CodingKey { case buildID = "build_id", path, reason }
    }
    var scanned: Int
    var uploaded: [Uploaded] = []
    var present: [String] = []
    var skipped: [String] = []
    var failed: [String] = []
    var problems: [String] = []
    var leftOut: [LeftOut] = []

    enum CodingKeys: String, CodingKey {
        case scanned, uploaded, present, skipped, failed, problems, leftOut = "left_out"
    }

    /// Most left-out files named on the summary line (the JSON summary lists them all).
    static let leftOutShown = 20

    /// Records and prints what a source bundle left out: one line naming the files and why, and the roots refused.
    mutating func note(_ bundle: SourceBundler.Bundle, of file: LocalDebugFile, id: BuildID, output: Output) {
        for root in bundle.refusedRoots {
            output.line("not a source root of \(file.path): \(root.path) (\(root.reason))")
        }
        leftOut += bundle.leftOut.map { LeftOut(buildID: id.rawValue, path: $0.path, reason: $0.reason.description) }
        guard !bundle.leftOut.isEmpty else { return }
        let count = bundle.leftOut.count
        let shown = bundle.leftOut.prefix(Self.leftOutShown).map(\.description).joined(separator: ", ")
        let more = count > Self.leftOutShown ? ", and \(count - Self.leftOutShown) more" : ""
        output.line("left out \(count) file\(count == 1 ? "" : "s") of \(file.path): \(shown)\(more)")
        if bundle.leftOut.contains(where: { $0.reason == .outsideRoots }) {
            output.line("  (a file outside the compilation directories is taken only under a --source-root DIR)")
        }
    }
}

/// Progress on a terminal, plain lines in CI logs, or nothing but the JSON summary with `--json`.
final class Output: Sendable {
    let json: Bool
    let terminal: Bool
    let lastPercent = Mutex(-1)

    init(json: Bool) {
        self.json = json
        self.terminal = isatty(2) != 0
    }

    func line(_ text: String) {
        guard !json else { return }
        if terminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        print(text)
    }

    func error(_ text: String) {
        FileHandle.standardError.write(Data("error: \(text)\n".utf8))
    }

    func progress(_ label: String, _ done: UInt64, _ total: UInt64) {
        guard terminal, !json, total > 0 else { return }
        let percent = Int(done * 100 / total)
        let changed = lastPercent.withLock { last -> Bool in
            defer { last = percent }
            return last != percent
        }
        guard changed else { return }
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(percent)% \(label.prefix(60))".utf8))
    }

    func finish(_ report: Report) {
        guard json else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        if let data = try? encoder.encode(report) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func size(_ bytes: UInt64) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) B"
    }
}
