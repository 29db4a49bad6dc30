import ArgumentParser
import FaultlineApp
import FaultlineCore
import Pipeline

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `faultline issues list|close|reopen|mute`.
struct Issues: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List issues and change their status.",
        subcommands: [List.self, Close.self, Reopen.self, Mute.self])

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
            try await IssueService(store: root.issueStates, clock: root.clock).setStatus(
                status, issue: IssueID(id), project: nil, by: "the CLI")
        }
        guard let issue else {
            Console.write("no issue \(id)\n", fd: 2)
            throw ExitCode(4)
        }
        print("issue \(issue.id) is \(issue.status.rawValue): \(issue.title)")
    }
}
