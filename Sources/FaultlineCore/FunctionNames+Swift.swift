/// The Swift half of `FunctionNames`: the short form of a name printed by the runtime's `swift_demangle` in
/// its default (full) options, e.g.
/// `closure #1 (Swift.Int) -> Swift.Bool in app.Parser.run(Swift.String) -> [Swift.String]` →
/// `closure #1 in Parser.run(_:)`. The rules follow the toolchain's own simplified printing
/// (`swift-demangle --simplified`), which the tests compare against on real compiler output.
///
/// Every function returns nil when the text does not parse (unbalanced brackets, an empty name, too deep);
/// the caller then keeps the input unchanged.
enum SwiftName {
    // MARK: - Phrases

    /// Whether a name without ` -> ` or ` : ` is still a full Swift name: the compiler phrases about a type
    /// (`type metadata accessor for app.V`, `outlined destroy of [Swift.Int]`, `destroy value witness for
    /// app.Box`). Every other full Swift name has a function type or a `: Type`.
    static func startsWithTypePhrase(_ s: [UInt8]) -> Bool {
        if typePhrases.contains(where: { Bytes.hasPrefix(s, $0) }) { return true }
        if let phrase = leadingPhraseEnd(s), Bytes.contains(Bytes.slice(s, 0, phrase), " value witness for ") {
            return true
        }
        return false
    }

    /// Wrappers whose text is dropped: the code is the function's own, only transformed by the compiler.
    /// Returns the index where the wrapped entity starts.
    static func droppedWrapperEnd(_ s: [UInt8]) -> Int? {
        if let end = asyncResumePrefixEnd(s) { return end }
        for prefix in ["specialized ", "merged ", "async function pointer to "] where Bytes.hasPrefix(s, prefix) {
            return prefix.utf8.count
        }
        // `generic specialization <Swift.Int> of`, `function signature specialization <Arg[0] = Dead> of`, …
        if let open = specializationOpen(s) {
            guard let close = Scanner.skipGroup(s, from: open), Bytes.hasPrefix(s, " of ", at: close) else {
                return nil
            }
            return close + 4
        }
        return nil
    }

    /// `(1) await resume partial function for ` / `(2) suspend resume partial function for `.
    static func asyncResumePrefixEnd(_ s: [UInt8]) -> Int? {
        guard s.first == UInt8(ascii: "(") else { return nil }
        var i = 1
        while i < s.count, Bytes.isDigit(s[i]) { i += 1 }
        guard i > 1, Bytes.hasPrefix(s, ") ", at: i) else { return nil }
        for phrase in ["await resume partial function for ", "suspend resume partial function for "]
        where Bytes.hasPrefix(s, phrase, at: i + 2) {
            return i + 2 + phrase.utf8.count
        }
        return nil
    }

    /// The index of the `<` of a leading `… specialization <`.
    static func specializationOpen(_ s: [UInt8]) -> Int? {
        guard let at = Bytes.firstIndex(s, "specialization <", limit: 48) else { return nil }
        // Only lowercase words and `-` before it: `generic not re-abstracted specialization <`.
        for b in s[0..<at] where !(b >= 0x61 && b <= 0x7A) && b != 0x20 && b != 0x2D { return nil }
        return at + "specialization ".utf8.count
    }

    /// The name without a trailing ` with unmangled suffix "…"` (`.resume.0`, `.cold`): done once, on the whole
    /// name, by the entry points.
    static func withoutUnmangledSuffix(_ s: [UInt8]) -> [UInt8] {
        guard let suffix = Bytes.lastIndex(s, " with unmangled suffix \"") else { return s }
        return Bytes.slice(s, 0, suffix)
    }

    /// Strips every leading dropped wrapper; nil when wrappers nest deeper than `maxNesting`.
    static func unwrapped(_ input: [UInt8]) -> [UInt8]? {
        var s = input
        var rounds = 0
        while let end = droppedWrapperEnd(s), end < s.count {
            guard rounds < FunctionNames.maxNesting else { return nil }
            s = Bytes.slice(s, end)
            rounds += 1
        }
        return s
    }

    // MARK: - Simplify

    static func simplify(_ input: [UInt8], nesting: Int) -> [UInt8]? {
        guard nesting < FunctionNames.maxNesting else { return nil }
        guard let s = unwrapped(input), !s.isEmpty else { return nil }
        func rest(_ prefix: String) -> [UInt8]? {
            simplify(Bytes.slice(s, prefix.utf8.count), nesting: nesting + 1)
        }

        for keep in ["static ", "@objc ", "@nonobjc "] where Bytes.hasPrefix(s, keep) {
            return rest(keep).map { Bytes.of(keep) + $0 }
        }
        // Committed once the prefix matches: trying another reading on failure would backtrack exponentially
        // through nested closures.
        if localDeclarationHash(s, at: 0) != nil { return localDeclaration(s, nesting: nesting) }
        for partial in ["partial apply forwarder for ", "partial apply for "] where Bytes.hasPrefix(s, partial) {
            return rest(partial).map { Bytes.of("partial apply for ") + $0 }
        }
        if Bytes.hasPrefix(s, "protocol witness for ") { return witness(s, nesting: nesting) }
        if Bytes.hasPrefix(s, "reabstraction thunk") { return thunk(s) }
        if Bytes.hasPrefix(s, "lazy protocol witness table ") { return lazyWitnessTable(s) }
        if let phrase = leadingPhraseEnd(s) {
            var head = Bytes.slice(s, 0, phrase)
            if let witness = Bytes.firstIndex(head, " value witness for ") {
                head = Bytes.slice(head, 0, witness) + Bytes.of(" for ")
            }
            var tail = Bytes.slice(s, phrase)
            // `base witness table accessor for P in T : Q in M`: the conformance's protocol and module go.
            if Bytes.contains(head, "witness table") || Bytes.contains(head, "conformance descriptor") {
                if let colon = Scanner.firstTopLevel(tail, from: 0, where: { Bytes.hasPrefix(tail, " : ", at: $0) }) {
                    tail = Bytes.slice(tail, 0, colon)
                }
                return head + simplifyType(tail)
            }
            let isType =
                typePhrases.contains(where: { Bytes.hasPrefix(s, $0) }) || Bytes.contains(head, " value witness")
            // A type keeps its generic arguments (`outlined copy of Optional<Foo>`); a plain nominal type reads
            // best through the entity rules (`Secret`, `Local #1 in outer()`).
            let plain = !tail.contains(UInt8(ascii: "<")) && tail.first.map(Bytes.isIdentifier) == true
            let simplified: [UInt8]
            if isType, !plain {
                simplified = simplifyType(tail)
            } else {
                simplified = simplify(tail, nesting: nesting + 1) ?? simplifyType(tail)
            }
            return head + simplified
        }
        return entity(s, nesting: nesting)
    }

    /// Phrases followed by a type rather than a function.
    static let typePhrases = [
        "outlined ", "type metadata", "nominal type descriptor for ", "protocol conformance descriptor for ",
        "value witness table for ", "type metadata accessor for ",
    ]

    /// The end of a leading run of lowercase words closed by ` of ` or ` for ` (`default argument 1 of `,
    /// `type metadata accessor for `, `destroy value witness for `, `key path getter for `).
    static func leadingPhraseEnd(_ s: [UInt8]) -> Int? {
        var i = 0
        while i < s.count, i < 64 {
            let b = s[i]
            if b == 0x20 {
                if Bytes.hasPrefix(s, " of ", at: i) { return i + 4 }
                if Bytes.hasPrefix(s, " for ", at: i) { return i + 5 }
            } else if !(Bytes.isIdentifier(b) && b < 0x80) && b != UInt8(ascii: "#") && b != UInt8(ascii: "@") {
                return nil
            }
            i += 1
        }
        return nil
    }

    /// `closure #1 (Swift.Int) -> Swift.Bool in E` → `closure #1 in E'`; a local function
    /// `inner #1 (Swift.Int) -> Swift.Int in E` → `inner #1 (_:) in E'`; a local type `Local #1 in E` → as is.
    static func localDeclaration(_ s: [UInt8], nesting: Int) -> [UInt8]? {
        guard let hash = localDeclarationHash(s, at: 0) else { return nil }
        var i = hash + 2
        while i < s.count, Bytes.isDigit(s[i]) { i += 1 }
        let head = Bytes.slice(s, 0, i)
        let isClosure = Bytes.hasPrefix(s, "closure #") || Bytes.hasPrefix(s, "implicit closure #")
        guard let inAt = Scanner.firstTopLevel(s, from: i, where: { Bytes.hasPrefix(s, " in ", at: $0) }) else {
            return i == s.count ? head : nil
        }
        var out = head
        if !isClosure, Bytes.hasPrefix(s, " (", at: i), let close = Scanner.skipGroup(s, from: i + 1) {
            out += Bytes.of(" ") + labels(Bytes.slice(s, i + 2, close - 1))
        }
        guard let context = simplify(Bytes.slice(s, inAt + 4), nesting: nesting + 1) else { return nil }
        return out + Bytes.of(" in ") + context
    }

    /// The index of ` #` when `s` at `start` reads `name #N` (`closure #1`, `implicit closure #2`, `Local #1`).
    static func localDeclarationHash(_ s: [UInt8], at start: Int) -> Int? {
        var i = start
        if Bytes.hasPrefix(s, "implicit ", at: i) { i += 9 }
        let nameStart = i
        while i < s.count, Bytes.isIdentifier(s[i]) { i += 1 }
        guard i > nameStart, Bytes.hasPrefix(s, " #", at: i), i + 2 < s.count, Bytes.isDigit(s[i + 2]) else {
            return nil
        }
        return i
    }

    /// `protocol witness for E in conformance T : P in M` → `protocol witness for E' in conformance T'`.
    static func witness(_ s: [UInt8], nesting: Int) -> [UInt8]? {
        let start = "protocol witness for ".utf8.count
        guard let conformance = Bytes.lastIndex(s, " in conformance "), conformance > start else {
            return simplify(Bytes.slice(s, start), nesting: nesting + 1).map { Bytes.of("protocol witness for ") + $0 }
        }
        guard let entity = simplify(Bytes.slice(s, start, conformance), nesting: nesting + 1) else { return nil }
        var type = Bytes.slice(s, conformance + " in conformance ".utf8.count)
        if let colon = Scanner.firstTopLevel(type, from: 0, where: { Bytes.hasPrefix(type, " : ", at: $0) }) {
            type = Bytes.slice(type, 0, colon)
        }
        return Bytes.of("protocol witness for ") + entity + Bytes.of(" in conformance ") + simplifyType(type)
    }

    /// `reabstraction thunk helper <A> from T to U` → `thunk for T'` (the toolchain's short thunk form).
    static func thunk(_ s: [UInt8]) -> [UInt8]? {
        guard let from = Bytes.firstIndex(s, " from ") else { return nil }
        let start = from + 6
        guard let to = Scanner.firstTopLevel(s, from: start, where: { Bytes.hasPrefix(s, " to ", at: $0) }) else {
            return nil
        }
        return Bytes.of("thunk for ") + simplifyType(Bytes.slice(s, start, to))
    }

    /// `lazy protocol witness table accessor for type T and conformance C : P in M` → without ` : P in M`.
    static func lazyWitnessTable(_ s: [UInt8]) -> [UInt8]? {
        guard let and = Bytes.lastIndex(s, " and conformance ") else { return simplifyType(s) }
        var conformance = Bytes.slice(s, and)
        if let colon = Scanner.firstTopLevel(
            conformance, from: 0,
            where: {
                Bytes.hasPrefix(conformance, " : ", at: $0)
            })
        {
            conformance = Bytes.slice(conformance, 0, colon)
        }
        return simplifyType(Bytes.slice(s, 0, and)) + simplifyType(conformance)
    }

    // MARK: - Entities

    /// One declaration: `[(extension in M):]M.Type<…>.name<…>(label: T, U) async throws -> R`,
    /// `M.Type.name.getter : T`, a member of a local type `m() -> T in Local #1 in E`.
    static func entity(_ s: [UInt8], nesting: Int) -> [UInt8]? {
        var i = 0
        if Bytes.hasPrefix(s, "(extension in ") {
            guard let close = Scanner.skipGroup(s, from: 0), close < s.count, s[close] == UInt8(ascii: ":") else {
                return nil
            }
            i = close + 1
        }
        var components: [[UInt8]] = []
        while i < s.count, components.count < 256 {
            let b = s[i]
            var component: [UInt8]
            if b == UInt8(ascii: "(") {
                // `(Secret in _8CC2…)`: a private declaration; keep its name.
                guard let close = Scanner.skipGroup(s, from: i) else { return nil }
                let inner = Bytes.slice(s, i + 1, close - 1)
                let name = Scanner.firstTopLevel(inner, from: 0) { Bytes.hasPrefix(inner, " in ", at: $0) }
                component = name.map { Bytes.slice(inner, 0, $0) } ?? inner
                i = close
            } else if isOperatorHead(b) || (b == UInt8(ascii: ".") && !components.isEmpty) {
                // `+ infix`, `..< infix`, `- prefix`: an operator up to its fixity word.
                let start = i
                while i < s.count, isOperatorHead(s[i]) || s[i] == UInt8(ascii: ".") { i += 1 }
                for fixity in [" infix", " prefix", " postfix"] where Bytes.hasPrefix(s, fixity, at: i) {
                    i += fixity.utf8.count
                }
                component = Bytes.slice(s, start, i)
            } else {
                let start = i
                while i < s.count, Bytes.isIdentifier(s[i]) { i += 1 }
                component = Bytes.slice(s, start, i)
            }
            guard !component.isEmpty else { return nil }
            components.append(component)
            // Generic parameters and where clauses: `Box<A>`, `map<A>`, `Collection< where A.Element: Equatable>`.
            if i < s.count, s[i] == UInt8(ascii: "<") {
                guard let close = Scanner.skipGroup(s, from: i) else { return nil }
                i = close
            }
            guard i < s.count, s[i] == UInt8(ascii: "."),
                i + 1 < s.count, s[i + 1] != UInt8(ascii: " ")
            else { break }
            i += 1
        }
        guard !components.isEmpty else { return nil }

        var args: [UInt8] = []
        if i < s.count, s[i] == UInt8(ascii: "(") {
            guard let close = Scanner.skipGroup(s, from: i) else { return nil }
            args = labels(Bytes.slice(s, i + 1, close - 1))
            i = close
        }
        // A member of a local type or function: `m() -> Swift.Int in Local #1 in app.outer() -> Swift.Int`.
        var context: [UInt8] = []
        if components.count == 1, i < s.count,
            let inAt = Scanner.firstTopLevel(
                s, from: i,
                where: {
                    Bytes.hasPrefix(s, " in ", at: $0) && localDeclarationHash(s, at: $0 + 4) != nil
                })
        {
            guard let simplified = simplify(Bytes.slice(s, inAt + 4), nesting: nesting + 1) else { return nil }
            context = Bytes.of(" in ") + simplified
        }
        // The first component of a qualified name is its module.
        let path = components.count > 1 ? Array(components.dropFirst()) : components
        var out: [UInt8] = []
        for (index, component) in path.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ".")) }
            out += component
        }
        return out + args + context
    }

    /// `(at: Swift.Int, Swift.Int, _: Swift.Bool)` (inside the parentheses) → `(at:_:_:)`.
    static func labels(_ inside: [UInt8]) -> [UInt8] {
        var out = Bytes.of("(")
        guard !Bytes.trimmed(inside).isEmpty else { return out + Bytes.of(")") }
        var start = 0
        var count = 0
        while start <= inside.count, count < 1024 {
            let comma = Scanner.firstTopLevel(inside, from: start) { inside[$0] == UInt8(ascii: ",") } ?? inside.count
            let argument = Bytes.trimmed(Bytes.slice(inside, start, comma))
            var j = 0
            while j < argument.count, Bytes.isIdentifier(argument[j]) { j += 1 }
            if j > 0, Bytes.hasPrefix(argument, ": ", at: j) {
                out += Bytes.slice(argument, 0, j)
            } else {
                out.append(UInt8(ascii: "_"))
            }
            out.append(UInt8(ascii: ":"))
            count += 1
            start = comma + 1
        }
        return out + Bytes.of(")")
    }

    /// A type as the toolchain's short form prints it: module qualifiers dropped and the standard library's
    /// sugar written (the runtime's demangler writes none): `Swift.Optional<Swift.Array<app.Foo>>` → `[Foo]?`,
    /// `Swift.Dictionary<Swift.String, Swift.Int>` → `[String : Int]`. A first component that reads like a
    /// generic parameter (`A`, `B1`, `A.Element`) is kept.
    static func simplifyType(_ s: [UInt8]) -> [UInt8] {
        withoutModules(sugared(s, depth: 0))
    }

    /// `Swift.Array<T>` → `[T]`, `Swift.Optional<T>` → `T?`, `Swift.Dictionary<K, V>` → `[K : V]`; a type whose
    /// brackets do not balance is left alone (so that every group found closes, and the work stays linear).
    static func sugared(_ s: [UInt8], depth: Int) -> [UInt8] {
        guard depth < FunctionNames.maxNesting, Bytes.contains(s, "Swift."), Scanner.isBalanced(s) else { return s }
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            let atName = i == 0 || !(Bytes.isIdentifier(s[i - 1]) || s[i - 1] == UInt8(ascii: "."))
            if atName, s[i] == UInt8(ascii: "S"), let (head, close) = sugarGroup(s, at: i) {
                let inner = sugared(Bytes.slice(s, i + head.utf8.count, close - 1), depth: depth + 1)
                if let written = sugar(head, inner) {
                    out += written
                    i = close
                    continue
                }
            }
            out.append(s[i])
            i += 1
        }
        return out
    }

    static let sugarHeads = ["Swift.Array<", "Swift.Optional<", "Swift.Dictionary<"]

    /// The sugar head at `i` and the index past its closing `>`.
    static func sugarGroup(_ s: [UInt8], at i: Int) -> (head: String, close: Int)? {
        for head in sugarHeads where Bytes.hasPrefix(s, head, at: i) {
            guard let close = Scanner.skipGroup(s, from: i + head.utf8.count - 1) else { return nil }
            return (head, close)
        }
        return nil
    }

    static func sugar(_ head: String, _ inner: [UInt8]) -> [UInt8]? {
        switch head {
        case "Swift.Array<":
            return Bytes.of("[") + inner + Bytes.of("]")
        case "Swift.Optional<":
            let wrap =
                Bytes.contains(inner, " -> ") || inner.contains(UInt8(ascii: "&")) || Bytes.hasPrefix(inner, "any ")
                || Bytes.hasPrefix(inner, "some ")
            return wrap ? Bytes.of("(") + inner + Bytes.of(")?") : inner + Bytes.of("?")
        default:
            guard let comma = Scanner.firstTopLevel(inner, from: 0, where: { inner[$0] == UInt8(ascii: ",") }) else {
                return nil
            }
            return Bytes.of("[") + Bytes.slice(inner, 0, comma) + Bytes.of(" :") + Bytes.slice(inner, comma + 1)
                + Bytes.of("]")
        }
    }

    /// Module qualifiers dropped from every qualified name of a type.
    static func withoutModules(_ s: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.count)
        var i = 0
        while i < s.count {
            let b = s[i]
            // `(Secret in _8CC2…)` → `Secret`
            if b == UInt8(ascii: "("), let close = Scanner.skipGroup(s, from: i),
                let inAt = Bytes.firstIndex(s, " in _", from: i), inAt < close
            {
                out += Bytes.slice(s, i + 1, inAt)
                i = close
                continue
            }
            let startsName =
                Bytes.isIdentifier(b) && !Bytes.isDigit(b)
                && (i == 0 || (!Bytes.isIdentifier(s[i - 1]) && s[i - 1] != UInt8(ascii: ".")))
            guard startsName else {
                out.append(b)
                i += 1
                continue
            }
            var j = i
            while j < s.count, Bytes.isIdentifier(s[j]) { j += 1 }
            let first = Bytes.slice(s, i, j)
            let qualified = j + 1 < s.count && s[j] == UInt8(ascii: ".") && Bytes.isIdentifier(s[j + 1])
            if qualified, !isGenericParameter(first) {
                i = j + 1
            } else {
                out += first
                i = j
            }
        }
        return out
    }

    /// `A`, `B`, `A1`, `τ_0_0`: how the demangler names generic parameters.
    static func isGenericParameter(_ name: [UInt8]) -> Bool {
        guard let first = name.first else { return false }
        if first >= 0x41, first <= 0x5A { return name.dropFirst().allSatisfy(Bytes.isDigit) }
        return Bytes.hasPrefix(name, "τ_")
    }

    static func isOperatorHead(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "/"), UInt8(ascii: "="), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "!"),
            UInt8(ascii: "*"), UInt8(ascii: "%"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"),
            UInt8(ascii: "|"), UInt8(ascii: "^"), UInt8(ascii: "~"), UInt8(ascii: "?"):
            true
        default: false
        }
    }

    // MARK: - Module and wrappers

    static func module(_ input: [UInt8], nesting: Int) -> [UInt8]? {
        guard nesting < FunctionNames.maxNesting, let s = unwrapped(input) else { return nil }
        for keep in ["static ", "@objc ", "@nonobjc ", "partial apply forwarder for ", "partial apply for "]
        where Bytes.hasPrefix(s, keep) {
            return module(Bytes.slice(s, keep.utf8.count), nesting: nesting + 1)
        }
        if Bytes.hasPrefix(s, "protocol witness for ") {
            // The witness is emitted where the conformance is declared: `… in conformance T : P in M`.
            guard let conformance = Bytes.lastIndex(s, " in conformance "),
                let inAt = Bytes.lastIndex(s, " in "), inAt > conformance
            else { return nil }
            return Bytes.slice(s, inAt + 4)
        }
        if let hash = localDeclarationHash(s, at: 0) {
            guard let inAt = Scanner.firstTopLevel(s, from: hash, where: { Bytes.hasPrefix(s, " in ", at: $0) }) else {
                return nil
            }
            return module(Bytes.slice(s, inAt + 4), nesting: nesting + 1)
        }
        // Thunks and outlined value operations name types only, not where the code was emitted.
        if Bytes.hasPrefix(s, "reabstraction thunk") || Bytes.hasPrefix(s, "lazy protocol witness table ")
            || Bytes.hasPrefix(s, "outlined ")
        {
            return nil
        }
        if let phrase = leadingPhraseEnd(s) { return module(Bytes.slice(s, phrase), nesting: nesting + 1) }
        if Bytes.hasPrefix(s, "(extension in ") {
            guard let close = Scanner.skipGroup(s, from: 0) else { return nil }
            return Bytes.trimmed(Bytes.slice(s, 14, close - 1))
        }
        // A member of a local type: `m() -> T in Local #1 in app.f() -> ()`.
        var i = 0
        while i < s.count, Bytes.isIdentifier(s[i]) { i += 1 }
        guard i > 0 else { return nil }
        if i < s.count, s[i] == UInt8(ascii: ".") { return Bytes.slice(s, 0, i) }
        if let inAt = Scanner.firstTopLevel(
            s, from: i,
            where: {
                Bytes.hasPrefix(s, " in ", at: $0) && localDeclarationHash(s, at: $0 + 4) != nil
            })
        {
            return module(Bytes.slice(s, inAt + 4), nesting: nesting + 1)
        }
        return nil
    }

    /// Phrases of compiler-made code that only forwards (after dropped wrappers such as specializations).
    static let wrapperPhrases = [
        "protocol witness for ", "partial apply forwarder for ", "partial apply for ", "reabstraction thunk",
        "thunk for ", "dispatch thunk of ", "curry thunk of ", "@objc thunk", "@nonobjc thunk", "vtable thunk for ",
        "outlined ", "key path getter for ", "key path setter for ", "key path equality operator for ",
        "key path hash function for ", "lazy protocol witness table accessor for ", "dynamic replacement thunk",
        "distributed thunk ", "merged protocol witness",
    ]

    static func isWrapper(_ input: [UInt8]) -> Bool {
        var s = input
        var rounds = 0
        // Look through specializations and async resume parts, but not through `outlined …`: that is one.
        while rounds < FunctionNames.maxNesting, !Bytes.hasPrefix(s, "outlined "),
            let end = droppedWrapperEnd(s), end < s.count
        {
            s = Bytes.slice(s, end)
            rounds += 1
        }
        if wrapperPhrases.contains(where: { Bytes.hasPrefix(s, $0) }) { return true }
        if let phrase = leadingPhraseEnd(s), Bytes.contains(Bytes.slice(s, 0, phrase), " value witness for ") {
            return true
        }
        return false
    }
}

/// Bracket-aware walking over a Swift demangled name: `(…)`, `[…]`, `{…}` and `<…>` nest; the `>` of `->` and
/// operator names after a `.` (`Swift.Comparable...< infix`, `V.< infix`) do not.
enum Scanner {
    /// The first index at depth 0 (from `start`) where `match` holds; nil when none or the brackets do not balance.
    static func firstTopLevel(_ s: [UInt8], from start: Int, where match: (Int) -> Bool) -> Int? {
        var depth = 0
        var i = max(start, 0)
        while i < s.count {
            if depth == 0, match(i) { return i }
            switch step(s, i, depth: &depth) {
            case .some(let next): i = next
            case .none: return nil
            }
        }
        return nil
    }

    /// Whether every bracket closes, in order.
    static func isBalanced(_ s: [UInt8]) -> Bool {
        var depth = 0
        var i = 0
        while i < s.count {
            guard let next = step(s, i, depth: &depth) else { return false }
            i = next
        }
        return depth == 0
    }

    /// The index just past the bracket group opened at `open`; nil when it does not close.
    static func skipGroup(_ s: [UInt8], from open: Int) -> Int? {
        guard open >= 0, open < s.count else { return nil }
        var depth = 0
        var i = open
        repeat {
            guard let next = step(s, i, depth: &depth) else { return nil }
            i = next
        } while depth > 0 && i < s.count
        return depth == 0 ? i : nil
    }

    /// Advances over one token, updating the depth; nil on a closing bracket at depth 0.
    static func step(_ s: [UInt8], _ i: Int, depth: inout Int) -> Int? {
        let b = s[i]
        switch b {
        case UInt8(ascii: "("), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "<"):
            depth += 1
            return i + 1
        case UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ">"):
            guard depth > 0 else { return nil }
            depth -= 1
            return i + 1
        case UInt8(ascii: "-") where i + 1 < s.count && s[i + 1] == UInt8(ascii: ">"):
            return i + 2
        case UInt8(ascii: "."):
            var j = i + 1
            guard j < s.count, SwiftName.isOperatorHead(s[j]) || s[j] == UInt8(ascii: ".") else { return j }
            while j < s.count, SwiftName.isOperatorHead(s[j]) || s[j] == UInt8(ascii: ".") { j += 1 }
            return j
        default:
            return i + 1
        }
    }
}
