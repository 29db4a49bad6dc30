import FaultlineCore
import Foundation
import Symbolication
import TestSupport
import Testing

/// `FunctionNames.simplified` on real compiler output: every function symbol of a Swift program (built `-Onone`
/// and `-O`, so specializations, merged functions, async partial functions and outlined copies appear) and of a
/// C++ program (`-O0` and `-O2`, so clones appear) is demangled with our `Demangler` and simplified, and the result
/// is compared with the toolchain's own short form, computed in the test:
///
/// - Swift: `swift-demangle --simplified` (`/opt/swift/usr/bin`). Our full form is first checked against
///   `swift-demangle --no-sugar` (the runtime's `swift_demangle` prints the same text: no `[T]`/`T?` sugar, which
///   the short form then writes, as the toolchain's does). Two
///   differences are ours on purpose and are normalised in the reference, nothing else: the reference prefixes
///   specializations with `specialized ` (we drop it: a specialization is the function the developer wrote), and
///   it keeps generic parameter lists before a `.` or `(` (`Box.map<A>(_:)`, `Array<A>.total()`,
///   `Collection<>.split(…)`); we drop those too.
/// - C++: `c++filt -p` (binutils' demangler without argument lists: it also drops return types and cv/ref
///   qualifiers). One difference is normalised: it keeps GCC's ` [clone .cold]` suffixes, which we drop.
@Suite struct FunctionNamesAgreementTests {
    static let swiftSource = """
        struct Inventory {
            var items: [Int]
            init(items: [Int]) { self.items = items }
            @inline(never) func item(at index: Int) -> Int { items[index] }
            subscript(slot: Int) -> Int {
                get { items[slot] }
                set { items[slot] = newValue }
            }
            var count: Int { items.count }
            var label = "stock" { didSet { print(oldValue) } }
            static func make() -> Inventory { Inventory(items: [1, 2, 3]) }
            mutating func add(_ x: Int, _ y: Int) { items.append(x + y) }
        }

        final class Parser {
            var text = ""
            lazy var words: [String] = text.split(separator: " ").map(String.init)
            @inline(never) func run(_ input: String) -> [String] {
                input.split(separator: " ").map { word in String(word) }.filter { $0.count > 1 }
            }
            class func kind() -> Int { 1 }
            func nested() -> () -> Int { { [self] in { self.text.count }() } }
            deinit { print("bye") }
        }

        private struct Secret { @inline(never) func reveal() -> Int { 42 } }

        extension Int { @inline(never) func doubled() -> Int { self * 2 } }
        extension Array where Element == Int { func total() -> Int { reduce(0, +) } }

        struct Box<T> {
            var value: T
            func get() -> T { value }
            func map<U>(_ transform: (T) -> U) -> Box<U> { Box<U>(value: transform(value)) }
        }

        @inline(never) func pick(_ a: Int, _ b: Int) -> Int { a > b ? a : b }
        @inline(never) func largest<T: Comparable>(_ xs: [T]) -> T? where T: Hashable { xs.max() }
        func fetch(retries: Int) async throws -> Int { retries }
        enum LoadError: Error { case missing }
        func load(_ name: String) throws(LoadError) -> Int { if name.isEmpty { throw .missing }; return 1 }
        func outer() -> Int {
            func inner(_ x: Int) -> Int { x + 1 }
            struct Local { func m() -> Int { 3 } }
            return inner(2) + Local().m()
        }

        protocol Shape { func area() -> Double }
        struct Square: Shape { var side: Double; func area() -> Double { side * side } }

        struct Vector: Equatable, Comparable {
            var x: Int
            static func + (a: Vector, b: Vector) -> Vector { Vector(x: a.x + b.x) }
            static func < (a: Vector, b: Vector) -> Bool { a.x < b.x }
        }

        @main struct App {
            static func main() async {
                let parser = Parser()
                print(parser.run("a bb ccc"), pick(1, 2), Secret().reveal(), Box(value: 3).map { $0 + 1 }.get())
                let shape: any Shape = Square(side: 2)
                print(shape.area(), largest([1, 2, 3]) ?? 0, (Vector(x: 1) + Vector(x: 2)).x, Vector(x: 1) < Vector(x: 2))
                print((try? await fetch(retries: 2)) ?? 0, (try? load("x")) ?? 0, outer(), [1, 2].total())
                var inventory = Inventory.make()
                inventory[0] = 3
                inventory.label = "sold"
                inventory.add(1, 2)
                print(inventory.item(at: 0), inventory.count, 4.doubled(), Parser.kind(), parser.nested()(), parser.words)
            }
        }
        """

    static let cppSource = """
        #include <cstdio>
        #include <functional>
        #include <map>
        #include <string>
        #include <vector>
        namespace shop { namespace payments {
        __attribute__((noinline)) int charge(int cents, const std::string& who) { return cents + (int)who.size(); }
        struct Ledger {
            std::vector<int> rows;
            int total() const { int t = 0; for (int r : rows) t += r; return t; }
            int operator()(int x) const noexcept { return x * 2; }
            bool operator<(const Ledger& other) const { return rows.size() < other.rows.size(); }
            Ledger& operator<<(int x) { rows.push_back(x); return *this; }
            int& at(int i) & { return rows.at(i); }
            explicit operator bool() const { return !rows.empty(); }
        };
        template <typename T> T twice(T x) { return x + x; }
        template <typename T> struct Box { T value; T get() const { return value; } };
        } }
        namespace { __attribute__((noinline)) int parse(const char* s) { return s[0]; } }
        int run(int n) {
            auto add = [n](int x) { return x + n; };
            std::function<int(int)> twiceAdd = [&](int y) { return add(y) * 2; };
            std::map<std::string, int> counts; counts["a"] = 1;
            shop::payments::Ledger ledger; ledger << 1 << 2;
            shop::payments::Box<double> box{2.0};
            return twiceAdd(n) + ledger.total() + ledger(3) + (ledger < ledger) + shop::payments::twice(n)
                + (int)shop::payments::twice(1.5) + parse("x") + (int)box.get() + ledger.at(0) + (bool)ledger
                + counts["a"] + shop::payments::charge(1, "x");
        }
        int main(int argc, char**) {
            std::vector<int> v(3);
            if (argc > 3) { std::printf("%d\\n", v.at(argc)); }
            std::printf("%d\\n", run(argc));
        }
        """

    /// Function symbols (text, weak) defined in `binary` whose names start with one of `prefixes`.
    func functionSymbols(_ binary: String, prefixes: [String]) throws -> [String] {
        let out = try Command.check("nm", ["--defined-only", binary])
        var names: Set<String> = []
        for line in out.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2)
            guard parts.count == 3, ["t", "T", "w", "W"].contains(parts[1]) else { continue }
            let name = String(parts[2])
            if prefixes.contains(where: name.hasPrefix) { names.insert(name) }
        }
        return names.sorted()
    }

    /// Runs `tool` over `names` in batches; one output line per name.
    func batch(_ tool: String, _ options: [String], _ names: [String]) throws -> [String] {
        var lines: [String] = []
        for start in stride(from: 0, to: names.count, by: 200) {
            let chunk = Array(names[start..<min(start + 200, names.count)])
            let out = try Command.check(tool, options + chunk)
            lines += out.split(separator: "\n", omittingEmptySubsequences: false).prefix(chunk.count).map(String.init)
        }
        return lines
    }

    /// The reference's short Swift form with our two deliberate differences taken out (see the suite's comment).
    static func normalisedSwiftReference(_ reference: String) -> String {
        var text = reference.replacingOccurrences(of: "specialized ", with: "")
        // Drop `<…>` groups directly followed by `.` or `(`; operators such as `..<` are not groups.
        var out = ""
        let chars = Array(text)
        var i = 0
        while i < chars.count {
            if chars[i] == "<", i > 0, chars[i - 1].isLetter || chars[i - 1].isNumber || chars[i - 1] == "_" {
                var depth = 0
                var j = i
                while j < chars.count {
                    if chars[j] == "<" { depth += 1 }
                    if chars[j] == ">" { depth -= 1; if depth == 0 { break } }
                    j += 1
                }
                if j + 1 < chars.count, chars[j + 1] == "." || chars[j + 1] == "(" {
                    i = j + 1
                    continue
                }
            }
            out.append(chars[i])
            i += 1
        }
        text = out
        return text
    }

    @Test func swiftNamesAgreeWithSwiftDemangleSimplified() throws {
        let folder = try TempFolder("names-swift")
        let source = try folder.write("app.swift", Self.swiftSource)
        var symbols: Set<String> = []
        for (name, flags) in [("app-onone", ["-Onone"]), ("app-o", ["-O"])] {
            let binary = folder.file(name)
            try Command.check(
                "swiftc", flags + ["-g", "-parse-as-library", "-module-name", "app", source, "-o", binary])
            symbols.formUnion(try functionSymbols(binary, prefixes: ["$s", "_$s"]))
        }
        let mangled = symbols.sorted()
        #expect(mangled.count > 150, "\(mangled.count) Swift function symbols")
        // The runtime's demangler writes no type sugar (`Swift.Array<Swift.Int>`, not `[Swift.Int]`).
        let fullReference = try batch("swift-demangle", ["--compact", "--no-sugar"], mangled)
        let shortReference = try batch("swift-demangle", ["--simplified", "--compact"], mangled)
        try #require(fullReference.count == mangled.count && shortReference.count == mangled.count)

        var mismatches: [String] = []
        var short: [String: String] = [:]
        for (index, symbol) in mangled.enumerated() {
            let full = Demangler.demangle(symbol)
            // Our full form is the toolchain's full form.
            if full != fullReference[index] {
                mismatches.append("full \(symbol): ours \(full) tool \(fullReference[index])")
            }
            let ours = FunctionNames.simplified(full)
            let want = Self.normalisedSwiftReference(shortReference[index])
            if ours != want { mismatches.append("\(full)\n  ours: \(ours)\n  tool: \(want)") }
            // A short name is a fixed point: simplifying it again changes nothing.
            if FunctionNames.simplified(ours) != ours { mismatches.append("not idempotent: \(ours)") }
            short[symbol] = ours
        }
        #expect(
            mismatches.isEmpty,
            "\(mismatches.count) of \(mangled.count) differ:\n\(mismatches.prefix(10).joined(separator: "\n"))")

        // The app's own functions read as a developer wrote them.
        let names = Set(short.values)
        for expected in [
            "Inventory.item(at:)", "Inventory.init(items:)", "Inventory.subscript.getter", "Inventory.subscript.setter",
            "Inventory.count.getter", "Inventory.label.didset", "static Inventory.make()", "Inventory.add(_:_:)",
            "Parser.run(_:)", "closure #1 in Parser.run(_:)", "closure #2 in Parser.run(_:)", "static Parser.kind()",
            "Parser.words.getter", "closure #1 in closure #1 in Parser.nested()", "Parser.deinit", "Secret.reveal()",
            "Int.doubled()", "Array.total()", "Box.map(_:)", "Box.get()", "pick(_:_:)", "largest(_:)",
            "fetch(retries:)", "load(_:)", "outer()", "inner #1 (_:) in outer()", "m() in Local #1 in outer()",
            "Square.area()", "protocol witness for Shape.area() in conformance Square", "static Vector.+ infix(_:_:)",
            "static Vector.< infix(_:_:)", "static App.main()",
        ] {
            #expect(names.contains(expected), "missing \(expected)")
        }
        // Nothing a person reads keeps a module prefix, a return type or a specialization wrapper.
        for name in names {
            #expect(!name.contains("app."), "\(name)")
            #expect(!name.contains("Swift."), "\(name)")
            #expect(!name.contains("specialization"), "\(name)")
            #expect(!name.hasPrefix("merged "), "\(name)")
        }
        // Modules: the app's code is `app`, the standard library's specializations are `Swift`.
        let item = try #require(
            mangled.first { Demangler.demangle($0) == "app.Inventory.item(at: Swift.Int) -> Swift.Int" })
        #expect(FunctionNames.swiftModule(of: Demangler.demangle(item)) == "app")
        let specializations = mangled.map(Demangler.demangle).filter {
            $0.hasPrefix("generic specialization <") && $0.contains(" of Swift.")
        }
        #expect(!specializations.isEmpty)
        for name in specializations { #expect(FunctionNames.swiftModule(of: name) == "Swift", "\(name)") }
        let witness = try #require(
            mangled.map(Demangler.demangle).first { $0.hasPrefix("protocol witness for app.Shape.area()") })
        #expect(FunctionNames.isWrapper(witness))
        #expect(FunctionNames.swiftModule(of: witness) == "app")
    }

    @Test func cppNamesAgreeWithCxxfiltWithoutParameters() throws {
        let folder = try TempFolder("names-cpp")
        let source = try folder.write("shop.cpp", Self.cppSource)
        var symbols: Set<String> = []
        for (name, flags) in [("shop-o0", ["-O0"]), ("shop-o2", ["-O2"])] {
            let binary = folder.file(name)
            try Command.check("g++", flags + ["-g", "-o", binary, source])
            symbols.formUnion(try functionSymbols(binary, prefixes: ["_Z"]))
        }
        let mangled = symbols.sorted()
        #expect(mangled.count > 100, "\(mangled.count) C++ function symbols")
        let reference = try batch("c++filt", ["-p"], mangled)
        try #require(reference.count == mangled.count)

        var mismatches: [String] = []
        var short: Set<String> = []
        for (index, symbol) in mangled.enumerated() {
            let full = Demangler.demangle(symbol)
            let ours = FunctionNames.simplified(full)
            var want = reference[index]
            while let clone = want.range(of: " [clone ", options: .backwards), want.hasSuffix("]") {
                want = String(want[..<clone.lowerBound])
            }
            if ours != want { mismatches.append("\(full)\n  ours: \(ours)\n  c++filt -p: \(want)") }
            if FunctionNames.simplified(ours) != ours { mismatches.append("not idempotent: \(ours)") }
            #expect(FunctionNames.language(of: full) == .cpp, "\(full)")
            short.insert(ours)
        }
        #expect(
            mismatches.isEmpty,
            "\(mismatches.count) of \(mangled.count) differ:\n\(mismatches.prefix(10).joined(separator: "\n"))")
        for expected in [
            "shop::payments::charge", "(anonymous namespace)::parse", "shop::payments::Ledger::operator()",
            "shop::payments::Ledger::total", "shop::payments::Ledger::operator<", "shop::payments::Ledger::operator<<",
            "shop::payments::Ledger::at", "shop::payments::Ledger::operator bool", "shop::payments::twice<int>",
            "shop::payments::twice<double>", "shop::payments::Box<double>::get", "run",
            "run(int)::{lambda(int)#1}::operator()", "run(int)::{lambda(int)#2}::operator()",
        ] {
            #expect(short.contains(expected), "missing \(expected)")
        }
    }
}
