import FaultlineCore
import Foundation
import Synchronization
import TestSupport
import Testing

/// Fingerprint rules on each engine, through the real stores: versions are kept; the facts a filing stores read back
/// equal; a dry run changes nothing; and applying the rules (the regroup queues every stored report, the worker files
/// each again with the project's rules in force) gives exactly the issues, events and users the dry run predicted,
/// recounted from the raw reports, with every rollup equal to a recount and no report lost.
@Suite(.tags(.endToEnd, .postgres), .provisioned) struct GroupingRulesConformanceTests {
    static let now = Date(timeIntervalSince1970: GroupingConformanceTests.day0 + 3_600)

    static let rulesText = """
        error.type:NetworkError error.code:1001 -> network-timeout
        function:"Inventory.*" -> {{ function }}
        module:libfoo.so -> {{ default }} libfoo
        """

    /// The corpus: report n → its facts (nil: filed before facts were stored) and user.
    static func corpus() -> [(n: Int, facts: GroupingFacts?, user: String)] {
        func network(_ function: String, _ message: String) -> GroupingFacts {
            GroupingFacts(
                kind: .crash, source: .error, components: ["type:NetworkError", "code:1001", function],
                errorType: "NetworkError", errorValue: message, errorCode: "1001", functions: [function])
        }
        func decode(_ function: String) -> GroupingFacts {
            GroupingFacts(
                kind: .crash, source: .error, components: ["type:DecodeError", "code:"], errorType: "DecodeError",
                functions: [function, "Main.run()"])
        }
        let parse = GroupingFacts(kind: .crash, source: .stack, components: ["parse()"], modules: ["app", "libfoo.so"])
        let other = GroupingFacts(kind: .crash, source: .stack, components: ["other()"], modules: ["app"])
        let client = GroupingFacts(
            kind: .crash, source: .client, components: ["mine"], client: true, errorType: "NetworkError",
            errorCode: "1001")
        return [
            // Three issues today (their top frames differ) that rule 1 makes one.
            (1, network("Api.get()", "timed out after 30 s"), "u1"), (2, network("Api.get()", "timed out"), "u2"),
            (3, network("Sync.run()", "timed out"), "u1"), (4, network("Feed.load()", "x"), "u3"),
            // One issue today (no frames in its components) that rule 2 splits by function.
            (5, decode("Inventory.load()"), "u1"), (6, decode("Inventory.load()"), "u4"),
            (7, decode("Inventory.save()"), "u4"),
            // Moves whole to a new fingerprint (rule 3).
            (8, parse, "u5"), (9, parse, "u5"),
            // Untouched; a client fingerprint wins over rule 1; no facts stored (not judged).
            (10, other, "u1"), (11, client, "u2"), (12, nil, "u3"),
        ]
    }

    /// The grouping a filing gives `facts` under `rules` (what `Grouping.groupWithFacts` gives the report).
    static func input(_ facts: GroupingFacts?, rules: FingerprintRules, n: Int) -> GroupingInput {
        guard let facts else {
            var plain = StoreRows.grouping("old\(n % 1)")
            plain.facts = nil
            return plain
        }
        let grouped = facts.grouped(by: rules)
        return GroupingInput(
            grouping: GroupingResult(
                fingerprint: grouped.fingerprint, source: grouped.source, components: grouped.components,
                title: grouped.components.joined(separator: " "), culprit: nil),
            tags: ["os": "Android 14"], facts: facts)
    }

    static func file(_ stores: Stores, _ outcomes: [(Int64, GroupingInput)]) async throws {
        try await stores.symbolication.saveAll(
            outcomes.map { id, input in
                SymbolicationOutcome(
                    reportID: id, result: SymbolicatedReport(state: .notNeeded, threads: [], missing: []),
                    grouping: input, filesSeen: nil, modules: [:])
            }, at: now)
    }

    /// The issue of the report with event `eventID`.
    static func issue(of eventID: String, _ stores: Stores) async throws -> String? {
        try await stores.texts("SELECT issue_id FROM reports WHERE event_id = '\(eventID)'").first
    }

    /// Events and distinct users of an issue, recounted from the raw reports.
    static func recount(_ issue: String, _ stores: Stores) async throws -> (events: Int, users: Int) {
        let events = try await stores.texts("SELECT count(*) FROM reports WHERE issue_id = \(issue)").first
        let users = try await stores.texts(
            "SELECT count(DISTINCT user_key) FROM reports WHERE issue_id = \(issue)"
        ).first
        return (Int(events ?? "") ?? -1, Int(users ?? "") ?? -1)
    }

    @Test(arguments: Engine.allCases) func applyingTheRulesGivesWhatTheDryRunSaid(_ engine: Engine) async throws {
        try await withStores(engine) { stores in
            let rulesStore = try #require(stores.projects as? any GroupingRulesStore)
            let p = try await createProject(stores)
            // Given the corpus filed without rules.
            let corpus = Self.corpus()
            let ids = try await GroupingConformanceTests.store(
                stores, p, corpus.map { ($0.n, "1.0", $0.user, Double($0.n) * 60) })
            try await Self.file(stores, zip(ids, corpus).map { ($0, Self.input($1.facts, rules: .none, n: $1.n)) })
            #expect(try await stores.texts("SELECT count(DISTINCT issue_id) FROM reports") == ["8"])
            // The stored facts read back equal.
            for (id, row) in zip(ids, corpus) {
                let stored = try await stores.texts("SELECT grouping_facts FROM reports WHERE id = \(id)").first
                #expect(stored.flatMap(GroupingFacts.decode) == row.facts, "report \(row.n)")
            }
            let before = try await stores.texts("SELECT id || ' ' || issue_id FROM reports")

            // When the rules are tried.
            let rules = try FingerprintRules.parse(Self.rulesText)
            var run = GroupingDryRun(rules: rules, targets: try await rulesStore.groupingTargets(project: p.id))
            let batches = RowBatches()
            try await rulesStore.groupingRows(project: p.id, since: Date().addingTimeInterval(-86_400), batch: 5) {
                batches.append($0)
            }
            for rows in batches.all { run.add(rows) }
            let answer = run.answer()

            // Then nothing changed, and the answer names the merge, the split and the move.
            #expect(try await stores.texts("SELECT id || ' ' || issue_id FROM reports") == before)
            #expect(batches.all.map(\.count) == [5, 5, 2])
            #expect(answer.reports == 12)
            #expect(answer.withoutFacts == 1)
            #expect(answer.issuesBefore == 7)
            #expect(answer.issuesAfter == 6)
            #expect(answer.merges.count == 1)
            #expect(answer.merges.first?.issues.count == 3)
            #expect(answer.merges.first?.events == 4)
            #expect(answer.merges.first?.users == 3)
            #expect(answer.splits.count == 1)
            #expect(answer.splits.first?.parts.map(\.events).sorted() == [1, 2])
            #expect(answer.moves.count == 1)
            #expect(answer.moves.first?.to.events == 2)
            #expect(
                answer.matchedByRule == [
                    .init(line: 1, reports: 4), .init(line: 2, reports: 3), .init(line: 3, reports: 2),
                ])

            // When the rules are set: version 1, and the regroup queues every stored report, resumably.
            let version = try await rulesStore.setGroupingRules(Self.rulesText, project: p.id, by: "t", at: Self.now)
            #expect(version == 1)
            var queued = 0
            while true {
                let step = try await rulesStore.regroupStep(limit: 5, at: Self.now)
                if step == 0 { break }
                queued += step
            }
            #expect(queued == 12)
            let progress = try #require(try await rulesStore.regroupProgress(project: p.id))
            #expect(progress.total == 12 && progress.requeued == 12 && progress.finishedAt != nil)
            #expect(progress.waiting == 12 && !progress.done)
            // The worker's queue hands each report out with the project's rules in force; it files each again.
            let pending = try await stores.symbolication.pending(limit: 100)
            #expect(pending.count == 12)
            #expect(pending.allSatisfy { $0.fingerprints == rules })
            var refiled: [(Int64, GroupingInput)] = []
            for item in pending {
                let text = try await stores.texts("SELECT grouping_facts FROM reports WHERE id = \(item.reportID)")
                    .first
                let facts = text.flatMap(GroupingFacts.decode)
                let n = zip(ids, corpus).first { $0.0 == item.reportID }?.1.n ?? 0
                refiled.append((item.reportID, Self.input(facts, rules: item.fingerprints, n: n)))
            }
            try await Self.file(stores, refiled)
            #expect(try await rulesStore.regroupProgress(project: p.id)?.done == true)

            // Then the issues are what the dry run said, recounted from the raw reports.
            #expect(try await stores.texts("SELECT count(*) FROM reports WHERE issue_id IS NULL") == ["0"])
            #expect(
                try await stores.texts("SELECT count(DISTINCT issue_id) FROM reports WHERE grouping_facts IS NOT NULL")
                    == [String(answer.issuesAfter)])
            for merge in answer.merges {
                let issue = try #require(try await Self.issue(of: merge.examples[0], stores))
                let count = try await Self.recount(issue, stores)
                #expect(count.events == merge.events && count.users == merge.users)
                for example in merge.examples { #expect(try await Self.issue(of: example, stores) == issue) }
            }
            for part in answer.splits.flatMap(\.parts) + answer.moves.map(\.to) {
                let issue = try #require(try await Self.issue(of: part.examples[0], stores))
                let count = try await Self.recount(issue, stores)
                #expect(count.events == part.events && count.users == part.users)
            }
            try await IssueMergeConformanceTests.expectRecount(stores)

            // A dry run of the same rules now finds nothing to change.
            var again = GroupingDryRun(rules: rules, targets: try await rulesStore.groupingTargets(project: p.id))
            let rows = RowBatches()
            try await rulesStore.groupingRows(project: p.id, since: Date().addingTimeInterval(-86_400), batch: 100) {
                rows.append($0)
            }
            for batch in rows.all { again.add(batch) }
            #expect(again.answer().moved == 0)

            // A change is a new version; the history is kept.
            #expect(try await rulesStore.setGroupingRules("type:X -> x", project: p.id, by: nil, at: Self.now) == 2)
            #expect(try await rulesStore.groupingRules(project: p.id).map(\.version) == [2, 1])
            #expect(try await rulesStore.groupingRules(project: p.id).last?.rules == Self.rulesText)
        }
    }
}

/// Batches a store hands to a `@Sendable` body, kept for the test to read.
final class RowBatches: Sendable {
    let batches = Mutex<[[StoredGroupingRow]]>([])
    func append(_ rows: [StoredGroupingRow]) { batches.withLock { $0.append(rows) } }
    var all: [[StoredGroupingRow]] { batches.withLock { $0 } }
}
