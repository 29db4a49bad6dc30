extension GroupingResult {
    /// The error code an issue's events share (`-1001` of `NSURLErrorDomain`), for the lists and the header:
    /// the `code:` component of a grouping by the error's type and code (``Source/error``); nil for any other source
    /// (a stack, a client's fingerprint or a rule does not make every event of the issue share one code) or an empty
    /// code.
    public var errorCode: String? {
        guard source == .error else { return nil }
        for component in components where component.hasPrefix(Self.codePrefix) {
            let code = component.dropFirst(Self.codePrefix.count)
            return code.isEmpty ? nil : String(code)
        }
        return nil
    }

    /// What the code's component starts with (`Grouping`: `type:…`, `code:…`, then the top frames).
    static let codePrefix = "code:"
}
