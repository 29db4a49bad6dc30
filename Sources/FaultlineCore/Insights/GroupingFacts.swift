/// What fingerprint rules match on, for one report: made by `Grouping.group` from the report and its symbolicated
/// frames, and stored with the report (`reports.grouping_facts`) so that a dry run of other rules over a million
/// stored reports reads a few hundred bytes a report, not the payload and not libdw again.
///
/// Values are bounded and cleaned when made (`make`), so that the facts a filing matches on and the facts the dry run
/// reads back are the same: that is what makes the dry run's answer equal the applied one.
public struct GroupingFacts: Sendable, Equatable {
    public var kind: ReportKind
    /// How grouping computed the default components (never `.rule`).
    public var source: GroupingResult.Source
    /// The components grouping computed without rules (the client's when it sent a fingerprint).
    public var components: [String]
    /// The client sent a fingerprint: no rule applies.
    public var client: Bool
    public var errorType: String?
    public var errorValue: String?
    public var errorCode: String?
    /// The in-app functions of the crashing thread, innermost first, by simplified name (at most `maxFrames`).
    public var functions: [String]
    /// The file names of the crashing thread's modules, innermost first, each once (at most `maxFrames`).
    public var modules: [String]
    public var release: String?
    public var platform: String?
    /// Custom keys (string form) then breakdown values (`device`, `os`, `environment`, `build`), each key once.
    public var tags: [(key: String, value: String)]

    public static let maxFrames = 16
    public static let maxTags = 64
    /// Longest value kept: a matcher sees a value's first this many bytes.
    public static let maxValueBytes = 256

    public init(
        kind: ReportKind, source: GroupingResult.Source, components: [String], client: Bool = false,
        errorType: String? = nil, errorValue: String? = nil, errorCode: String? = nil, functions: [String] = [],
        modules: [String] = [], release: String? = nil, platform: String? = nil,
        tags: [(key: String, value: String)] = []
    ) {
        self.kind = kind
        self.source = source
        self.components = components.map(Self.clean)
        self.client = client
        self.errorType = errorType.map(Self.clean)
        self.errorValue = errorValue.map(Self.clean)
        self.errorCode = errorCode.map(Self.clean)
        self.functions = functions.prefix(Self.maxFrames).map(Self.clean)
        self.modules = modules.prefix(Self.maxFrames).map(Self.clean)
        self.release = release.map(Self.clean)
        self.platform = platform.map(Self.clean)
        self.tags = tags.prefix(Self.maxTags).map { (Self.clean($0.key), Self.clean($0.value)) }
    }

    public static func == (lhs: GroupingFacts, rhs: GroupingFacts) -> Bool {
        lhs.kind == rhs.kind && lhs.source == rhs.source && lhs.components == rhs.components
            && lhs.client == rhs.client && lhs.errorType == rhs.errorType && lhs.errorValue == rhs.errorValue
            && lhs.errorCode == rhs.errorCode && lhs.functions == rhs.functions && lhs.modules == rhs.modules
            && lhs.release == rhs.release && lhs.platform == rhs.platform
            && lhs.tags.map(\.key) == rhs.tags.map(\.key) && lhs.tags.map(\.value) == rhs.tags.map(\.value)
    }

    /// The fingerprint grouping gives these facts under `rules`: a matching rule's components (source `.rule`), else
    /// the default components.
    public func grouped(by rules: FingerprintRules) -> (
        fingerprint: Fingerprint, source: GroupingResult.Source,
        components: [String]
    ) {
        if let match = rules.match(self) {
            return (
                Grouping.fingerprint(kind: kind, source: .rule, components: match.components), .rule,
                match.components
            )
        }
        return (Grouping.fingerprint(kind: kind, source: source, components: components), source, components)
    }

    /// A value cut to `maxValueBytes` (at a character boundary), without the separators of the stored form or
    /// newlines (a fingerprint component is one line).
    static func clean(_ value: String) -> String {
        var out = ""
        var bytes = 0
        for scalar in value.unicodeScalars {
            let length = String(scalar).utf8.count
            guard bytes + length <= maxValueBytes else { break }
            bytes += length
            switch scalar.value {
            case 0x1C...0x1F, 0x0A, 0x0D: out.unicodeScalars.append(" ")
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: - Stored form

    /// The stored form: fields separated by U+001F, list items by U+001E, a tag's key and value by U+001D; a missing
    /// value is U+001C. Versioned by its first field (`f1`); `decode` answers nil for anything else.
    public var encoded: String {
        let fields: [String] = [
            "f1", kind.rawValue, source.rawValue, client ? "1" : "0", Self.list(components),
            Self.optional(errorType), Self.optional(errorValue), Self.optional(errorCode),
            Self.list(functions), Self.list(modules), Self.optional(release), Self.optional(platform),
            Self.list(tags.map { $0.key + "\u{1D}" + $0.value }),
        ]
        return fields.joined(separator: "\u{1F}")
    }

    static func optional(_ value: String?) -> String { value ?? "\u{1C}" }

    /// Each item after a U+001E, so that no items and one empty item differ.
    static func list(_ items: [String]) -> String { items.map { "\u{1E}" + $0 }.joined() }

    /// The facts of a stored form, or nil when it is not one (another version, or damaged).
    public static func decode(_ text: String) -> GroupingFacts? {
        let fields = text.split(separator: "\u{1F}", omittingEmptySubsequences: false)
        guard fields.count == 13, fields[0] == "f1", let kind = ReportKind(rawValue: String(fields[1])),
            let source = GroupingResult.Source(rawValue: String(fields[2]))
        else { return nil }
        func list(_ field: Substring) -> [String] {
            field.isEmpty
                ? [] : field.dropFirst().split(separator: "\u{1E}", omittingEmptySubsequences: false).map(String.init)
        }
        func optional(_ field: Substring) -> String? { field == "\u{1C}" ? nil : String(field) }
        let tags = list(fields[12]).compactMap { item -> (key: String, value: String)? in
            guard let cut = item.firstIndex(of: "\u{1D}") else { return nil }
            return (String(item[..<cut]), String(item[item.index(after: cut)...]))
        }
        var facts = GroupingFacts(kind: kind, source: source, components: [])
        // Set directly: the stored values were cleaned when made.
        facts.client = fields[3] == "1"
        facts.components = list(fields[4])
        facts.errorType = optional(fields[5])
        facts.errorValue = optional(fields[6])
        facts.errorCode = optional(fields[7])
        facts.functions = list(fields[8])
        facts.modules = list(fields[9])
        facts.release = optional(fields[10])
        facts.platform = optional(fields[11])
        facts.tags = tags
        return facts
    }
}
