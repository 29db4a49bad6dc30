/// A project's fingerprint rules (docs/grouping.md, "Fingerprint rules"): lines of matchers and a fingerprint, tried
/// in order; the first rule whose matchers all match a report gives its fingerprint. A client-sent fingerprint
/// still wins over every rule.
///
/// ```
/// # comment
/// error.type:NetworkError error.code:1001 -> network-timeout
/// function:"Inventory.*"                 -> {{ function }}
/// module:libfoo.so                       -> {{ default }} libfoo
/// ```
///
/// A matcher is `FIELD:PATTERN` (`!FIELD:PATTERN` negates it); a pattern is a glob (`*` any run, `?` one character)
/// over the whole value, bare or in double quotes (`\"` and `\\` inside quotes). The fingerprint is a list of parts:
/// words, quoted strings, and variables `{{ NAME }}` (`default`, a field's name, or `tags.KEY`).
///
/// Bounded against hostile or careless input: at most `maxRules` rules, `maxMatchers` matchers and `maxParts` parts
/// a rule, `maxPatternBytes` a pattern, `maxTextBytes` in all; the glob is the two-pointer match (time linear in
/// text × pattern, no backtracking into earlier stars), so no pattern takes exponential time.
public struct FingerprintRules: Sendable, Equatable {
    /// The fields a matcher or a variable names.
    public enum Field: Sendable, Equatable, Hashable {
        /// The error's type or domain (`error.type`, or `type`).
        case errorType
        /// The error's value or message (`error.value`, `error.message`, `value`, `message`).
        case errorValue
        /// The error's code (`error.code`, `code`).
        case errorCode
        /// Any in-app function of the crashing thread, by simplified name (`function`).
        case function
        /// Any module of the crashing thread's frames, by file name (`module`).
        case module
        /// The release (`release`).
        case release
        /// The operating system the report came from (`platform`: `iOS`, `Linux`, `Android`…).
        case platform
        /// A custom key of the report or a breakdown value (`tags.KEY`).
        case tag(String)

        /// The field a name stands for, or nil.
        public static func named(_ name: String) -> Field? {
            switch name {
            case "error.type", "type": return .errorType
            case "error.value", "error.message", "value", "message": return .errorValue
            case "error.code", "code": return .errorCode
            case "function": return .function
            case "module": return .module
            case "release": return .release
            case "platform": return .platform
            default:
                guard name.hasPrefix("tags."), name.utf8.count > 5 else { return nil }
                return .tag(String(name.dropFirst(5)))
            }
        }
    }

    /// One `FIELD:PATTERN` of a rule.
    public struct Matcher: Sendable, Equatable {
        public var field: Field
        public var pattern: String
        /// `!FIELD:PATTERN`: the rule matches when the field does not.
        public var negated: Bool
        /// The pattern's bytes when it is ASCII (most are): matched against ASCII values byte by byte, with no copy.
        let asciiPattern: [UInt8]?
        public init(field: Field, pattern: String, negated: Bool = false) {
            self.field = field
            self.pattern = pattern
            self.negated = negated
            let bytes = Array(pattern.utf8.prefix(FingerprintRules.maxPatternBytes))
            asciiPattern = bytes.allSatisfy { $0 < 0x80 } ? bytes : nil
        }

        /// Whether the pattern matches all of `text` (`FingerprintRules.glob`).
        func matches(_ text: String) -> Bool {
            if let asciiPattern, text.utf8.count <= 4096,
                let answer = text.utf8.withContiguousStorageIfAvailable({ bytes -> Bool? in
                    guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
                    return asciiPattern.withUnsafeBufferPointer {
                        FingerprintRules.glob($0, matches: bytes, anyRun: UInt8(ascii: "*"), anyOne: UInt8(ascii: "?"))
                    }
                }), let answer
            {
                return answer
            }
            return FingerprintRules.glob(pattern, matches: text)
        }
    }

    /// One part of a rule's fingerprint.
    public enum Part: Sendable, Equatable {
        case literal(String)
        /// `{{ default }}`: the components grouping computed without rules.
        case defaultComponents
        /// `{{ FIELD }}`: the value the rule matched on for that field (the first, for lists), or the report's.
        case field(Field)
    }

    /// One line: all matchers must match; then the report's fingerprint is made of `parts`.
    public struct Rule: Sendable, Equatable {
        public var matchers: [Matcher]
        public var parts: [Part]
        /// The rule's line in the text, 1-based (for the dry run's answer).
        public var line: Int
        public init(matchers: [Matcher], parts: [Part], line: Int) {
            self.matchers = matchers
            self.parts = parts
            self.line = line
        }
    }

    public var rules: [Rule]
    public init(rules: [Rule] = []) { self.rules = rules }

    public static let none = FingerprintRules()
    public var isEmpty: Bool { rules.isEmpty }

    public static let maxRules = 200
    public static let maxMatchers = 16
    public static let maxParts = 16
    public static let maxPatternBytes = 256
    public static let maxTextBytes = 64 * 1024

    /// What a rule decided for a report: the components to hash and the rule's line.
    public struct Match: Sendable, Equatable {
        public var components: [String]
        public var line: Int
        public init(components: [String], line: Int) {
            self.components = components
            self.line = line
        }
    }

    /// The first rule matching `facts`, and the components it makes; nil when none matches or the client sent a
    /// fingerprint (it wins).
    public func match(_ facts: GroupingFacts) -> Match? {
        guard !facts.client else { return nil }
        for rule in rules {
            var bound: [Field: String] = [:]
            var all = true
            for matcher in rule.matchers {
                let value = Self.firstMatch(matcher, in: facts)
                if matcher.negated ? value != nil : value == nil {
                    all = false
                    break
                }
                if let value, !matcher.negated, bound[matcher.field] == nil { bound[matcher.field] = value }
            }
            guard all else { continue }
            var components: [String] = []
            for part in rule.parts {
                switch part {
                case .literal(let text): components.append(text)
                case .defaultComponents: components += facts.components
                case .field(let field):
                    components.append(bound[field] ?? Self.values(of: field, in: facts).first ?? "")
                }
            }
            return Match(components: components, line: rule.line)
        }
        return nil
    }

    /// The first value of `matcher`'s field that its pattern matches.
    static func firstMatch(_ matcher: Matcher, in facts: GroupingFacts) -> String? {
        values(of: matcher.field, in: facts).first { matcher.matches($0) }
    }

    /// The values a field has in `facts`: none when the report lacks it.
    static func values(of field: Field, in facts: GroupingFacts) -> [String] {
        switch field {
        case .errorType: return facts.errorType.map { [$0] } ?? []
        case .errorValue: return facts.errorValue.map { [$0] } ?? []
        case .errorCode: return facts.errorCode.map { [$0] } ?? []
        case .function: return facts.functions
        case .module: return facts.modules
        case .release: return facts.release.map { [$0] } ?? []
        case .platform: return facts.platform.map { [$0] } ?? []
        case .tag(let key): return facts.tags.first { $0.key == key }.map { [$0.value] } ?? []
        }
    }

    /// Whether `pattern` (`*` any run, `?` one character, everything else itself) matches all of `text`. The
    /// two-pointer match: on a mismatch only the last star is retried, one character further, so the time is at most
    /// text × pattern steps for any input (patterns are at most `maxPatternBytes`, texts are cut at 4,096 scalars).
    public static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern.unicodeScalars.prefix(maxPatternBytes))
        let t = Array(text.unicodeScalars.prefix(4096))
        return p.withUnsafeBufferPointer { p in
            t.withUnsafeBufferPointer { t in glob(p, matches: t, anyRun: "*", anyOne: "?") }
        }
    }

    /// The two-pointer match over any elements (`*` and `?` are their ASCII values).
    static func glob<Element: Equatable>(
        _ p: UnsafeBufferPointer<Element>, matches t: UnsafeBufferPointer<Element>, anyRun: Element, anyOne: Element
    ) -> Bool {
        var pi = 0
        var ti = 0
        var star = -1
        var mark = 0
        while ti < t.count {
            if pi < p.count, p[pi] == anyOne || p[pi] == t[ti] {
                pi += 1
                ti += 1
            } else if pi < p.count, p[pi] == anyRun {
                star = pi
                mark = ti
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                ti = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == anyRun { pi += 1 }
        return pi == p.count
    }
}

/// What was wrong in a rules text, and where (1-based line and column, in characters).
public struct FingerprintRulesError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var message: String
    public init(line: Int, column: Int, message: String) {
        self.line = line
        self.column = column
        self.message = message
    }
    public var description: String { "line \(line), column \(column): \(message)" }
}
