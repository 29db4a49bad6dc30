/// Readable names for the functions of a stack trace: `Inventory.item(at:)` for
/// `main.Inventory.item(at: Swift.Int) -> Swift.Int`, `shop::payments::charge` for
/// `shop::payments::charge(int, std::string const&) const`.
///
/// The symbolicator stores the *full* demangled name (the Swift runtime's `swift_demangle`, libstdc++'s
/// `__cxa_demangle`); this type derives the short form a person reads in lists, titles and frames, the way
/// `swift-demangle --simplified` and Crashlytics show them. It works on the demangled text only, so it also
/// serves names a client symbolicated itself.
///
/// Which language a name is in is decided from the text alone (`language(of:)`):
/// - **C++** when it contains `::` (Swift's demangler never prints `::`), or when it has an argument list and
///   none of the Swift marks below (`parse(int)`).
/// - **Swift** when it has a mark of the full form: ` -> ` (every Swift function type, so also every closure,
///   specialization, witness and thunk of one), ` : ` (an accessor's or a variable's type,
///   `Foo.bar.getter : Swift.Int`), a compiler phrase about a type (`type metadata accessor for `,
///   `outlined copy of `, `… value witness for `), or `module.Type.deinit`.
/// - **Other** (C, a name that did not demangle, anything unrecognised): returned unchanged. So is a name that
///   is short already (`Inventory.item(at:)`, `closure #1 in Parser.run()`: `:)` or `()` without ` -> `), so
///   that simplifying twice changes nothing, and a C++ free function without arguments (`run()`).
///
/// Names come from uploaded files and reports, so they are hostile: every function here is total (never
/// traps), runs in time linear in the name (times a small nesting bound), and gives the input back unchanged
/// when it cannot make sense of it (unbalanced brackets, names over `maxLength` bytes, more than `maxNesting`
/// nested `closure #1 in closure #1 in …` levels).
public enum FunctionNames {
    /// The longest name simplified, in UTF-8 bytes; longer ones are returned unchanged.
    public static let maxLength = 64 << 10
    /// How many nested contexts (`closure #1 in closure #2 in …`, wrappers around wrappers) are followed.
    public static let maxNesting = 32

    /// The language a demangled name is written in, as far as the text tells.
    public enum Language: Sendable, Equatable {
        case swift
        case cpp
        /// C, a name that did not demangle, or anything unrecognised.
        case other
    }

    /// The readable short form of a demangled name.
    ///
    /// Swift: no module prefix, argument types, return type, `async`/`throws`, generic parameter lists or where
    /// clauses, private discriminators or `(extension in X):` prefixes, and no `generic specialization <…> of`,
    /// `function signature specialization <…> of`, `specialized`, `merged` or
    /// `(1) await resume partial function for` wrappers; argument labels stay (`Inventory.item(at:)`,
    /// `pick(_:_:)`, `closure #1 in Parser.run(_:)`, `static App.main()`, `Inventory.subscript.getter`).
    /// Compiler-made functions about a *type* keep their phrase, since the rest is a type, not a function
    /// (`outlined copy of Optional<Foo>`, `type metadata accessor for Foo`); `isWrapper` says they only forward.
    /// C++: the qualified name without return type, argument list, cv/ref/noexcept qualifiers and
    /// `[clone .cold]` suffixes (`shop::payments::charge`, `Foo::operator()`); template arguments are kept.
    /// Anything else comes back unchanged.
    public static func simplified(_ demangled: String) -> String {
        let bytes = Array(demangled.utf8)
        guard bytes.count <= maxLength else { return demangled }
        let out: [UInt8]?
        switch language(bytes) {
        case .swift: out = SwiftName.simplify(SwiftName.withoutUnmangledSuffix(bytes), nesting: 0)
        case .cpp: out = CppName.simplify(bytes)
        case .other: out = nil
        }
        guard let out, !out.isEmpty else { return demangled }
        return String(decoding: out, as: UTF8.self)
    }

    /// The Swift module a demangled Swift name's code belongs to: `Swift` for `Swift.Array._checkSubscript(…)`
    /// and `generic specialization <…> of Swift.…`, `app` for `app.Inventory.item(at:)`, for
    /// `(extension in app):Swift.Int.doubled()` and for a protocol witness of a conformance declared in `app`;
    /// nil for C and C++ names and for compiler-made code that names no module (reabstraction thunks).
    public static func swiftModule(of demangled: String) -> String? {
        let bytes = Array(demangled.utf8)
        guard bytes.count <= maxLength, language(bytes) == .swift else { return nil }
        guard let module = SwiftName.module(SwiftName.withoutUnmangledSuffix(bytes), nesting: 0), !module.isEmpty
        else { return nil }
        return String(decoding: module, as: UTF8.self)
    }

    /// Whether a demangled name is compiler-made code that only forwards to the real function: thunks
    /// (reabstraction, dispatch, curry, `@objc`, key-path accessors, C++ virtual and non-virtual thunks),
    /// protocol witnesses, partial-apply forwarders, outlined copies/destroys/retains/releases and value
    /// witnesses — also when wrapped in a specialization or an async resume partial function.
    /// A specialization or a merged function alone is not a wrapper: it is the function's own code.
    public static func isWrapper(_ demangled: String) -> Bool {
        let bytes = Array(demangled.utf8)
        guard bytes.count <= maxLength else { return false }
        // Swift's wrapper phrases are looked for in short names too (`partial apply for closure #1 in f()`).
        return language(bytes) == .cpp ? CppName.isWrapper(bytes) : SwiftName.isWrapper(bytes)
    }

    /// The language of a demangled name (the rule is in the type's overview).
    public static func language(of demangled: String) -> Language {
        let bytes = Array(demangled.utf8)
        guard bytes.count <= maxLength else { return .other }
        return language(bytes)
    }

    static func language(_ s: [UInt8]) -> Language {
        if Bytes.contains(s, "::") { return .cpp }
        if Bytes.contains(s, " -> ") || Bytes.contains(s, " : ") { return .swift }
        // Short already: `Inventory.item(at:)`, `closure #1 in Parser.run()` (a full Swift function name always
        // has ` -> `), or a C++ function without arguments (`run()`), which has nothing to cut.
        if Bytes.contains(s, ":)") || Bytes.contains(s, "()") { return .other }
        if SwiftName.startsWithTypePhrase(s) { return .swift }
        // `app.Foo.deinit` (module, type, deinit); `Foo.deinit` is short already.
        if Bytes.hasSuffix(s, ".deinit") || Bytes.hasSuffix(s, ".__deallocating_deinit"),
            s.filter({ $0 == UInt8(ascii: ".") }).count >= 2
        {
            return .swift
        }
        if CppName.looksLikeFunction(s) { return .cpp }
        return .other
    }

}

/// Byte-level helpers over UTF-8 names: structure is ASCII, identifiers may be anything and are copied as is.
enum Bytes {
    static func of(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func hasPrefix(_ s: [UInt8], _ prefix: String, at start: Int = 0) -> Bool {
        var i = start
        for byte in prefix.utf8 {
            guard i < s.count, s[i] == byte else { return false }
            i += 1
        }
        return true
    }

    static func hasSuffix(_ s: [UInt8], _ suffix: String) -> Bool {
        let suffix = Array(suffix.utf8)
        guard s.count >= suffix.count else { return false }
        return hasPrefix(s, String(decoding: suffix, as: UTF8.self), at: s.count - suffix.count)
    }

    /// Whether the bytes `n` start at `i` (in bounds checked by the caller).
    @inline(__always)
    static func matches(_ s: [UInt8], _ n: [UInt8], at i: Int) -> Bool {
        var k = 0
        while k < n.count {
            if s[i + k] != n[k] { return false }
            k += 1
        }
        return true
    }

    /// The first index (from `from`, below `limit`) where `needle` starts, at any depth.
    static func firstIndex(_ s: [UInt8], _ needle: String, from: Int = 0, limit: Int = .max) -> Int? {
        let n = Array(needle.utf8)
        guard let first = n.first, s.count >= n.count, from >= 0 else { return nil }
        var i = from
        let end = min(s.count - n.count, limit)
        while i <= end {
            if s[i] == first, matches(s, n, at: i) { return i }
            i += 1
        }
        return nil
    }

    static func contains(_ s: [UInt8], _ needle: String) -> Bool { firstIndex(s, needle) != nil }

    /// The last index where `needle` starts.
    static func lastIndex(_ s: [UInt8], _ needle: String) -> Int? {
        let n = Array(needle.utf8)
        guard let first = n.first, s.count >= n.count else { return nil }
        var i = s.count - n.count
        while i >= 0 {
            if s[i] == first, matches(s, n, at: i) { return i }
            i -= 1
        }
        return nil
    }

    static func slice(_ s: [UInt8], _ from: Int, _ to: Int? = nil) -> [UInt8] {
        let end = min(to ?? s.count, s.count)
        guard from < end, from >= 0 else { return [] }
        return Array(s[from..<end])
    }

    /// Letters, digits, `_`, `$` and every non-ASCII byte (identifiers may be Unicode).
    static func isIdentifier(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || b == 0x24
            || b >= 0x80
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }

    static func trimmed(_ s: [UInt8]) -> [UInt8] {
        var start = 0
        var end = s.count
        while start < end, s[start] == 0x20 { start += 1 }
        while end > start, s[end - 1] == 0x20 { end -= 1 }
        return slice(s, start, end)
    }
}
