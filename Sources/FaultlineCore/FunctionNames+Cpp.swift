/// The C++ half of `FunctionNames`: the qualified name of a name printed by `__cxa_demangle` (or `c++filt`),
/// without its return type, argument list, cv/ref/noexcept qualifiers and GCC clone suffixes:
/// `int shop::payments::charge<int>(int, std::string const&) const [clone .cold]` →
/// `shop::payments::charge<int>`. Template arguments are kept as written; local entities keep the enclosing
/// function's argument list (`run()::{lambda(int)#1}::operator()`), as they need it to be told apart.
enum CppName {
    static func simplify(_ input: [UInt8]) -> [UInt8]? {
        var s = input
        // `foo(int) [clone .cold] [clone .isra.0]`
        var rounds = 0
        while rounds < FunctionNames.maxNesting, Bytes.hasSuffix(s, "]"),
            let clone = Bytes.lastIndex(s, " [clone ")
        {
            s = Bytes.slice(s, 0, clone)
            rounds += 1
        }
        for thunk in ["non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to "]
        where Bytes.hasPrefix(s, thunk) {
            return simplify(Bytes.slice(s, thunk.utf8.count)).map { Bytes.of(thunk) + $0 }
        }
        guard let nameEnd = argumentListStart(s) else {
            // No argument list: a variable (`guard variable for x`, `vtable for Foo`): unchanged.
            return s
        }
        let name = Bytes.slice(s, 0, nameEnd)
        return withoutReturnType(name)
    }

    /// Whether a name without `::` reads like a C++ free function: `parse(int)`, `operator new(unsigned long)`.
    /// C names have no parentheses. An empty list (`run()`), a `.` before the list or a `:` in it reads like a
    /// Swift name that is short already (`App.main()`, `pick(_:_:)`, `outer()`): those are left alone, so that
    /// simplifying a short name changes nothing.
    static func looksLikeFunction(_ s: [UInt8]) -> Bool {
        guard let open = s.firstIndex(of: UInt8(ascii: "(")), open > 0,
            Bytes.isIdentifier(s[open - 1]) || s[open - 1] == UInt8(ascii: ">"),
            !s[0..<open].contains(UInt8(ascii: "."))
        else { return false }
        guard let close = s[open...].firstIndex(of: UInt8(ascii: ")")), close > open + 1 else { return false }
        return !s[open..<close].contains(UInt8(ascii: ":"))
    }

    /// The index of the `(` that opens the function's own argument list: the first top-level `(…)` that does
    /// not start a name component (`(anonymous namespace)::`) and is not followed by `::` (an enclosing
    /// function of a local entity).
    static func argumentListStart(_ s: [UInt8]) -> Int? {
        var depth = 0
        var i = 0
        var steps = 0
        while i < s.count, steps <= s.count {
            steps += 1
            let b = s[i]
            if depth == 0, let end = operatorEnd(s, at: i) {
                i = end
                continue
            }
            switch b {
            case UInt8(ascii: "("):
                let startsComponent = i == 0 || s[i - 1] == UInt8(ascii: ":") || s[i - 1] == UInt8(ascii: " ")
                if depth == 0, !startsComponent {
                    guard let close = skipGroup(s, from: i) else { return nil }
                    if Bytes.hasPrefix(s, "::", at: close) {
                        i = close
                        continue
                    }
                    return i
                }
                depth += 1
            case UInt8(ascii: "<"), UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: ">"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                guard depth > 0 else { return nil }
                depth -= 1
            default:
                break
            }
            i += 1
        }
        return nil
    }

    /// The index just past the group opened at `open`, operators inside it skipped.
    static func skipGroup(_ s: [UInt8], from open: Int) -> Int? {
        var depth = 0
        var i = open
        while i < s.count {
            if let end = operatorEnd(s, at: i) {
                i = end
                continue
            }
            switch s[i] {
            case UInt8(ascii: "("), UInt8(ascii: "<"), UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: ">"), UInt8(ascii: "]"), UInt8(ascii: "}"):
                guard depth > 0 else { return nil }
                depth -= 1
                if depth == 0 { return i + 1 }
            default:
                break
            }
            i += 1
        }
        return nil
    }

    /// When `s` at `i` is an `operator` keyword (`operator()`, `operator<<`, `operator->`, `operator new[]`,
    /// `operator""_km`), the index past its symbol; conversion operators (`operator int`) end at the keyword.
    static func operatorEnd(_ s: [UInt8], at i: Int) -> Int? {
        guard s[i] == UInt8(ascii: "o"), Bytes.hasPrefix(s, "operator", at: i) else { return nil }
        if i > 0, Bytes.isIdentifier(s[i - 1]) { return nil }
        let j = i + 8
        guard j < s.count, !Bytes.isIdentifier(s[j]) else { return nil }
        if Bytes.hasPrefix(s, "()", at: j) || Bytes.hasPrefix(s, "[]", at: j) { return j + 2 }
        if Bytes.hasPrefix(s, "\"\"", at: j) { return j + 2 }
        if s[j] == UInt8(ascii: " ") {
            // `operator new`, `operator delete[]`, or a conversion `operator int`.
            for word in [" new[]", " delete[]", " new", " delete"] where Bytes.hasPrefix(s, word, at: j) {
                return j + word.utf8.count
            }
            return j
        }
        // The longest operator token, so that a template's `<` is not taken in: `operator==<int const*>`.
        for token in operatorTokens where Bytes.hasPrefix(s, token, at: j) { return j + token.utf8.count }
        return nil
    }

    /// C++'s overloadable operators, longest first.
    static let operatorTokens = [
        "->*", "<<=", ">>=", "<=>", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=", "-=",
        "*=", "/=", "%=", "^=", "&=", "|=", "+", "-", "*", "/", "%", "^", "&", "|", "~", "!", "=", "<", ">", ",",
    ]

    /// `int foo<int>` → `foo<int>`: the return type of a template function ends at the last top-level space
    /// before the qualified name (spaces inside `<…>`, `(anonymous namespace)` and operator names stay).
    static func withoutReturnType(_ name: [UInt8]) -> [UInt8] {
        var depth = 0
        var lastSpace: Int?
        var i = 0
        while i < name.count {
            if let end = operatorEnd(name, at: i) {
                if depth == 0 { break }
                i = end
                continue
            }
            switch name[i] {
            case UInt8(ascii: "("), UInt8(ascii: "<"), UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: ")"), UInt8(ascii: ">"), UInt8(ascii: "]"), UInt8(ascii: "}"): depth = max(0, depth - 1)
            case UInt8(ascii: " ") where depth == 0: lastSpace = i
            default: break
            }
            i += 1
        }
        guard let lastSpace else { return name }
        let rest = Bytes.slice(name, lastSpace + 1)
        return rest.isEmpty ? name : rest
    }

    static func isWrapper(_ s: [UInt8]) -> Bool {
        ["non-virtual thunk to ", "virtual thunk to ", "covariant return thunk to "].contains {
            Bytes.hasPrefix(s, $0)
        }
    }
}
