import FaultlineCore
import Testing

/// The short names people read, from full demangled names (the forms `swift_demangle` and `__cxa_demangle`
/// print). The agreement with the toolchain on real compiler output is in
/// `SymbolicationTests/FunctionNamesAgreementTests`; these cases pin the rules and the hostile-input bounds.
@Suite struct FunctionNamesTests {
    @Test(arguments: [
        // Methods, labels, unlabeled arguments (the runtime's demangler prints them without `_:`).
        ("main.Inventory.item(at: Swift.Int) -> Swift.Int", "Inventory.item(at:)"),
        ("trap.pick(trap.Order, Swift.Int) -> Swift.Int", "pick(_:_:)"),
        ("b.mix(_: Swift.Int, b: Swift.Int, _: [Swift.String : Swift.Int]) -> ()", "mix(_:b:_:)"),
        ("app.Parser.run(Swift.String) -> [Swift.String]", "Parser.run(_:)"),
        ("app.fetch() async throws -> Swift.Int", "fetch()"),
        ("app.load(Swift.String) throws(app.LoadError) -> Swift.Int", "load(_:)"),
        (
            "Swift.print(_: Any..., separator: Swift.String, terminator: Swift.String) -> ()",
            "print(_:separator:terminator:)"
        ),
        ("app.apply(_: (Swift.Int, Swift.Int) -> Swift.Int, to: (Swift.Int, Swift.Int)) -> Swift.Int", "apply(_:to:)"),
        // Static, initializers, deinitializers, accessors, subscripts.
        ("static app.App.main() async -> ()", "static App.main()"),
        ("app.Inventory.init(items: [Swift.Int]) -> app.Inventory", "Inventory.init(items:)"),
        ("app.Foo.deinit", "Foo.deinit"),
        ("app.Parser.__deallocating_deinit", "Parser.__deallocating_deinit"),
        ("app.Foo.bar.getter : Swift.Int", "Foo.bar.getter"),
        ("app.Inventory.subscript.getter : (Swift.Int) -> Swift.Int", "Inventory.subscript.getter"),
        ("app.Inventory.items.modify : [Swift.Int] with unmangled suffix \".resume.0\"", "Inventory.items.modify"),
        ("app.counter.unsafeMutableAddressor : Swift.Int", "counter.unsafeMutableAddressor"),
        // Closures, nested closures, local functions and types.
        (
            "closure #1 (Swift.Int) -> Swift.Bool in app.Parser.run(Swift.String) -> [Swift.String]",
            "closure #1 in Parser.run(_:)"
        ),
        (
            "closure #1 (Swift.Int) -> Swift.Int in closure #2 (Swift.Int) -> Swift.Int in app.run([Swift.Int]) -> [Swift.Int]",
            "closure #1 in closure #2 in run(_:)"
        ),
        ("implicit closure #2 () -> Swift.String in app.check(Swift.Bool) -> ()", "implicit closure #2 in check(_:)"),
        ("closure #1 @Sendable () async -> () in static app.App.main() async -> ()", "closure #1 in static App.main()"),
        ("inner #1 (Swift.Int) -> Swift.Int in b.outer() -> Swift.Int", "inner #1 (_:) in outer()"),
        ("m() -> Swift.Int in Local #1 in b.outer() -> Swift.Int", "m() in Local #1 in outer()"),
        (
            "init() -> Local #1 in b.outer() -> Swift.Int in Local #1 in b.outer() -> Swift.Int",
            "init() in Local #1 in outer()"
        ),
        // Generics, where clauses, extensions, private discriminators.
        ("app.generic<A where A: Swift.Comparable, A: Swift.Hashable>([A]) -> A?", "generic(_:)"),
        ("app.Box.map<A>((A) -> A1) -> app.Box<A1>", "Box.map(_:)"),
        ("(extension in app):Swift.Int.doubled() -> Swift.Int", "Int.doubled()"),
        ("(extension in b):Swift.Array<A where A == Swift.Int>.total() -> Swift.Int", "Array.total()"),
        ("app.(Parser in _8CC290D01A98D2866F487ABF00E545A7).parse() -> Swift.Int", "Parser.parse()"),
        // Operators, including ones made of `<`, `>` and dots.
        ("static app.V.+ infix(app.V, app.V) -> app.V", "static V.+ infix(_:_:)"),
        ("static app.V.< infix(app.V, app.V) -> Swift.Bool", "static V.< infix(_:_:)"),
        ("static Swift.Comparable...< infix(A, A) -> Swift.Range<A>", "static Comparable...< infix(_:_:)"),
        ("static app.V.>>= infix(inout app.V, Swift.Int) -> ()", "static V.>>= infix(_:_:)"),
        // Wrappers that are dropped.
        (
            "generic specialization <Swift.Int> of Swift.Array._checkSubscript(_: Swift.Int, wasNativeTypeChecked: Swift.Bool) -> Swift._DependenceToken",
            "Array._checkSubscript(_:wasNativeTypeChecked:)"
        ),
        (
            "function signature specialization <Arg[1] = Dead> of app.Parser.run(Swift.String) -> [Swift.String]",
            "Parser.run(_:)"
        ),
        (
            "function signature specialization <Arg[0] = [Closure Propagated : closure #1 (Swift.Int) -> Swift.Bool in app.f() -> (), Argument Types : [Swift.Int]]> of app.g((Swift.Int) -> Swift.Bool) -> ()",
            "g(_:)"
        ),
        ("merged app.Inventory.item(at: Swift.Int) -> Swift.Int", "Inventory.item(at:)"),
        ("(1) await resume partial function for static app.App.main() async -> ()", "static App.main()"),
        (
            "(2) suspend resume partial function for function signature specialization <Arg[0] = Dead> of app.f() async -> ()",
            "f()"
        ),
        (
            "generic specialization <Swift.String> of (extension in Swift):Swift.Collection.split(maxSplits: Swift.Int, omittingEmptySubsequences: Swift.Bool, whereSeparator: (A.Element) throws -> Swift.Bool) throws -> [A.SubSequence]",
            "Collection.split(maxSplits:omittingEmptySubsequences:whereSeparator:)"
        ),
        // Wrappers that stay, shortened the way the toolchain shortens them.
        (
            "partial apply forwarder for closure #2 (Swift.Int) -> Swift.Bool in b.run([Swift.Int]) -> [Swift.Int]",
            "partial apply for closure #2 in run(_:)"
        ),
        (
            "protocol witness for app.Shape.area() -> Swift.Double in conformance app.Square : app.Shape in app",
            "protocol witness for Shape.area() in conformance Square"
        ),
        (
            "reabstraction thunk helper from @escaping @callee_guaranteed (@guaranteed Swift.String) -> (@owned Swift.Int) to @escaping @callee_guaranteed (@in_guaranteed Swift.String) -> (@out Swift.Int)",
            "thunk for @escaping @callee_guaranteed (@guaranteed String) -> (@owned Int)"
        ),
        ("outlined copy of Swift.Optional<app.Foo>", "outlined copy of Foo?"),
        (
            "outlined destroy of Swift.Optional<Swift.Dictionary<Swift.String, Swift.Array<Swift.Int>>>",
            "outlined destroy of [String : [Int]]?"
        ),
        ("outlined copy of Swift.Optional<(Swift.Int) -> ()>", "outlined copy of ((Int) -> ())?"),
        ("outlined copy of Swift.Optional<Swift.Array<Swift.Int>", "outlined copy of Optional<Array<Int>"),
        ("outlined destroy of [Swift.Int]", "outlined destroy of [Int]"),
        (
            "default argument 1 of Swift.print(_: Any..., separator: Swift.String, terminator: Swift.String) -> ()",
            "default argument 1 of print(_:separator:terminator:)"
        ),
        ("destroy value witness for app.Box", "destroy for Box"),
        (
            "type metadata accessor for b.(Secret in _8CC290D01A98D2866F487ABF00E545A7)",
            "type metadata accessor for Secret"
        ),
    ])
    func swiftNames(full: String, short: String) {
        #expect(FunctionNames.simplified(full) == short)
        #expect(FunctionNames.language(of: full) == .swift)
    }

    @Test(arguments: [
        (
            "shop::payments::charge(int, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
            "shop::payments::charge"
        ),
        ("(anonymous namespace)::parse(char const*)", "(anonymous namespace)::parse"),
        ("shop::payments::Ledger::operator()(int) const", "shop::payments::Ledger::operator()"),
        ("shop::payments::Ledger::operator<(shop::payments::Ledger const&) const", "shop::payments::Ledger::operator<"),
        ("shop::payments::Ledger::operator<<(int)", "shop::payments::Ledger::operator<<"),
        ("shop::payments::Ledger::operator bool() const", "shop::payments::Ledger::operator bool"),
        ("shop::payments::Ledger::at(int) &", "shop::payments::Ledger::at"),
        ("shop::Ledger::swap(shop::Ledger&) &&", "shop::Ledger::swap"),
        ("shop::Ledger::size() const noexcept", "shop::Ledger::size"),
        ("std::vector<int, std::allocator<int> >::at(unsigned long)", "std::vector<int, std::allocator<int> >::at"),
        ("double shop::payments::twice<double>(double)", "shop::payments::twice<double>"),
        (
            "bool __gnu_cxx::operator==<int const*, std::vector<int> >(int const*, int const*)",
            "__gnu_cxx::operator==<int const*, std::vector<int> >"
        ),
        ("run(int)::{lambda(int)#1}::operator()(int) const", "run(int)::{lambda(int)#1}::operator()"),
        ("operator new(unsigned long, void*)", "operator new"),
        ("shop::charge(int) [clone .cold]", "shop::charge"),
        ("parse(int)", "parse"),
        ("non-virtual thunk to shop::Impl::run(int)", "non-virtual thunk to shop::Impl::run"),
    ])
    func cppNames(full: String, short: String) {
        #expect(FunctionNames.simplified(full) == short)
        #expect(FunctionNames.language(of: full) == .cpp)
        #expect(FunctionNames.swiftModule(of: full) == nil)
    }

    @Test(arguments: [
        "main", "compute", "__libc_start_call_main", "parse.constprop.0", "helper.cold", "_start",
        // Mangled names that did not demangle come back as they are.
        "$s3app9InventoryV4item2atS2i_tF", "_ZN4shop6chargeEi", "_ZZZ", "",
        // Unrecognised text, and names that are short already (simplifying twice changes nothing).
        "0x7f3a12 in ???", "libfoo.so+0x1234", "Swift runtime failure: Index out of range", "App.main()",
        "Inventory.item(at:)", "pick(_:_:)", "outer()", "closure #1 in Parser.run(_:)",
    ])
    func unchanged(name: String) {
        #expect(FunctionNames.simplified(name) == name)
        #expect(FunctionNames.swiftModule(of: name) == nil)
        #expect(!FunctionNames.isWrapper(name))
    }

    @Test(arguments: [
        ("main.Inventory.item(at: Swift.Int) -> Swift.Int", "main"),
        (
            "generic specialization <Swift.Int> of Swift.Array._checkSubscript(_: Swift.Int, wasNativeTypeChecked: Swift.Bool) -> Swift._DependenceToken",
            "Swift"
        ),
        ("(extension in app):Swift.Int.doubled() -> Swift.Int", "app"),
        ("closure #1 (Swift.Int) -> Swift.Bool in app.Parser.run(Swift.String) -> [Swift.String]", "app"),
        ("static app.App.main() async -> ()", "app"),
        (
            "protocol witness for Swift.IteratorProtocol.next() -> A.Element? in conformance Swift.IndexingIterator<A> : Swift.IteratorProtocol in Swift",
            "Swift"
        ),
        ("protocol witness for app.Shape.area() -> Swift.Double in conformance app.Square : app.Shape in app", "app"),
        ("m() -> Swift.Int in Local #1 in b.outer() -> Swift.Int", "b"),
        ("app.Foo.deinit", "app"),
        ("app.(Parser in _8CC290D01A98D2866F487ABF00E545A7).parse() -> Swift.Int", "app"),
        ("(1) await resume partial function for static app.App.main() async -> ()", "app"),
    ])
    func modules(full: String, module: String) {
        #expect(FunctionNames.swiftModule(of: full) == module)
    }

    @Test func wrappers() {
        let wrappers = [
            "protocol witness for Swift.IteratorProtocol.next() -> A.Element? in conformance Swift.IndexingIterator<A> : Swift.IteratorProtocol in Swift",
            "partial apply forwarder for closure #2 (Swift.Int) -> Swift.Bool in b.run([Swift.Int]) -> [Swift.Int]",
            "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
            "function signature specialization <Arg[1] = [Constant Propagated Function : async_Main]> of reabstraction thunk helper from @escaping @convention(thin) @async () -> () to @escaping @callee_guaranteed @async () -> (@out (), @error @owned Swift.Error)",
            "dispatch thunk of app.Shape.area() -> Swift.Double",
            "outlined copy of Swift.Optional<app.Foo>",
            "outlined destroy of [Swift.Int]",
            "destroy value witness for app.Box",
            "(1) await resume partial function for protocol witness for app.Loader.load() async -> () in conformance app.Disk : app.Loader in app",
            "non-virtual thunk to shop::Impl::run(int)",
        ]
        for name in wrappers { #expect(FunctionNames.isWrapper(name), "\(name)") }
        let code = [
            "main.Inventory.item(at: Swift.Int) -> Swift.Int",
            "generic specialization <Swift.Int> of Swift.Array._checkSubscript(_: Swift.Int, wasNativeTypeChecked: Swift.Bool) -> Swift._DependenceToken",
            "merged app.Inventory.item(at: Swift.Int) -> Swift.Int",
            "closure #1 (Swift.Int) -> Swift.Bool in app.Parser.run(Swift.String) -> [Swift.String]",
            "shop::payments::charge(int)", "main",
        ]
        for name in code { #expect(!FunctionNames.isWrapper(name), "\(name)") }
    }

    // MARK: - Hostile input

    /// Names come from uploaded files: unbalanced brackets, huge names and deep nesting give an answer
    /// (the input back when it cannot be read), never a trap, in time linear in the name.
    @Test func hostileNamesNeverTrap() {
        var names = [
            "app.f(", "app.f)", "app.f<", "app.f>", "app.f<<<<(", "closure #1 in", "closure #", "closure #1 (",
            "generic specialization <", "generic specialization <Swift.Int of app.f() -> ()",
            "function signature specialization <> of ", "(1) await resume partial function for ",
            "(extension in app", "(extension in app)", "(extension in app):", "protocol witness for  in conformance ",
            "reabstraction thunk helper from ", "static ", "static static static", "a.b.c.d : ", " -> ", " : ",
            "f(::)", "::(", "operator", "operator<", "x::operator", "(anonymous namespace)::", "{lambda(int)#1}::(",
            "A::B(int)::", "foo(int) [clone ", "a:: [clone .cold]", "\u{0}::\u{0}(", "é.ü(ß: Ω) -> ()",
            "app.(Parser in _).run() -> ()", "m() -> Swift.Int in Local #", "outlined copy of ", "merged ",
            "specialized specialized ", "...", ". . .", "app..f() -> ()", "app.f.() -> ()",
        ]
        // Deep nesting and long names.
        names.append(String(repeating: "closure #1 () -> () in ", count: 2_000) + "app.f() -> ()")
        names.append(String(repeating: "generic specialization <Swift.Int> of ", count: 500) + "app.f() -> ()")
        names.append("app.f" + String(repeating: "(", count: 16 << 10) + " -> ()")
        names.append("app.f" + String(repeating: "<", count: 16 << 10) + "() -> ()")
        names.append(String(repeating: "a::", count: 5_000) + "f(int)")
        names.append(
            String(repeating: "std::vector<", count: 4_000) + "int" + String(repeating: ">", count: 4_000) + "::at()")
        names.append("app.f(" + String(repeating: "a: Swift.Int, ", count: 1_000) + ") -> ()")
        names.append(String(repeating: "x", count: FunctionNames.maxLength + 1) + " -> ()")
        names.append(String(repeating: "(", count: 40_000) + "::")
        names.append(String(repeating: "static ", count: 3_000) + "app.f() -> ()")
        for name in names {
            let short = FunctionNames.simplified(name)
            _ = FunctionNames.swiftModule(of: name)
            _ = FunctionNames.isWrapper(name)
            #expect(short.utf8.count <= name.utf8.count + 64, "grew: \(name.prefix(60))")
        }
        // Too deep to follow: the name comes back as it is rather than half-simplified.
        let deep = String(repeating: "closure #1 () -> () in ", count: 2_000) + "app.f() -> ()"
        #expect(FunctionNames.simplified(deep) == deep)
        // Over the length limit: unchanged.
        let long = "app.f" + String(repeating: "x", count: FunctionNames.maxLength) + "() -> ()"
        #expect(FunctionNames.simplified(long) == long)
        // A long but well-formed name is still simplified.
        let wide = "app.f(" + Array(repeating: "a: Swift.Int", count: 1_000).joined(separator: ", ") + ") -> ()"
        #expect(FunctionNames.simplified(wide) == "f(" + String(repeating: "a:", count: 1_000) + ")")
    }

    /// Random mutations of real names: every answer is total and no longer than the input plus the few words
    /// a rule may add (`partial apply for`, `thunk for`).
    @Test func mutatedNamesNeverTrap() {
        let seeds = [
            "closure #1 (Swift.Int) -> Swift.Bool in app.Parser.run(Swift.String) -> [Swift.String]",
            "generic specialization <Swift.Int> of Swift.Array._checkSubscript(_: Swift.Int, wasNativeTypeChecked: Swift.Bool) -> Swift._DependenceToken",
            "protocol witness for app.Shape.area() -> Swift.Double in conformance app.Square : app.Shape in app",
            "static Swift.Comparable...< infix(A, A) -> Swift.Range<A>",
            "bool __gnu_cxx::operator==<int const*, std::vector<int> >(int const*, int const*)",
            "run(int)::{lambda(int)#1}::operator()(int) const",
        ]
        var generator = SplitMix(seed: 0x5EED)
        let alphabet = Array("()<>[]{}:., #-_aZ0".utf8)
        for seed in seeds {
            let bytes = Array(seed.utf8)
            for _ in 0..<400 {
                var mutated = bytes
                for _ in 0..<(1 + Int(generator.next() % 4)) {
                    let at = Int(generator.next() % UInt64(mutated.count))
                    switch generator.next() % 3 {
                    case 0: mutated[at] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    case 1: mutated.remove(at: at)
                    default: mutated.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: at)
                    }
                    if mutated.isEmpty { mutated = [0x61] }
                }
                let name = String(decoding: mutated, as: UTF8.self)
                let short = FunctionNames.simplified(name)
                _ = FunctionNames.swiftModule(of: name)
                _ = FunctionNames.isWrapper(name)
                #expect(short.utf8.count <= name.utf8.count + 32, "\(name)")
            }
        }
    }
}

/// A small deterministic generator (SplitMix64), so a failing mutation is reproducible.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
