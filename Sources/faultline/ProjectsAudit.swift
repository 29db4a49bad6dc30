import ArgumentParser
import FaultlineApp
import FaultlineCore
import FaultlineHTTP
import Formats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Projects {
    /// `faultline projects audit [SLUG]`: the audit trail, newest first (every entry without a slug).
    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the audit trail: who changed what, when and from where (newest first).")

        @OptionGroup var dataOptions: DataOptions

        @Argument(help: "The project's slug (default: every entry, server-wide ones included).")
        var slug: String?

        @Option(help: "One kind (issue.status) or group (issue, project, member, token, person).")
        var kind: String?

        @Option(help: "Entries older than this id (the last id of the previous page).")
        var before: Int64?

        @Option(help: "At most this many entries (1-500).")
        var limit = 50

        @Flag(help: "Print JSON lines.")
        var json = false

        func validate() throws {
            if let kind, !AuditKind.isGroupOrKind(kind) {
                throw ValidationError("--kind must be a kind like issue.status or a group like issue")
            }
            if let before, before <= 0 { throw ValidationError("--before must be a positive entry id") }
            if !(1...500).contains(limit) { throw ValidationError("--limit must be from 1 to 500") }
        }

        func run() async throws {
            try await dataOptions.withComposition { try await run(on: $0) }
        }

        func run(on root: Composition) async throws {
            var project: Project?
            if let slug { project = try await Users.project(slug, root) }
            let records = try await root.audit.entries(
                AuditQuery(project: project?.id, kind: kind, before: before, limit: limit))
            let slugs = Dictionary(
                try await root.projects.all().map { ($0.id, $0.slug.rawValue) }, uniquingKeysWith: { a, _ in a })
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                for record in records {
                    let line = try encoder.encode(
                        AuditEntryOut(record, slug: record.entry.project.flatMap { slugs[$0] }))
                    print(String(decoding: line, as: UTF8.self))
                }
                return
            }
            guard !records.isEmpty else {
                print("no entries")
                return
            }
            print("id\ttime\tproject\twho\tfrom\tkind\tsubject\tchange")
            for record in records {
                let entry = record.entry
                let change =
                    [entry.before, entry.after].contains { $0 != nil }
                    ? "\(entry.before ?? "(none)") → \(entry.after ?? "(none)")" : ""
                let columns = [
                    String(record.id), Timestamps.formatISO8601(entry.at),
                    entry.project.flatMap { slugs[$0] } ?? "-", entry.origin.actor.shown, entry.origin.address ?? "-",
                    entry.kind.rawValue, entry.subject ?? "", change,
                ]
                print(columns.map { Self.oneLine($0) }.joined(separator: "\t"))
            }
        }

        /// A value on one line of the table: tabs and line breaks (a note's) become spaces.
        static func oneLine(_ text: String) -> String {
            String(text.map { $0 == "\t" || $0.isNewline ? " " : $0 })
        }
    }
}
