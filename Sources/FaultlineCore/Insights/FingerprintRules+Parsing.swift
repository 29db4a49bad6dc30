extension FingerprintRules {
    /// Parses a rules text (the syntax in `FingerprintRules`' summary); an error names the line and column of the first
    /// mistake. Empty lines and `#` comments are skipped; an empty text is no rules.
    ///
    /// - Throws: `FingerprintRulesError` for a text past the limits or a line that is not `MATCHERS -> PARTS`.
    public static func parse(_ text: String) throws(FingerprintRulesError) -> FingerprintRules {
        guard text.utf8.count <= maxTextBytes else {
            throw FingerprintRulesError(line: 1, column: 1, message: "the rules are longer than \(maxTextBytes) bytes")
        }
        var rules: [Rule] = []
        var number = 0
        // Lines end at any newline: `\n`, `\r\n` (one Character in Swift), `\r`.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            number += 1
            var parser = LineParser(chars: Array(line), line: number)
            guard let rule = try parser.rule() else { continue }
            guard rules.count < maxRules else {
                throw FingerprintRulesError(line: number, column: 1, message: "more than \(maxRules) rules")
            }
            rules.append(rule)
        }
        return FingerprintRules(rules: rules)
    }

    /// Reads one line: `[!]FIELD:PATTERN … -> PART …`, or nothing (blank or a comment).
    struct LineParser {
        let chars: [Character]
        let line: Int
        var at = 0

        func fail(_ message: String, at column: Int? = nil) -> FingerprintRulesError {
            FingerprintRulesError(line: line, column: (column ?? at) + 1, message: message)
        }

        mutating func skipSpaces() {
            while at < chars.count, chars[at].isWhitespace { at += 1 }
        }

        /// At the end of the line or at a comment.
        mutating func atEnd() -> Bool {
            skipSpaces()
            return at >= chars.count || chars[at] == "#"
        }

        func isArrow() -> Bool { at + 1 < chars.count && chars[at] == "-" && chars[at + 1] == ">" }

        mutating func rule() throws(FingerprintRulesError) -> Rule? {
            if atEnd() { return nil }
            var matchers: [Matcher] = []
            while !atEnd(), !isArrow() {
                guard matchers.count < maxMatchers else { throw fail("more than \(maxMatchers) matchers in a rule") }
                matchers.append(try matcher())
            }
            if matchers.isEmpty { throw fail("a rule starts with a matcher such as error.type:NetworkError") }
            guard !atEnd() else { throw fail("expected -> and a fingerprint after the matchers") }
            at += 2
            var parts: [Part] = []
            while !atEnd() {
                guard parts.count < maxParts else { throw fail("more than \(maxParts) parts in a fingerprint") }
                parts.append(try part())
            }
            if parts.isEmpty { throw fail("expected a fingerprint after ->") }
            return Rule(matchers: matchers, parts: parts, line: line)
        }

        mutating func matcher() throws(FingerprintRulesError) -> Matcher {
            let start = at
            var negated = false
            if chars[at] == "!" {
                negated = true
                at += 1
            }
            let nameStart = at
            while at < chars.count, chars[at] != ":", !chars[at].isWhitespace { at += 1 }
            let name = String(chars[nameStart..<at])
            guard at < chars.count, chars[at] == ":" else {
                throw fail("expected FIELD:PATTERN (a matcher such as error.code:1001)", at: start)
            }
            guard let field = Field.named(name) else {
                throw fail(
                    "unknown field \"\(name.prefix(40))\" (error.type, error.value, error.code, function, module, "
                        + "release, platform, tags.KEY)", at: nameStart)
            }
            at += 1
            let valueStart = at
            let pattern = try value()
            guard !pattern.isEmpty else { throw fail("empty pattern after \(name):", at: valueStart) }
            guard pattern.utf8.count <= maxPatternBytes else {
                throw fail("a pattern is longer than \(maxPatternBytes) bytes", at: valueStart)
            }
            return Matcher(field: field, pattern: pattern, negated: negated)
        }

        /// A quoted string (`"…"`, with `\"` and `\\`) or a bare word up to the next space.
        mutating func value() throws(FingerprintRulesError) -> String {
            guard at < chars.count else { return "" }
            guard chars[at] == "\"" else {
                let start = at
                while at < chars.count, !chars[at].isWhitespace { at += 1 }
                return String(chars[start..<at])
            }
            let open = at
            at += 1
            var out = ""
            while at < chars.count {
                let c = chars[at]
                if c == "\"" {
                    at += 1
                    return out
                }
                if c == "\\", at + 1 < chars.count {
                    at += 1
                    out.append(chars[at])
                } else {
                    out.append(c)
                }
                at += 1
                if out.utf8.count > maxPatternBytes {
                    throw fail("a quoted value is longer than \(maxPatternBytes) bytes", at: open)
                }
            }
            throw fail("unterminated quote", at: open)
        }

        mutating func part() throws(FingerprintRulesError) -> Part {
            let start = at
            if chars[at] == "{", at + 1 < chars.count, chars[at + 1] == "{" {
                at += 2
                let nameStart = at
                while at + 1 < chars.count, !(chars[at] == "}" && chars[at + 1] == "}") { at += 1 }
                guard at + 1 < chars.count else { throw fail("{{ without }}", at: start) }
                let name = String(chars[nameStart..<at]).trimmingSpaces
                at += 2
                if name == "default" { return .defaultComponents }
                guard let field = Field.named(name) else {
                    throw fail("unknown variable {{ \(name.prefix(40)) }} (default, or a field's name)", at: start)
                }
                return .field(field)
            }
            let text: String
            if chars[at] == "\"" {
                text = try value()
            } else {
                while at < chars.count, !chars[at].isWhitespace,
                    !(chars[at] == "{" && at + 1 < chars.count && chars[at + 1] == "{")
                {
                    at += 1
                }
                text = String(chars[start..<at])
            }
            guard text.utf8.count <= maxPatternBytes else {
                throw fail("a fingerprint part is longer than \(maxPatternBytes) bytes", at: start)
            }
            return .literal(text)
        }
    }
}
