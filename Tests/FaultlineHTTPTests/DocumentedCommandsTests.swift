import Foundation
import TestSupport
import Testing

/// Every `faultline` and `symupload` command in README.md and docs/*.md, run as written with the built binaries
/// against a real server and its data folder, as `DocumentedExamplesTests` runs the curl commands.
///
/// A command is a logical shell command (continuation lines joined) in a shell or untagged fenced block whose command
/// word is `faultline` or `symupload` (bare, behind a path such as `.build/release/`, behind `VAR=value` or a `$ `
/// prompt). Only what a reader must replace is substituted: the hosts, the example paths (`/var/lib/faultline`,
/// `/backups/…`), `[optional]` brackets (the options inside are passed) and a few named placeholders (`RULES_FILE`,
/// `--project P`, `LOGIN`, `tokens revoke ID`). Every command must exit 0, or the status its document gives
/// (`expectedStatus`), and never with a usage error. Every command is run unless `skipped` names it with the reason it
/// cannot run here, so a new example is run (or fails) without anyone remembering to add it.
@Suite(.serialized, .tags(.endToEnd), .provisioned) struct DocumentedCommandsTests {
    typealias Example = DocumentedExamplesTests.Example

    /// Commands that cannot run in a test, by their first line without comments (`tableKey`), with the reason.
    static let skipped: [String: String] = [
        "faultline serve --data ./data &": "starts a server: the test runs its own on the same binary",
        "faultline serve --data /var/lib/faultline-restored":
            "starts a server: BackupEndToEndTests serves a restored folder and compares its answers",
        "faultline serve --database \"postgres://faultline@db/faultline_restored\" --blobs /backups/files":
            "PostgreSQL: PostgresBackupRecipeTests runs this recipe",
        "faultline migrate --check --database \"postgres://faultline@db/faultline\"":
            "PostgreSQL, which this suite does not start; the SQLite form above runs",
        "faultline projects create app --database postgres://faultline@db.internal/faultline --blobs /mnt/faultline":
            "PostgreSQL and a shared folder of several nodes",
        "faultline serve --database postgres://faultline@db.internal/faultline --blobs /mnt/faultline --host 0.0.0.0":
            "starts a PostgreSQL node (twice in scaling.md)",
        "FAULTLINE_DATABASE_PASSWORD=… faultline migrate --from data/ \\":
            "PostgreSQL; `…` is the reader's password",
        "faultline serve --public-url https://faultline.example.com \\":
            "starts a server against an OIDC provider",
        "FAULTLINE_SMTP_PASSWORD_FILE=/run/secrets/smtp faultline alerts test-email --to you@example.com \\":
            "needs an SMTP server: EmailEndToEndTests sends through a real one",
        ".build/release/faultline alerts configure demo --webhook \"$SLACK_WEBHOOK_URL\" --crash-free-target 99.5":
            "the reader's Slack URL must resolve to a public address: no DNS, and no posts to the Internet, here",
        "symupload --server http://faultline:8080 --token $UPLOAD_TOKEN build/ [--include-sources [--source-root DIR]…] [--check] [--dry-run] [--json] [-v]":
            "a synopsis: `…` repeats an option",
    ]

    /// Documented exit statuses other than 0, by `tableKey`.
    static let expectedStatus: [String: Int32] = [
        // release-gate.md: 2 is "not enough data yet", which a release with no sessions is.
        "faultline gate --project shop --release 2.4.0 [--baseline 2.3.0] [--min-sessions 100] [--json]": 2,
        // protocol.md shows one file refused, and "exits 1 when any file was refused".
        "$ faultline crashes import ios ~/Downloads/DiagnosticReports": 1,
    ]

    /// The command word, at the start of a command (after `$ `, `VAR=value`, `|`, `;`, `&` or `(`).
    static let commandWord =
        #"(?m)(^|[|;&(])\s*(\$\s+)?([A-Za-z_][A-Za-z0-9_]*=\S*\s+)*([\w./-]*/)?(faultline|symupload)\s"#

    /// The `faultline` and `symupload` commands of a Markdown text; `expected` is unused (see `expectedStatus`).
    static func examples(in text: String, file: String) -> [Example] {
        let allLines = text.components(separatedBy: "\n")
        var out: [Example] = []
        for (start, lines) in DocumentedExamplesTests.codeBlocks(text) {
            let language = allLines[start - 2].trimmingCharacters(in: .whitespaces).dropFirst(3)
            guard ["", "sh", "bash", "shell", "console"].contains(language) else { continue }
            var i = 0
            while i < lines.count {
                var state = DocumentedExamplesTests.ShellState()
                state.scan(lines[i])
                var j = i + 1
                while state.open, j < lines.count {
                    state.scan(lines[j])
                    j += 1
                }
                let code = state.code.trimmingCharacters(in: .whitespaces)
                if code.range(of: commandWord, options: .regularExpression) != nil {
                    out.append(Example(file: file, line: start + i, command: Self.key(code), expected: nil))
                }
                i = j
            }
        }
        return out
    }

    /// A command's text without its comments and the trailing blanks they leave.
    static func key(_ code: String) -> String {
        code.components(separatedBy: "\n").map {
            $0.replacingOccurrences(of: #"\s+$"#, with: "", options: .regularExpression)
        }
        .joined(separator: "\n")
    }

    @Test func theExtractorFindsCommandWordsOnly() {
        let text = """
            ```sh
            .build/release/faultline projects list   # lists
            FAULTLINE_X=1 faultline backup --data d \\
              --to b
            $ faultline crashes import ios x
            CI: symupload build/ ──► POST
            echo faultline serve
            ```
            ```yaml
            run: faultline gate
            ```
            """
        let found = Self.examples(in: text, file: "t.md")
        #expect(
            found.map(\.command) == [
                ".build/release/faultline projects list", "FAULTLINE_X=1 faultline backup --data d \\\n  --to b",
                "$ faultline crashes import ios x",
            ])
        #expect(found.map(\.line) == [2, 3, 5])
    }

    @Test func everyFaultlineCommandInTheDocsWorksAsWritten() async throws {
        let documents = try DocumentedExamplesTests.documents()
        let examples = documents.flatMap { Self.examples(in: $0.text, file: $0.name) }
        #expect(Set(examples.map(\.file)).isSuperset(of: ["README.md", "docs/people.md", "docs/operations.md"]))
        let unknownSkips = Set(Self.skipped.keys).union(Self.expectedStatus.keys).subtracting(
            examples.map(Self.tableKey))
        #expect(unknownSkips.isEmpty, "skip entries that match no documented command: \(unknownSkips)")

        // Given a server with the projects the docs name, a real program, an Xcode archive and Apple crash reports.
        let work = try TempFolder("doc-commands")
        let folder = ServerProcess.newFolder()
        let demo = try await ServerProcess.createProject("demo", in: folder)
        for slug in ["shop", "ios"] { _ = try await ServerProcess.createProject(slug, in: folder) }
        let server = try await ServerProcess(folder: folder)
        defer { server.cleanUp() }
        try Self.prepare(work)
        // email.md's person: people.md invites her too, but email.md comes first.
        let invited = try await ServerProcess.run(
            ["users", "invite", "ada@example.org", "--role", "member", "--project", "shop", "--data", folder])
        #expect(invited.status == 0, "\(invited.err)")

        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let environment = [
            "FAULTLINE_DATA": folder, "HOME": work.path, "PATH": work.file("bin") + ":" + path,
            "FAULTLINE_DEMO_UPLOAD_TOKEN": demo.upload, "FAULTLINE_DEMO_INGEST_KEY": demo.ingest,
            "FAULTLINE_DEMO_PROJECT_ID": String(demo.id), "FAULTLINE_URL": server.baseURL,
            "FAULTLINE_UPLOAD_TOKEN": demo.upload, "UPLOAD_TOKEN": demo.upload,
        ]
        var ran = 0
        var skips = 0
        for example in examples {
            if Self.skipped[Self.tableKey(example)] != nil {
                skips += 1
                continue
            }
            let script = Self.substituted(
                Self.exports(before: example, in: documents) + example.command, base: server.baseURL, data: folder,
                work: work.path)
            let result = try Command.run("bash", ["-c", script], in: work.path, environment: environment)
            let expected = Self.expectedStatus[Self.tableKey(example)] ?? 0
            #expect(
                result.status == expected,
                "\(example)\nran: \(script)\nexit \(result.status), documented \(expected): \(result.err)\(result.out)")
            #expect(!result.err.contains("Usage:"), "\(example): a usage error\n\(result.err)")
            ran += 1
        }
        #expect(ran + skips == examples.count)
        #expect(ran >= 20, "only \(ran) commands ran")
    }

    /// How the tables name an example: its first line.
    static func tableKey(_ example: Example) -> String {
        String(example.command.split(separator: "\n", omittingEmptySubsequences: false)[0])
    }

    /// The `export` lines before the example in its code block: what it runs with, as a reader's shell would.
    static func exports(before example: Example, in documents: [(name: String, text: String)]) -> String {
        guard let text = documents.first(where: { $0.name == example.file })?.text,
            let block = DocumentedExamplesTests.codeBlocks(text).last(where: { $0.start <= example.line })
        else { return "" }
        return block.lines.prefix(example.line - block.start).filter { $0.hasPrefix("export ") }.map { $0 + "\n" }
            .joined()
    }

    /// The working folder: the binaries as `bin/…` and `.build/release/…`, the files the commands name.
    static func prepare(_ work: TempFolder) throws {
        let fm = FileManager.default
        let symupload = URL(fileURLWithPath: ServerProcess.binary).deletingLastPathComponent()
            .appendingPathComponent("symupload").path
        for dir in ["bin", ".build/release", "build", "backups", "Downloads/DiagnosticReports/Retired"] {
            try fm.createDirectory(atPath: work.file(dir), withIntermediateDirectories: true)
        }
        for dir in ["bin", ".build/release"] {
            try fm.createSymbolicLink(atPath: work.file(dir + "/faultline"), withDestinationPath: ServerProcess.binary)
            try fm.createSymbolicLink(atPath: work.file(dir + "/symupload"), withDestinationPath: symupload)
        }
        // native.md's `my-program` (in `build/` and the working folder) and its libraries, found by ldd.
        let program = try ELFFixtures.compileC(
            "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n", name: "my-program", in: work,
            flags: ["-g"])
        try fm.copyItem(atPath: program, toPath: work.file("build/my-program"))
        // apple.md's and README's archive and App Store Connect's zip of its dSYMs.
        let archive = try XcodeArchive()
        try fm.copyItem(atPath: archive.path, toPath: work.file("build/Shop.xcarchive"))
        try fm.copyItem(atPath: try archive.appStoreConnectZip(), toPath: work.file("Downloads/appDsyms.zip"))
        // protocol.md's import: an Apple crash report, and one that is refused.
        _ = try work.write("Downloads/DiagnosticReports/Demo-2026-11-20-103351.ips", AppleCrashSamples.ips())
        _ = try work.write("Downloads/DiagnosticReports/Retired/old.crash", "not a crash report\n")
        // grouping.md's RULES_FILE: its first rule.
        _ = try work.write("rules.txt", "error.type:NetworkError error.code:1001 -> network-timeout\n")
    }

    /// The command with the reader's placeholders replaced.
    static func substituted(_ command: String, base: String, data: String, work: String) -> String {
        var text = command.replacingOccurrences(of: #"(?m)^\$ "#, with: "", options: .regularExpression)
        for host in ["http://127.0.0.1:8080", "http://faultline:8080", "https://crash.example.com"] {
            text = text.replacingOccurrences(of: host, with: base)
        }
        text = text.replacingOccurrences(of: "/var/lib/faultline-restored", with: work + "/restored")
        text = text.replacingOccurrences(of: "/var/lib/faultline", with: data)
        text = text.replacingOccurrences(of: " /backups/", with: " " + work + "/backups/")
        // `[--option value]` and `[LOGIN]`: pass what is inside (not `[^ ]` in a quoted pattern).
        while let range = text.range(of: #"(?<=\s)\[([^\[\]'"]*)\]"#, options: .regularExpression) {
            text.replaceSubrange(range, with: text[range].dropFirst().dropLast())
        }
        let placeholders = [
            (#"\bRULES_FILE\b"#, "rules.txt"), (#"(?<=--project )P\b"#, "shop"), (#"\bLOGIN\b"#, "ada@example.org"),
            (#"(?<=tokens revoke )ID\b"#, "1"),
        ]
        for (pattern, value) in placeholders {
            text = text.replacingOccurrences(of: pattern, with: value, options: .regularExpression)
        }
        return text
    }
}
