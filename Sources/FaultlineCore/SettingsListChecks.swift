/// The checks of a project's list settings (in-app patterns, privacy key names), shared by `faultline projects
/// configure` and the dashboard's settings page so that both accept the same lists.
extension InAppRules {
    /// What is wrong with `patterns` as one list (include or exclude), or nil: at most ``maxPatterns``, each
    /// 1–``maxPatternLength`` bytes.
    public static func problem(_ patterns: [String]) -> String? {
        if patterns.contains(where: { $0.isEmpty || $0.utf8.count > maxPatternLength }) {
            return "an in-app pattern must be 1–\(maxPatternLength) bytes"
        }
        if patterns.count > maxPatterns { return "at most \(maxPatterns) patterns per list" }
        return nil
    }
}

extension PrivacySettings {
    /// Longest key name a list of safe or sensitive fields takes, in bytes.
    public static let maxFieldBytes = 256

    /// What is wrong with `fields` as a list of safe or sensitive key names, or nil: each 1–``maxFieldBytes`` bytes.
    public static func fieldProblem(_ fields: [String]) -> String? {
        fields.contains { $0.isEmpty || $0.utf8.count > maxFieldBytes }
            ? "a field name must be 1–\(maxFieldBytes) bytes" : nil
    }
}
