/// A dry run of fingerprint rules over stored reports (`faultline grouping try`): which issues the rules would merge,
/// which they would split and which would move to a new issue, with events, users and a few example events each.
/// Pure: it reads each report's stored `GroupingFacts` (no payload, no libdw) and where each fingerprint files today
/// (`GroupingTargets`), and changes nothing. Fed in batches (`add`), so a million reports are never held at once.
///
/// A report's place after the rules is the issue its new fingerprint files into exactly as filing decides it: the
/// issue of that fingerprint, else the survivor it was merged into, else a new issue (`Target.new`).
public struct GroupingDryRun: Sendable {
    /// Where a report would go.
    public enum Target: Hashable, Sendable, Comparable {
        case issue(IssueID)
        case new(String)

        public static func < (a: Target, b: Target) -> Bool {
            switch (a, b) {
            case (.issue(let x), .issue(let y)): x < y
            case (.issue, .new): true
            case (.new, .issue): false
            case (.new(let x), .new(let y)): x < y
            }
        }
    }

    /// Reports with their issue today and after the rules.
    struct Bucket {
        var events = 0
        var users: Set<String> = []
        var examples: [String] = []
    }

    public let rules: FingerprintRules
    public let targets: GroupingTargets
    public static let examplesPerPart = 3
    /// The most days a dry run looks back (a hundred years: every stored report).
    public static let maxDays = 36_500
    var buckets: [IssueID: [Target: Bucket]] = [:]
    var ungrouped = 0
    var withoutFacts = 0
    var reports = 0
    var byRule: [Int: Int] = [:]

    public init(rules: FingerprintRules, targets: GroupingTargets) {
        self.rules = rules
        self.targets = targets
    }

    /// Adds stored reports.
    public mutating func add(_ rows: [StoredGroupingRow]) {
        for row in rows {
            reports += 1
            guard let issue = row.issue else {
                ungrouped += 1
                continue
            }
            guard let text = row.facts, let facts = GroupingFacts.decode(text) else {
                withoutFacts += 1
                continue
            }
            let target = self.target(of: facts)
            // Changed in place: a copy of the bucket would copy its set of users for every report.
            Self.count(row, into: &buckets[issue, default: [:]][target, default: Bucket()])
        }
    }

    static func count(_ row: StoredGroupingRow, into bucket: inout Bucket) {
        bucket.events += 1
        if let user = row.user { bucket.users.insert(user) }
        if bucket.examples.count < examplesPerPart { bucket.examples.append(row.eventID) }
    }

    /// Where a report with `facts` would file under the rules.
    public mutating func target(of facts: GroupingFacts) -> Target {
        let fingerprint: Fingerprint
        if let match = rules.match(facts) {
            byRule[match.line, default: 0] += 1
            fingerprint = Grouping.fingerprint(kind: facts.kind, source: .rule, components: match.components)
        } else {
            fingerprint = Grouping.fingerprint(kind: facts.kind, source: facts.source, components: facts.components)
        }
        return targets.issue(for: fingerprint).map(Target.issue) ?? .new(fingerprint.rawValue)
    }

    /// The answer so far.
    public func answer() -> GroupingDryRunAnswer {
        var byTarget: [Target: [(IssueID, Bucket)]] = [:]
        var splits: [GroupingDryRunAnswer.Split] = []
        var moves: [GroupingDryRunAnswer.Move] = []
        var unchanged = 0
        var moved = 0
        for (issue, parts) in buckets.sorted(by: { $0.key < $1.key }) {
            for (target, bucket) in parts {
                byTarget[target, default: []].append((issue, bucket))
                if target == .issue(issue) { unchanged += bucket.events } else { moved += bucket.events }
            }
            if parts.count > 1 {
                splits.append(
                    GroupingDryRunAnswer.Split(
                        issue: issue,
                        parts: parts.sorted { $0.key < $1.key }.map { Self.part($0.key, $0.value) }))
            } else if let (target, bucket) = parts.first, target != .issue(issue) {
                moves.append(GroupingDryRunAnswer.Move(issue: issue, to: Self.part(target, bucket)))
            }
        }
        var merges: [GroupingDryRunAnswer.Merge] = []
        for (target, sources) in byTarget.sorted(by: { $0.key < $1.key }) where sources.count > 1 {
            let users = sources.reduce(into: Set<String>()) { $0.formUnion($1.1.users) }
            merges.append(
                GroupingDryRunAnswer.Merge(
                    into: Self.name(target), issues: sources.map(\.0),
                    events: sources.reduce(0) { $0 + $1.1.events }, users: users.count,
                    examples: Array(sources.flatMap(\.1.examples).prefix(Self.examplesPerPart))))
        }
        // Moves that are part of a merge are told there, not twice.
        let merged = Set(merges.flatMap(\.issues))
        return GroupingDryRunAnswer(
            reports: reports, withoutFacts: withoutFacts, ungrouped: ungrouped, unchanged: unchanged, moved: moved,
            issuesBefore: buckets.count, issuesAfter: byTarget.count, merges: merges, splits: splits,
            moves: moves.filter { !merged.contains($0.issue) },
            matchedByRule: byRule.sorted { $0.key < $1.key }.map { .init(line: $0.key, reports: $0.value) })
    }

    static func name(_ target: Target) -> GroupingDryRunAnswer.Destination {
        switch target {
        case .issue(let id): .init(issue: id, fingerprint: nil)
        case .new(let fingerprint): .init(issue: nil, fingerprint: fingerprint)
        }
    }

    static func part(_ target: Target, _ bucket: Bucket) -> GroupingDryRunAnswer.Part {
        .init(to: name(target), events: bucket.events, users: bucket.users.count, examples: bucket.examples)
    }
}

/// What a dry run answers (also the API's JSON, `POST /api/v1/grouping/try`).
public struct GroupingDryRunAnswer: Sendable, Equatable, Codable {
    /// An existing issue, or a new one with this fingerprint.
    public struct Destination: Sendable, Equatable, Codable {
        public var issue: IssueID?
        public var fingerprint: String?
    }
    public struct Part: Sendable, Equatable, Codable {
        public var to: Destination
        public var events: Int
        public var users: Int
        public var examples: [String]
    }
    /// Several of today's issues would become one.
    public struct Merge: Sendable, Equatable, Codable {
        public var into: Destination
        public var issues: [IssueID]
        public var events: Int
        public var users: Int
        public var examples: [String]
    }
    /// One of today's issues would be split in parts.
    public struct Split: Sendable, Equatable, Codable {
        public var issue: IssueID
        public var parts: [Part]
    }
    /// One of today's issues would move, whole, to another issue (a new fingerprint).
    public struct Move: Sendable, Equatable, Codable {
        public var issue: IssueID
        public var to: Part
    }
    public struct RuleCount: Sendable, Equatable, Codable {
        public var line: Int
        public var reports: Int
        public init(line: Int, reports: Int) {
            self.line = line
            self.reports = reports
        }
    }
    /// Reports read (in the window), those stored before grouping facts were (not judged), those not grouped yet.
    public var reports: Int
    public var withoutFacts: Int
    public var ungrouped: Int
    /// Judged reports staying in their issue, and moving.
    public var unchanged: Int
    public var moved: Int
    public var issuesBefore: Int
    public var issuesAfter: Int
    public var merges: [Merge]
    public var splits: [Split]
    public var moves: [Move]
    /// How many reports each rule (by line) matched.
    public var matchedByRule: [RuleCount]

    enum CodingKeys: String, CodingKey {
        case reports, withoutFacts = "without_facts", ungrouped, unchanged, moved, issuesBefore = "issues_before"
        case issuesAfter = "issues_after", merges, splits, moves, matchedByRule = "matched_by_rule"
    }
}
