import Synchronization

/// What grouping reads from a function's name alone: its label (the simplified name without clone suffixes) and
/// whether it is runtime code, a compiler-made wrapper or the standard libraries' code.
struct FunctionNameFacts: Sendable, Equatable {
    var label: String
    var isRuntime: Bool
    var isWrapper: Bool
    var isSystem: Bool

    /// The facts, derived from the name (`FunctionNames` reads it several times: tens of thousands of
    /// instructions for a typical name).
    init(deriving function: String) {
        label = FunctionNames.simplified(Grouping.withoutCloneSuffixes(function))
        isRuntime = Grouping.isRuntimeFrame(function)
        isWrapper = FunctionNames.isWrapper(function)
        isSystem = Grouping.isSystemFunction(function)
    }

    /// The facts of `function`, remembered process-wide: crash reports repeat the same functions (the app's
    /// crash sites, the runtime's and libraries' frames), so after the first report with a name, finding its
    /// facts is one hash of the name. Remembering changes no answer: the facts depend on the name only.
    static func of(_ function: String) -> FunctionNameFacts {
        guard function.utf8.count <= Memo.maxNameBytes else { return FunctionNameFacts(deriving: function) }
        let key = Memo.Key(name: function)
        if let known = Memo.shared.names.withLock({ $0[key] }) { return known }
        let facts = FunctionNameFacts(deriving: function)
        Memo.shared.names.withLock { names in
            // Bounded, as names come from clients: when full, everything is forgotten at once (the names that
            // matter come back at their next report).
            if names.count >= Memo.capacity { names.removeAll(keepingCapacity: true) }
            names[key] = facts
        }
        return facts
    }

    final class Memo: Sendable {
        /// A name compared and hashed by its UTF-8 bytes. Not by `String` equality: that holds for canonically
        /// equivalent names (`é` precomposed or as `e` and a combining accent), whose labels differ in bytes, and
        /// fingerprints hash the bytes: a name must never get the label of another one seen first.
        struct Key: Hashable, Sendable {
            let name: String
            static func == (a: Key, b: Key) -> Bool { a.name.utf8.elementsEqual(b.name.utf8) }
            func hash(into hasher: inout Hasher) {
                var name = name
                name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            }
        }
        /// Names longer than this are derived every time (rare, and they would take the memory of many).
        static let maxNameBytes = 1024
        /// How many names are remembered: ~1 MB at most with typical names.
        static let capacity = 8192
        static let shared = Memo()
        let names = Mutex<[Key: FunctionNameFacts]>([:])
    }
}
