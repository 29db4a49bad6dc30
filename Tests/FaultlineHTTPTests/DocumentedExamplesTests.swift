import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

/// Every curl command in README.md and docs/*.md, run as written with the real `curl` against the real server.
///
/// Commands are taken from fenced code blocks: a logical shell command (continuation lines and multi-line quoted
/// bodies joined) that runs `curl`. Only what a reader must replace is substituted: the host
/// (`http://127.0.0.1:8080`, `http://faultline:8080`), the example build-id and issue number (by the real ones);
/// credentials and ids come from the variables the docs use (`$KEY`, `$UPLOAD_TOKEN`, `$FAULTLINE_DEMO_…`, …), and
/// the files they name (`crash.json`, `build/app.debug`, `Demo-2026-11-20-103351.ips`, `Demo.crash`) exist in the
/// working folder: the 3.2 body of protocol.md, the Swift runtime's crash file of a real program, a real ELF file,
/// Apple's crash reports (`AppleCrashSamples`). A comment line `# NNN …` right after a command
/// is its documented status; otherwise any 2xx passes.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DocumentedExamplesTests {
    struct Example: CustomStringConvertible {
        var file: String
        var line: Int
        var command: String
        var expected: Int?
        var description: String { "\(file):\(line): \(command)" }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The fenced code blocks of a Markdown text: (first line number, lines).
    static func codeBlocks(_ text: String) -> [(start: Int, lines: [String])] {
        var blocks: [(Int, [String])] = []
        var current: (Int, [String])?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                if let open = current {
                    blocks.append(open)
                    current = nil
                } else {
                    current = (index + 2, [])
                }
            } else if current != nil {
                current!.1.append(line)
            }
        }
        return blocks
    }

    /// Where a shell line leaves its quoting: whether it ends inside single or double quotes, or with a `\`
    /// continuation. `#` starts a comment at a word boundary outside quotes.
    struct ShellState {
        var single = false
        var double = false
        var continues = false
        /// The text scanned so far without comments.
        var code = ""
        mutating func scan(_ line: String) {
            continues = false
            var escaped = false
            var previous: Character = " "
            if !code.isEmpty { code.append("\n") }
            for c in line {
                defer { previous = c }
                if escaped {
                    escaped = false
                    code.append(c)
                    continue
                }
                if single {
                    if c == "'" { single = false }
                    code.append(c)
                    continue
                }
                if double {
                    if c == "\\" { escaped = true } else if c == "\"" { double = false }
                    code.append(c)
                    continue
                }
                switch c {
                case "'": single = true
                case "\"": double = true
                case "\\": escaped = true
                case "#" where previous == " " || previous == "\t": return
                default: break
                }
                code.append(c)
            }
            continues = escaped
        }
        var open: Bool { single || double || continues }
    }

    /// Whether shell code runs curl (as a command word, not in a comment or as an argument's text).
    static func runsCurl(_ code: String) -> Bool {
        code.range(of: #"(^|[\s|;&(])curl\s"#, options: .regularExpression) != nil
    }

    /// The curl commands of a Markdown text.
    static func examples(in text: String, file: String) -> [Example] {
        var out: [Example] = []
        for (start, lines) in codeBlocks(text) {
            var i = 0
            while i < lines.count {
                var state = ShellState()
                var command = [lines[i]]
                state.scan(lines[i])
                var j = i + 1
                while state.open, j < lines.count {
                    command.append(lines[j])
                    state.scan(lines[j])
                    j += 1
                }
                let text = command.joined(separator: "\n")
                if Self.runsCurl(state.code) {
                    var expected: Int?
                    if j < lines.count,
                        let match = lines[j].range(of: #"^\s*#\s*([1-5][0-9][0-9])\b"#, options: .regularExpression)
                    {
                        expected = Int(lines[j][match].filter(\.isNumber))
                    }
                    out.append(Example(file: file, line: start + i, command: text, expected: expected))
                }
                i = j
            }
        }
        return out
    }

    /// README.md, then docs/*.md in name order.
    static func documents() throws -> [(name: String, text: String)] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root + "/docs").filter { $0.hasSuffix(".md") }
            .sorted()
        return try (["README.md"] + docs.map { "docs/" + $0 }).map {
            ($0, try String(contentsOfFile: root + "/" + $0, encoding: .utf8))
        }
    }

    @Test func theExtractorFindsWholeCommandsAndTheirStatus() {
        let text = """
            Intro `curl --inline` is not a command.
            ```sh
            source env   # not curl
            curl -s http://h/a \\
              -d '{"a":
                   "b # not a comment"}'
            # 202 {"accepted": []}
            gzip -c f | curl -sS --data-binary @- "$BASE/x"    # {"status":"ok"}
            echo curl
            ```
            """
        let found = Self.examples(in: text, file: "t.md")
        #expect(found.count == 2)
        #expect(found.first?.command.components(separatedBy: "\n").count == 3)
        #expect(found.first?.line == 4)
        #expect(found.first?.expected == 202)
        #expect(found.last?.command.hasPrefix("gzip -c f | curl") == true)
        #expect(found.last?.expected == nil)
    }

    @Test func everyCurlExampleInTheDocsWorksAsWritten() async throws {
        let documents = try Self.documents()
        let examples = documents.flatMap { Self.examples(in: $0.text, file: $0.name) }
        // Every fenced line that runs curl belongs to an extracted example (the extractor missed none).
        for document in documents {
            for (start, lines) in Self.codeBlocks(document.text) {
                for (offset, line) in lines.enumerated()
                where line.hasPrefix("curl ") || line.contains(" curl ") || line.contains("|curl ") {
                    let number = start + offset
                    #expect(
                        examples.contains {
                            $0.file == document.name && number >= $0.line
                                && number < $0.line + $0.command.components(separatedBy: "\n").count
                        },
                        "\(document.name):\(number) runs curl but was not extracted")
                }
            }
        }
        #expect(Set(examples.map(\.file)).isSuperset(of: ["README.md", "docs/protocol.md", "docs/symbols.md"]))

        // Given a server, a project, a grouped issue, a real Swift crash file and a real ELF file.
        let scratch = try TempFolder("doc-examples")
        let (binary, swiftCrash) = try SwiftCrashFixture.crash(in: scratch)
        let buildID = try #require(try ELFFixtures.readelfBuildID(binary))
        let folder = ServerProcess.newFolder()
        let project = try await ServerProcess.createProject("demo", in: folder)
        let admin = try await SecurityEndToEndTests.adminToken(folder)
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        let http = HTTP(client: HTTPClient.shared)
        let seeded = try await http.postReports(server.baseURL, key: project.ingest, Payloads.crash(1), gzip: false)
        #expect(seeded.status == 202)
        var issue: Int?
        for _ in 0..<200 where issue == nil {
            let issues = try await http.send(
                .GET, server.baseURL + "/api/v1/issues", headers: [("Authorization", "Bearer \(project.upload)")])
            issue = ((issues.json["issues"] as? [[String: Any]])?.first?["id"] as? Int)
            if issue == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let issueID = try #require(issue)

        let protocolText = try #require(documents.first { $0.name == "docs/protocol.md" }?.text)
        let nativeCrash = try #require(Self.crashBody(protocolText), "protocol.md has no 3.2 JSON body")
        let environment = [
            "BASE": server.baseURL, "KEY": project.ingest, "UPLOAD": project.upload, "INGEST_KEY": project.ingest,
            "UPLOAD_TOKEN": project.upload, "FAULTLINE_DEMO_INGEST_KEY": project.ingest,
            "FAULTLINE_DEMO_UPLOAD_TOKEN": project.upload, "FAULTLINE_DEMO_PROJECT_ID": String(project.id),
            "ID": "install-doc-1", "SID": "session-doc-1", "ISSUE": String(issueID), "ADMIN_TOKEN": admin,
        ]
        var ran = 0
        for document in documents {
            let mine = examples.filter { $0.file == document.name }
            guard !mine.isEmpty else { continue }
            // Each document runs in its own folder with the files its text names.
            let work = try TempFolder("doc-\(document.name.replacingOccurrences(of: "/", with: "-"))")
            let crash = document.name == "docs/symbols.md" ? swiftCrash : Data(nativeCrash.utf8)
            try crash.write(to: URL(fileURLWithPath: work.file("crash.json")))
            // Apple's crash reports, as protocol.md's `crashes/apple` examples name them.
            try Data(AppleCrashSamples.ips().utf8).write(
                to: URL(fileURLWithPath: work.file("Demo-2026-11-20-103351.ips")))
            try Data(AppleCrashSamples.crash().utf8).write(to: URL(fileURLWithPath: work.file("Demo.crash")))
            try FileManager.default.createDirectory(atPath: work.file("build"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: binary, toPath: work.file("build/app.debug"))
            // App Store Connect's ZIP of dSYMs, as symbols.md's `POST /api/v1/debug-files` example names it.
            let dSYM = try AppleBuilds.build(.init(.c, .arm64, .iOS)).dwarfFile
            try Command.check(
                "python3",
                [
                    "-c",
                    "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z: "
                        + "z.write(sys.argv[2], 'Shop.app.dSYM/Contents/Resources/DWARF/Shop')", work.file("dSYMs.zip"),
                    dSYM,
                ])
            try FileManager.default.createDirectory(atPath: work.file("data"), withIntermediateDirectories: true)
            try work.write(
                "data/demo-credentials.env",
                ["FAULTLINE_DEMO_PROJECT_ID", "FAULTLINE_DEMO_INGEST_KEY", "FAULTLINE_DEMO_UPLOAD_TOKEN"]
                    .map { "\($0)=\(environment[$0]!)" }.joined(separator: "\n") + "\n")

            for example in mine {
                let script =
                    "set -euo pipefail\n"
                    + Self.substituted(example.command, base: server.baseURL, buildID: buildID, issue: issueID)
                let result = try Command.run("bash", ["-c", script], in: work.path, environment: environment)
                let statuses = result.err.components(separatedBy: "\n").compactMap { line -> Int? in
                    guard line.hasPrefix("DOCSTATUS ") else { return nil }
                    return Int(line.dropFirst("DOCSTATUS ".count))
                }
                #expect(result.status == 0, "\(example)\nexit \(result.status): \(result.err)")
                #expect(!statuses.isEmpty, "\(example): no HTTP answer\n\(result.err)")
                for status in statuses {
                    if let expected = example.expected {
                        #expect(
                            status == expected,
                            "\(example)\nanswered \(status), documented \(expected): \(result.out.prefix(600))")
                    } else {
                        #expect(
                            (200..<300).contains(status), "\(example)\nanswered \(status): \(result.out.prefix(600))")
                    }
                }
                ran += 1
            }
        }
        #expect(ran == examples.count)
    }

    /// The JSON body of protocol.md's "3.2 Example: crash report" (what its examples call `crash.json`).
    static func crashBody(_ text: String) -> String? {
        guard let section = text.range(of: "### 3.2 ") else { return nil }
        let rest = String(text[section.upperBound...])
        return codeBlocks(rest).first.map { $0.lines.joined(separator: "\n") }
    }

    /// The command with the reader's placeholders replaced, and curl told to report its status on stderr.
    static func substituted(_ command: String, base: String, buildID: String, issue: Int) -> String {
        var text = command
        for host in ["http://127.0.0.1:8080", "http://faultline:8080"] {
            text = text.replacingOccurrences(of: host, with: base)
        }
        text = text.replacingOccurrences(of: "2aaa9d4a628f71c3b66c83312a946a2db7977ff3", with: buildID)
        text = text.replacingOccurrences(
            of: #"(?<=/issues/|[?&]issue=)1\b"#, with: String(issue), options: .regularExpression)
        return text.replacingOccurrences(
            of: #"(^|[\s|;&(])curl(\s)"#, with: "$1curl --max-time 60 -w '%{stderr}\\\\nDOCSTATUS %{http_code}\\\\n'$2",
            options: .regularExpression)
    }
}
