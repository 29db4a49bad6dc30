import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline issues list|close|reopen|mute|merge|unmerge`.
struct Issues: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List issues and change their status.",
        subcommands: [List.self, Close.self, Reopen.self, Mute.self, Merge.self, Unmerge.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a project's issues, most recently seen first.")
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The project's slug.")
        var project: String

        @Option(help: "open, closed or muted.")
        var status: String?

        @Option(help: "Most issues to list (default 50).")
        var limit: Int = 50

        func validate() throws {
            if let status, IssueStatus(rawValue: status) == nil {
                throw ValidationError("--status must be open, closed or muted")
            }
            if !(1...10_000).contains(limit) { throw ValidationError("--limit must be 1–10000") }
        }

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            guard let slug = ProjectSlug(project), let found = try await root.projects.project(slug: slug) else {
                throw ValidationError("no project '\(project)'")
            }
            let issues = try await root.insights.issues(
                matching: IssueQuery(project: found.id, status: status.flatMap(IssueStatus.init), limit: limit),
                now: root.clock.now())
            if issues.isEmpty {
                print("no issues")
                return
            }
            print("id\tstatus\tevents\tusers\tlast seen\ttitle")
            for issue in issues {
                let signals = issue.signals.names.isEmpty ? "" : " [\(issue.signals.names.joined(separator: ", "))]"
                print(
                    "\(issue.id)\t\(issue.status.rawValue)\t\(issue.events)\t\(issue.users)\t\(issue.lastSeen.formatted(.iso8601))\t\(issue.title)\(signals)"
                )
            }
        }
    }

    struct Close: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Close an issue (it reopens as regressed if a release it was not seen in reports it).")
        @OptionGroup var change: StatusChange
        func run() async throws { try await change.apply(.closed) }
    }

    struct Reopen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reopen a closed or muted issue.")
        @OptionGroup var change: StatusChange
        func run() async throws { try await change.apply(.open) }
    }

    struct Mute: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Mute an issue: its events still count, it never alerts.")
        @OptionGroup var change: StatusChange
        func run() async throws { try await change.apply(.muted) }
    }
}

extension Issues {
    struct Merge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Merge issues into one: the survivor keeps its id and status; the others' events, and their future events, join it."
        )
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The id of the issue that survives.")
        var survivor: Int64

        @Argument(help: "The ids of the issues to merge into it.")
        var others: [Int64]

        @Option(help: "The project's slug: every issue must be one of its issues.")
        var project: String

        func validate() throws {
            if survivor <= 0 || others.contains(where: { $0 <= 0 }) {
                throw ValidationError("an issue id is a positive number")
            }
            if others.isEmpty { throw ValidationError("name at least one issue to merge into \(survivor)") }
        }

        func run() async throws {
            let result = try await IssueCommand.run(dataOptions, project: project) { root, found in
                try await root.issueService().merge(
                    others.map { IssueID($0) }, into: IssueID(survivor), project: found.id, by: "the CLI",
                    origin: .cli)
            }
            let merged = result.merged.map { String($0.rawValue) }.joined(separator: ", ")
            print("merged \(merged) into issue \(result.survivor.rawValue)")
        }
    }

    struct Unmerge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Split a merged fingerprint back out of an issue: its events move to an issue of their own.")
        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The id of the issue it was merged into.")
        var issue: Int64

        @Argument(help: "The fingerprint (as the issue page lists the merged ones, e.g. v2:0123456789abcdef).")
        var fingerprint: String

        @Option(help: "The project's slug.")
        var project: String

        func validate() throws {
            if issue <= 0 { throw ValidationError("an issue id is a positive number") }
            if Fingerprint(fingerprint) == nil { throw ValidationError("'\(fingerprint)' is not a fingerprint") }
        }

        func run() async throws {
            let result = try await IssueCommand.run(dataOptions, project: project) { root, found in
                try await root.issueService().unmerge(
                    fingerprint: fingerprint, from: IssueID(issue), project: found.id, origin: .cli)
            }
            print(
                "split \(result.fingerprint) out of issue \(result.survivor.rawValue): \(result.requeued) reports are filed again"
            )
        }
    }
}

/// Runs a change of issues of one project: exit 4 for an unknown project or issue, 1 with the reason for a refusal.
enum IssueCommand {
    static func run<Result>(
        _ dataOptions: DataOptions, project: String, _ change: (Composition, Project) async throws -> Result
    ) async throws -> Result {
        do {
            return try await dataOptions.withComposition(announcing: true) { root in
                guard let slug = ProjectSlug(project), let found = try await root.projects.project(slug: slug) else {
                    Console.write("no project '\(project)'\n", fd: 2)
                    throw ExitCode(4)
                }
                return try await change(root, found)
            }
        } catch let error as IssueMergeError {
            Console.write("\(error.description)\n", fd: 2)
            throw ExitCode(error.isNotFound ? 4 : 1)
        }
    }
}

/// The data folder and issue id of `issues close|reopen|mute`.
struct StatusChange: ParsableArguments {
    @OptionGroup var dataOptions: DataOptions

    @Argument(help: "The issue's id (as the dashboard and `issues list` show it).")
    var id: Int64

    func validate() throws {
        if id <= 0 { throw ValidationError("an issue id is a positive number") }
    }

    func apply(_ status: IssueStatus) async throws {
        let issue = try await dataOptions.withComposition(announcing: true) { root in
            try await root.issueService().setStatus(
                status, issue: IssueID(id), project: nil, by: "the CLI", origin: .cli)
        }
        guard let issue else {
            Console.write("no issue \(id)\n", fd: 2)
            throw ExitCode(4)
        }
        print("issue \(issue.id) is \(issue.status.rawValue): \(issue.title)")
    }
}
