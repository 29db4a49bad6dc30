import FaultlineCore
import Foundation
import Testing

/// Fingerprint rules: the syntax (the issue's three examples exactly), errors naming line and column, the limits, the
/// matchers on every field, and how a rule's fingerprint replaces the computed one while a client's still wins.
@Suite struct FingerprintRulesTests {
    let examples = """
        # the issue's examples
        error.type:NetworkError error.code:1001 -> network-timeout
        function:"Inventory.*" -> {{ function }}
        module:libfoo.so -> {{ default }} libfoo
        """

    func facts(
        kind: ReportKind = .nonfatal, components: [String] = ["type:X", "code:"], client: Bool = false,
        type: String? = nil, value: String? = nil, code: String? = nil, functions: [String] = [],
        modules: [String] = [], release: String? = nil, platform: String? = nil,
        tags: [(key: String, value: String)] = []
    ) -> GroupingFacts {
        GroupingFacts(
            kind: kind, source: .error, components: components, client: client, errorType: type, errorValue: value,
            errorCode: code, functions: functions, modules: modules, release: release, platform: platform, tags: tags)
    }

    @Test func theIssuesExamplesParse() throws {
        let rules = try FingerprintRules.parse(examples)
        #expect(rules.rules.count == 3)
        #expect(
            rules.rules[0]
                == FingerprintRules.Rule(
                    matchers: [
                        .init(field: .errorType, pattern: "NetworkError"), .init(field: .errorCode, pattern: "1001"),
                    ],
                    parts: [.literal("network-timeout")], line: 2))
        #expect(
            rules.rules[1]
                == FingerprintRules.Rule(
                    matchers: [.init(field: .function, pattern: "Inventory.*")], parts: [.field(.function)], line: 3))
        #expect(
            rules.rules[2]
                == FingerprintRules.Rule(
                    matchers: [.init(field: .module, pattern: "libfoo.so")],
                    parts: [.defaultComponents, .literal("libfoo")], line: 4))
    }

    @Test func theIssuesExamplesWork() throws {
        let rules = try FingerprintRules.parse(examples)
        // NetworkError 1001: one issue whatever the message and frames.
        let a = facts(type: "NetworkError", value: "timed out after 30 s", code: "1001", functions: ["Api.get()"])
        let b = facts(type: "NetworkError", value: "timed out after 60 s", code: "1001", functions: ["Sync.run()"])
        #expect(rules.match(a) == .init(components: ["network-timeout"], line: 2))
        #expect(a.grouped(by: rules).fingerprint == b.grouped(by: rules).fingerprint)
        #expect(a.grouped(by: rules).source == .rule)
        // Another code: not this rule, and no other matches: the computed fingerprint.
        let other = facts(type: "NetworkError", code: "1002")
        #expect(rules.match(other) == nil)
        #expect(
            other.grouped(by: rules).fingerprint
                == Grouping.fingerprint(kind: .nonfatal, source: .error, components: ["type:X", "code:"]))
        // function:"Inventory.*": the matched in-app function is the fingerprint (not the first function).
        let inventory = facts(functions: ["Cache.get()", "Inventory.item(at:)", "Inventory.load()"])
        #expect(rules.match(inventory) == .init(components: ["Inventory.item(at:)"], line: 3))
        // module:libfoo.so: the default components and "libfoo".
        let foo = facts(components: ["parse()"], modules: ["app", "libfoo.so"])
        #expect(rules.match(foo) == .init(components: ["parse()", "libfoo"], line: 4))
        // libfoo.so.1 is another file name: the glob is over the whole value.
        #expect(rules.match(facts(modules: ["libfoo.so.1"])) == nil)
    }

    @Test func aClientFingerprintStillWins() throws {
        let rules = try FingerprintRules.parse("error.type:* -> everything")
        let client = facts(components: ["my-group"], client: true, type: "NetworkError")
        #expect(rules.match(client) == nil)
        #expect(
            client.grouped(by: rules).fingerprint
                == Grouping.fingerprint(kind: .nonfatal, source: .error, components: ["my-group"]))
    }

    @Test func everyFieldMatches() throws {
        let rules = try FingerprintRules.parse(
            """
            release:2.4.* platform:iOS -> r {{ release }}
            tags.region:eu-* !error.value:"*retry*" -> region {{ tags.region }}
            value:"disk full: *" -> disk
            message:"?oo" -> foo
            """)
        #expect(rules.match(facts(release: "2.4.1", platform: "iOS"))?.components == ["r", "2.4.1"])
        #expect(rules.match(facts(release: "2.5.0", platform: "iOS")) == nil)
        #expect(rules.match(facts(tags: [("region", "eu-west")]))?.components == ["region", "eu-west"])
        // The negated matcher: a value saying retry keeps the rule from matching.
        #expect(rules.match(facts(value: "will retry", tags: [("region", "eu-west")])) == nil)
        #expect(rules.match(facts(value: "disk full: /var"))?.line == 3)
        #expect(rules.match(facts(value: "zoo"))?.line == 4)
    }

    @Test func quotingAndComments() throws {
        let rules = try FingerprintRules.parse(
            #"error.value:"say \"hi\" \\ now" -> "two words" {{default}}  # trailing comment"#)
        #expect(rules.rules[0].matchers[0].pattern == #"say "hi" \ now"#)
        #expect(rules.rules[0].parts == [.literal("two words"), .defaultComponents])
        #expect(try FingerprintRules.parse("\n  # only a comment\r\n\n").isEmpty)
        // Windows line ends: each rule keeps its own line.
        #expect(try FingerprintRules.parse("type:A -> a\r\ntype:B -> b\r\n").rules.map(\.line) == [1, 2])
    }

    @Test(arguments: [
        ("error.type:A", 1, 13, "expected -> and a fingerprint"),
        ("error.type:A ->", 1, 16, "expected a fingerprint after ->"),
        ("\n  colour:red -> x", 2, 3, "unknown field \"colour\""),
        ("type:\"open -> x", 1, 6, "unterminated quote"),
        ("type: -> x", 1, 6, "empty pattern"),
        ("-> x", 1, 1, "a rule starts with a matcher"),
        ("type:A -> {{ nope }}", 1, 11, "unknown variable {{ nope }}"),
        ("type:A -> {{ default", 1, 11, "{{ without }}"),
        ("justaword -> x", 1, 1, "expected FIELD:PATTERN"),
    ])
    func errorsNameLineAndColumn(text: String, line: Int, column: Int, message: String) {
        #expect {
            try FingerprintRules.parse(text)
        } throws: { error in
            guard let error = error as? FingerprintRulesError else { return false }
            return error.line == line && error.column == column && error.message.contains(message)
        }
    }

    @Test func limits() {
        let many = Array(repeating: "type:A -> a", count: FingerprintRules.maxRules + 1).joined(separator: "\n")
        #expect(throws: FingerprintRulesError.self) { try FingerprintRules.parse(many) }
        let long = "type:" + String(repeating: "a", count: FingerprintRules.maxPatternBytes + 1) + " -> a"
        #expect(throws: FingerprintRulesError.self) { try FingerprintRules.parse(long) }
        let huge = String(repeating: "#", count: FingerprintRules.maxTextBytes + 1)
        #expect(throws: FingerprintRulesError.self) { try FingerprintRules.parse(huge) }
        let matchers = Array(repeating: "type:A", count: FingerprintRules.maxMatchers + 1).joined(separator: " ")
        #expect(throws: FingerprintRulesError.self) { try FingerprintRules.parse(matchers + " -> a") }
    }

    @Test func theGlobTakesNoExponentialTime() {
        // The classic backtracking killer: many stars and a text that almost matches. Two pointers: at most
        // text × pattern steps, so this returns at once.
        let pattern = String(repeating: "*a", count: 100) + "b"
        let text = String(repeating: "a", count: 4000)
        #expect(!FingerprintRules.glob(pattern, matches: text))
        #expect(FingerprintRules.glob("*a*b", matches: "xxaxxb"))
        #expect(FingerprintRules.glob("Inventory.*", matches: "Inventory.item(at:)"))
        #expect(!FingerprintRules.glob("Inventory.*", matches: "App.Inventory.item"))
        #expect(FingerprintRules.glob("?", matches: "é"))
    }

    @Test func storedFactsReadBackEqual() {
        let original = facts(
            components: ["", "x\u{1F}y"], type: "T", value: "multi\nline", code: nil, functions: ["f()", ""],
            modules: [], release: "1.0", platform: nil, tags: [("k", "v\u{1E}w"), ("empty", "")])
        let decoded = GroupingFacts.decode(original.encoded)
        #expect(decoded == original)
        // Values are cut and cleaned when made, so a filing and a dry run see the same.
        #expect(original.components == ["", "x y"])
        #expect(original.errorValue == "multi line")
        let long = facts(value: String(repeating: "é", count: 1000))
        #expect(long.errorValue?.utf8.count == GroupingFacts.maxValueBytes)
        #expect(GroupingFacts.decode("f2\u{1F}nonfatal") == nil)
        #expect(GroupingFacts.decode("") == nil)
    }

    @Test func groupingAppliesTheRulesAndStoresTheFacts() throws {
        // A report through Grouping itself: the facts name the error, release, platform and tags.
        let report = Report(
            eventID: EventID(UUID().uuidString)!, kind: .nonfatal,
            timestamp: Date(timeIntervalSince1970: 1_700_000_000),
            app: AppInfo(version: "2.4.0"), device: DeviceInfo(os: "iOS"),
            error: ErrorInfo(type: "NetworkError", code: "1001", message: "timed out"),
            customKeys: [("region", .string("eu-west")), ("retries", .number(3))])
        let rules = try FingerprintRules.parse(examples)
        let (result, facts) = Grouping.groupWithFacts(report, symbols: nil, fingerprints: rules)
        #expect(result.source == .rule)
        #expect(result.components == ["network-timeout"])
        #expect(facts.errorType == "NetworkError")
        #expect(facts.errorCode == "1001")
        #expect(facts.release == "2.4.0")
        #expect(facts.platform == "iOS")
        #expect(facts.tags.first { $0.key == "region" }?.value == "eu-west")
        #expect(facts.tags.first { $0.key == "retries" }?.value == "3.0")
        // Without rules the same facts give grouping's own fingerprint.
        let plain = Grouping.group(report, symbols: nil)
        #expect(facts.grouped(by: .none).fingerprint == plain.fingerprint)
        #expect(plain.source == .error)
    }
}
