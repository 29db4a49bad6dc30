// Placeholder until the names branch lands (it replaces this file).
public enum FunctionNames {
    public static func simplified(_ demangled: String) -> String {
        var name = Grouping.normalizeFunction(demangled)
        if let arrow = name.firstRange(of: " -> ") { name = String(name[..<arrow.lowerBound]) }
        if let dot = name.firstIndex(of: "."), !name.contains("::") { name = String(name[name.index(after: dot)...]) }
        return name
    }
    public static func swiftModule(of demangled: String) -> String? {
        let name = Grouping.normalizeFunction(demangled)
        guard !name.contains("::"), let dot = name.firstIndex(of: ".") else { return nil }
        return String(name[..<dot])
    }
    public static func isWrapper(_ demangled: String) -> Bool {
        demangled.hasPrefix("protocol witness for ") || demangled.hasPrefix("reabstraction thunk") || demangled.hasPrefix("thunk for ")
            || demangled.hasPrefix("partial apply for ") || demangled.hasPrefix("outlined ") || demangled.hasPrefix("dispatch thunk of ")
    }
}
