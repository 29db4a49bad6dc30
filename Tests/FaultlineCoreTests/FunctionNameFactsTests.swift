import Testing

@testable import FaultlineCore

/// Grouping remembers what it derives from each function name (`FunctionNameFacts.of`) across reports. What it
/// remembers must be what it would derive, for every name, however many names there are, also when names share a
/// long prefix or differ only in bytes a careless key would drop.
@Suite struct FunctionNameFactsTests {
    static let names: [String] = [
        "main", "app.Inventory.item(at: Swift.Int) -> Swift.Int",
        "closure #1 in _assertionFailure(_:_:file:line:flags:)",
        "Swift runtime failure: Index out of range",
        "Swift._assertionFailure(_: Swift.StaticString, _: Swift.String, file: Swift.StaticString, line: Swift.UInt, flags: Swift.UInt32) -> Swift.Never",
        "reabstraction thunk helper from @escaping @callee_guaranteed () -> () to @escaping @callee_guaranteed () -> (@out ())",
        "protocol witness for Swift.Sequence.makeIterator() -> A.Iterator in conformance app.Bag : Swift.Sequence in app",
        "std::vector<int, std::allocator<int> >::push_back(int const&)", "compute.constprop.0.isra.0", "compute.cold",
        "compute", "__libc_start_call_main", "start_thread", "abort", "raise", "__cxa_throw",
        "Swift.Array.subscript.getter : (Swift.Int) -> A",
        "é.日本語()", "", "a\u{0}b", "a\u{0}c", "Inventory.item(at:)", "Inventory.item(at:) ",
        // Canonically equivalent (equal as Swift strings), different bytes: each keeps its own label's bytes.
        "caf\u{E9}.compute.cold", "cafe\u{301}.compute.cold",
        String(repeating: "x", count: FunctionNameFacts.Memo.maxNameBytes) + ".cold",
        String(repeating: "x", count: FunctionNameFacts.Memo.maxNameBytes - 1) + "y",
        String(repeating: "x", count: FunctionNameFacts.Memo.maxNameBytes - 1) + "z",
    ]

    @Test func rememberedFactsAreTheDerivedOnes() {
        for _ in 0..<3 {
            for name in Self.names {
                let remembered = FunctionNameFacts.of(name)
                let derived = FunctionNameFacts(deriving: name)
                #expect(remembered == derived, "\(name.prefix(80))")
                // Labels are hashed by their bytes into fingerprints: equal as strings is not enough.
                #expect(Array(remembered.label.utf8) == Array(derived.label.utf8), "\(name.prefix(80))")
            }
        }
        // The facts differ between names, so a memo answering one name with another's would be seen.
        #expect(Set(Self.names.map { FunctionNameFacts.of($0).label }).count > Self.names.count / 2)
        #expect(FunctionNameFacts.of("abort").isRuntime && !FunctionNameFacts.of("compute").isRuntime)
        #expect(FunctionNameFacts.of("compute.constprop.0.isra.0").label == "compute")
    }

    /// More names than the memo holds: it forgets, stays within its bound, and every answer is still derived right.
    @Test func moreNamesThanTheMemoHoldsAreStillAnsweredRight() {
        let count = FunctionNameFacts.Memo.capacity * 2 + 17
        for index in 0..<count {
            let name = index % 3 == 0 ? "app.Type\(index).run(Swift.Int) -> ()" : "fn\(index).cold"
            let facts = FunctionNameFacts.of(name)
            if index % 997 == 0 || index == count - 1 {
                #expect(facts == FunctionNameFacts(deriving: name))
            }
            #expect(facts.label == (index % 3 == 0 ? "Type\(index).run(_:)" : "fn\(index)"))
        }
        #expect(FunctionNameFacts.Memo.shared.names.withLock { $0.count } <= FunctionNameFacts.Memo.capacity)
        for name in Self.names { #expect(FunctionNameFacts.of(name) == FunctionNameFacts(deriving: name)) }
    }
}
