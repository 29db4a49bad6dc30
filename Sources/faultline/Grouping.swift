import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline grouping set|show|try|progress`: a project's fingerprint rules (docs/grouping.md, "Fingerprint rules").
struct GroupingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grouping",
        abstract: "Set, show and try a project's fingerprint rules.",
        subcommands: [Set.self, Show.self, Try.self, Progress.self])

    /// The rules text of FILE (`-` reads standard input), at most `FingerprintRules.maxTextBytes`.
    static func read(_ file: String) throws -> String {
        let data: Data
        if file == "-" {
            var text = ""
            while let line = readLine(strippingNewline: false), text.utf8.count <= FingerprintRules.maxTextBytes {
                text += line
            }
            data = Data(text.utf8)
        } else {
            guard let read = FileManager.default.contents(atPath: file) else {
                throw ValidationError("cannot read \(file)")
            }
            data = read
        }
        guard data.count <= FingerprintRules.maxTextBytes else {
            throw ValidationError("\(file) is longer than \(FingerprintRules.maxTextBytes) bytes")
        }
        return String(decoding: data, as: UTF8.self)
    }

    /// The project named `slug`.
    static func project(_ slug: String, on root: Composition) async throws -> Project {
        guard let parsed = ProjectSlug(slug), let found = try await root.projects.project(slug: parsed) else {
            throw ValidationError("no project '\(slug)'")
        }
        return found
    }

    /// Parses `text`, or fails naming the file, line and column.
    static func parse(_ text: String, file: String) throws -> FingerprintRules {
        do {
            return try FingerprintRules.parse(text)
        } catch {
            throw ValidationError("\(file): \(error)")
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store FILE as the project's next rules version; stored reports are regrouped in the background.")
        @OptionGroup var dataOptions: DataOptions
        @Argument(help: "The rules file (- for standard input).")
        var file: String
        @Option(help: "The project's slug.")
        var project: String

        func run() async throws {
            let text = try GroupingCommand.read(file)
            _ = try GroupingCommand.parse(text, file: file)
            try await dataOptions.withComposition { root in
                let found = try await GroupingCommand.project(project, on: root)
                let version = try await root.groupingRules.set(text, project: found.id, by: "cli", origin: .cli)
                print(
                    "rules version \(version) of \(found.slug.rawValue) stored; new reports group with it now, stored "
                        + "reports are regrouped in the background (faultline grouping progress --project \(found.slug.rawValue))"
                )
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the project's rules in force and their versions.")
        @OptionGroup var dataOptions: DataOptions
        @Option(help: "The project's slug.")
        var project: String
        @Flag(help: "Print every version, newest first, not only the one in force.")
        var history = false

        func run() async throws {
            try await dataOptions.withComposition { root in
                let found = try await GroupingCommand.project(project, on: root)
                let versions = try await root.groupingRules.versions(project: found.id)
                guard let current = versions.first else {
                    print("# \(found.slug.rawValue) has no fingerprint rules")
                    return
                }
                for version in history ? versions : [current] {
                    print(
                        "# version \(version.version), set \(version.createdAt.formatted(.iso8601))"
                            + (version.createdBy.map { " by \($0)" } ?? ""))
                    print(version.rules.hasSuffix("\n") ? String(version.rules.dropLast()) : version.rules)
                }
            }
        }
    }

    struct Try: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Dry run: which issues RULES_FILE would merge, split or move, over stored reports. Changes nothing.")
        @OptionGroup var dataOptions: DataOptions
        @Argument(help: "The rules file (- for standard input).")
        var file: String
        @Option(help: "The project's slug.")
        var project: String
        @Option(help: "Reports received in the last this many days (default 30).")
        var days: Int = 30
        @Flag(help: "Print the answer as JSON (the API's).")
        var json = false
        @Option(
            help:
                "Ask the server at this URL instead of opening the data (env FAULTLINE_SERVER); the token comes from FAULTLINE_TOKEN (the project's upload token, or the admin token)."
        )
        var server: String?

        var serverURL: String? { server ?? Environment.string("FAULTLINE_SERVER") }

        func validate() throws {
            guard (1...GroupingDryRun.maxDays).contains(days) else { throw ValidationError("--days must be 1–36500") }
            if let serverURL, !(serverURL.hasPrefix("http://") || serverURL.hasPrefix("https://")) {
                throw ValidationError("--server must be an http:// or https:// URL")
            }
        }

        func run() async throws {
            let text = try GroupingCommand.read(file)
            let rules = try GroupingCommand.parse(text, file: file)
            let answer: GroupingDryRunAnswer
            if let serverURL {
                answer = try await ask(serverURL, text: text)
            } else {
                answer = try await dataOptions.withComposition { root in
                    let found = try await GroupingCommand.project(project, on: root)
                    return try await root.groupingRules.dryRun(text, project: found.id, days: days)
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                print(String(decoding: try encoder.encode(answer), as: UTF8.self))
            } else {
                print(GroupingDryRunText.render(answer, rules: rules.rules.count, days: days))
            }
        }

        /// The server's `POST /api/v1/grouping/try` answer.
        func ask(_ base: String, text: String) async throws -> GroupingDryRunAnswer {
            guard let token = Environment.string("FAULTLINE_TOKEN"), !token.isEmpty else {
                throw ValidationError("--server needs the token in FAULTLINE_TOKEN")
            }
            let url = base.hasSuffix("/") ? String(base.dropLast()) : base
            let answer = try await ServerRead.post(
                url + "/api/v1/grouping/try?days=\(days)&project=\(IssueListFilter.percentEncoded(project))",
                body: Array(text.utf8), token: token)
            guard answer.status == 200 else {
                throw ValidationError(
                    "\(url) answered \(answer.status): \(String(decoding: answer.body.prefix(2000), as: UTF8.self))")
            }
            struct Out: Decodable { var answer: GroupingDryRunAnswer }
            guard let out = try? JSONDecoder().decode(Out.self, from: Data(answer.body)) else {
                throw ValidationError("\(url) did not answer a dry run")
            }
            return out.answer
        }
    }

    struct Progress: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "How far the regroup after the last rules change is.")
        @OptionGroup var dataOptions: DataOptions
        @Option(help: "The project's slug.")
        var project: String

        func run() async throws {
            try await dataOptions.withComposition { root in
                let found = try await GroupingCommand.project(project, on: root)
                guard let progress = try await root.groupingRules.progress(project: found.id) else {
                    print("no regroup: \(found.slug.rawValue)'s rules were never set")
                    return
                }
                print(progress.summary)
            }
        }
    }
}

/// The dry run's answer and a regroup's progress as text for people.
enum GroupingDryRunText {
    static func render(_ answer: GroupingDryRunAnswer, rules: Int, days: Int) -> String {
        var lines: [String] = []
        lines.append(
            "dry run of \(rules) rule\(rules == 1 ? "" : "s") over \(answer.reports) reports of the last \(days) days; "
                + "nothing was changed")
        if answer.withoutFacts > 0 {
            lines.append(
                "  \(answer.withoutFacts) reports were filed before grouping facts were stored and are not judged "
                    + "(applying the rules regroups them too)")
        }
        if answer.ungrouped > 0 { lines.append("  \(answer.ungrouped) reports are not grouped yet") }
        lines.append(
            "issues: \(answer.issuesBefore) → \(answer.issuesAfter); \(answer.moved) reports would move, "
                + "\(answer.unchanged) stay")
        lines.append("would merge (\(answer.merges.count)):")
        for merge in answer.merges {
            lines.append(
                "  \(merge.issues.map { "#\($0)" }.joined(separator: ", ")) → \(name(merge.into)): "
                    + "\(merge.events) events, \(merge.users) users; e.g. \(merge.examples.joined(separator: ", "))")
        }
        lines.append("would split (\(answer.splits.count)):")
        for split in answer.splits {
            lines.append("  #\(split.issue) →")
            for part in split.parts { lines.append("    " + describe(part)) }
        }
        lines.append("would move whole (\(answer.moves.count)):")
        for move in answer.moves { lines.append("  #\(move.issue) → " + describe(move.to)) }
        if !answer.matchedByRule.isEmpty {
            lines.append(
                "reports matched: "
                    + answer.matchedByRule.map { "line \($0.line): \($0.reports)" }.joined(separator: ", "))
        }
        return lines.joined(separator: "\n")
    }

    static func name(_ destination: GroupingDryRunAnswer.Destination) -> String {
        if let issue = destination.issue { return "#\(issue)" }
        return "a new issue (\(destination.fingerprint ?? "?"))"
    }

    static func describe(_ part: GroupingDryRunAnswer.Part) -> String {
        "\(name(part.to)): \(part.events) events, \(part.users) users; e.g. \(part.examples.joined(separator: ", "))"
    }
}
