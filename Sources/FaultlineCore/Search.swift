#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the search index holds for one report: the text a developer looks for, by field.
///
/// Made in the processing step (symbolication and grouping), where function names are known, and stored in the
/// same transaction as the result; re-processing replaces it. Pure: built from the report, its symbolication
/// result and its grouping, nothing else.
public struct SearchDocument: Sendable, Equatable {
    /// The event id (32 lowercase hex digits).
    public var event: String
    /// The user id and the install id.
    public var user: String
    /// The release, its build (`ReleaseName`), and the environment.
    public var release: String
    /// Error type, code and message (exception, non-fatal domain/code/message, crash message), the issue title and
    /// culprit the grouping gave.
    public var error: String
    /// Function names of every frame, short (`Inventory.item(at:)`) and full when they differ, each once.
    public var functions: String
    /// Custom keys, one `name value` per line.
    public var keys: String

    /// Most function names indexed per report (each distinct name once; a 64-thread report repeats most).
    public static let maxFunctions = 400
    /// Most UTF-8 bytes of one field once folded for the index (``foldedBytes(_:)``), so that no report makes a huge
    /// index entry. Six fields of at most this many bytes, lowercased (at most 1.5× the bytes), are 288 KiB: well under
    /// PostgreSQL's 1 MiB for the lexemes of one `tsvector`, which refuses a larger entry (SQLSTATE 54000) and with it
    /// the report's whole result. Counted in bytes after folding, not in characters: one character can be any number of
    /// scalars (a Hangul leading consonant joins every one after it), and folding makes a Hangul syllable of three bytes
    /// nine (three jamo).
    public static let maxFieldBytes = 32 * 1024

    public init(event: String, user: String, release: String, error: String, functions: String, keys: String) {
        self.event = event
        self.user = user
        self.release = release
        self.error = error
        self.functions = functions
        self.keys = keys
    }

    /// The document of `report` as processed: its frames' names from `symbols` (or the report's own when it
    /// came symbolicated), its title from `grouping`.
    public static func make(_ report: Report, symbols: SymbolicatedReport?, grouping: GroupingResult?) -> SearchDocument
    {
        var names: [String] = []
        var seen = Set<String>()
        func add(_ name: String?) {
            guard let name, !name.isEmpty, names.count < maxFunctions, seen.insert(name).inserted else { return }
            names.append(name)
            let short = FunctionNames.simplified(name)
            if short != name, names.count < maxFunctions, seen.insert(short).inserted { names.append(short) }
        }
        for (index, thread) in report.threads.enumerated() {
            let resolved = symbols.flatMap { index < $0.threads.count ? $0.threads[index] : nil }
            for (frameIndex, frame) in thread.frames.enumerated() {
                let slot = resolved.flatMap { frameIndex < $0.count ? $0[frameIndex] : nil }
                if let slot, !slot.frames.isEmpty {
                    for entry in slot.frames { add(entry.function) }
                } else {
                    add(frame.function)
                }
            }
        }
        for entry in symbols?.messageSite?.frames ?? [] { add(entry.function) }

        var errorParts: [String] = []
        if let error = report.error {
            errorParts += [error.type, error.code, error.message].compactMap { $0 }
        }
        if let message = report.crashMessage { errorParts.append(message) }
        if let grouping {
            errorParts.append(grouping.title)
            if let culprit = grouping.culprit { errorParts.append(culprit) }
        }
        let tags = report.tags.map { "\($0.key) \($0.value)" } + (report.sdk.map { ["sdk \($0.label)"] } ?? [])
        let keys = report.customKeys.map { key, value -> String in
            switch value {
            case .string(let text): return "\(key) \(text)"
            case .number(let number):
                // Whole numbers as typed (`3`, not `3.0`).
                if number.rounded() == number, abs(number) < 1e15 { return "\(key) \(Int(number))" }
                return "\(key) \(number)"
            case .bool(let flag): return "\(key) \(flag)"
            }
        }
        func field(_ parts: [String]) -> String {
            bounded(parts.filter { !$0.isEmpty }.joined(separator: "\n"))
        }
        return SearchDocument(
            event: report.eventID.rawValue,
            user: field([report.userID, report.installID].compactMap { $0 }),
            release: field([report.app.release, report.app.releaseBuild, report.environment].compactMap { $0 }),
            error: field(errorParts),
            functions: field(names),
            keys: field(tags + keys))
    }
}

extension SearchDocument {
    /// `text` cut after its last whole character that keeps it within ``maxFieldBytes`` bytes once folded (a first
    /// character larger than that alone leaves nothing).
    public static func bounded(_ text: String) -> String {
        // Folding makes a scalar at most three times its UTF-8 bytes: a shorter text fits, whatever it holds.
        guard text.utf8.count > maxFieldBytes / 3 else { return text }
        var total = 0
        for scalar in text.unicodeScalars { total += foldedBytes(scalar) }
        guard total > maxFieldBytes else { return text }
        // Over the limit: character by character (grapheme breaking, the field's whole cost), for these texts only.
        var used = 0
        var end = text.startIndex
        while end < text.endIndex {
            let next = text.index(after: end)
            var cost = 0
            for scalar in text.unicodeScalars[end..<next] { cost += foldedBytes(scalar) }
            guard cost <= maxFieldBytes - used else { break }
            used += cost
            end = next
        }
        return String(text[..<end])
    }

    /// At least the UTF-8 bytes `scalar` takes once folded for the index: canonically decomposed, nonspacing marks
    /// dropped (as PostgreSQL's entries are made, and as SQLite's `unicode61` removes diacritics).
    ///
    /// An upper bound made without decomposition tables (FoundationEssentials has none): a nonspacing mark is dropped
    /// (it decomposes into nonspacing marks only); a Hangul syllable is two or three jamo of three bytes; the few
    /// scalars that decompose into more bytes than their own (Indic two-part vowel signs, Balinese letters, musical
    /// notes, CJK compatibility ideographs whose unified form lies in a supplementary plane) count three times their
    /// bytes, the most any canonical decomposition grows UTF-8; every other scalar folds to at most its own bytes.
    /// `SearchTextTests` checks the bound against Foundation's decomposition of every assigned scalar.
    public static func foldedBytes(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x80 { return 1 }
        if scalar.properties.generalCategory == .nonspacingMark { return 0 }
        if (0xAC00...0xD7A3).contains(value) {
            // 28 trailing consonants per vowel; index 0 is none (two jamo), the others are a third.
            return (value - 0xAC00) % 28 == 0 ? 6 : 9
        }
        let bytes = scalar.utf8.count
        return growsWhenDecomposed(value) ? 3 * bytes : bytes
    }

    /// The scalars (outside Hangul syllables, not nonspacing marks) whose canonical decomposition, nonspacing marks
    /// dropped, has more UTF-8 bytes than they do (as this toolchain's Foundation decomposes; `SearchTextTests` names
    /// any a newer Unicode adds).
    static func growsWhenDecomposed(_ value: UInt32) -> Bool {
        switch value {
        case 0x09CB...0x09CC, 0x0B4B...0x0B4C, 0x0B94, 0x0BCA...0x0BCC, 0x0CCB, 0x0D4A...0x0D4C, 0x0DDC...0x0DDE,
            0x1B06...0x1B12, 0x1B40...0x1B41, 0xFA6C, 0xFACF...0xFAD7,
            0x1134B...0x1134C, 0x114BC...0x114BE, 0x115BA...0x115BB, 0x11938, 0x1D15E...0x1D164, 0x1D1BB...0x1D1C0:
            true
        default:
            false
        }
    }
}

/// Why a search text was refused.
public enum SearchTextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Longer than ``SearchText/maxCharacters``.
    case tooLong(Int)
    /// More words than ``SearchText/maxTerms``.
    case tooManyTerms(Int)

    public var description: String {
        switch self {
        case .tooLong(let count):
            "the search text has \(count) characters; at most \(SearchText.maxCharacters) are searched"
        case .tooManyTerms(let count):
            "the search text has \(count) words; at most \(SearchText.maxTerms) are searched"
        }
    }
}

/// A search as the user typed it, reduced to plain terms: never passed on as query syntax.
///
/// The text is split at white space into words; a word that is an event id (plain or hyphenated UUID) becomes its
/// 32-digit form; any other word is split at every character that is not a letter, digit or mark
/// (`Crasher.crash(at:)` → `crasher crash at`), and its pieces must appear next to each other, in order. Every word
/// must match (AND). The last piece of the last word also matches longer words (`Inven` finds `Inventory`) when
/// it has at least ``minPrefixCharacters``. Quotes, `*`, `:`, `NEAR`, `AND`/`OR`/`NOT` and parentheses are plain
/// text to it, so nothing the user types changes the meaning of the query.
public struct SearchText: Sendable, Equatable {
    /// Most characters searched.
    public static let maxCharacters = 256
    /// Most terms (pieces of words) searched.
    public static let maxTerms = 16
    /// The shortest last term that is matched as a prefix (shorter prefixes match too much to be useful).
    public static let minPrefixCharacters = 3

    /// One phrase per word: its terms, lowercase, in order.
    public var phrases: [[String]]
    /// Whether the last term of the last phrase matches as a prefix.
    public var prefixLast: Bool

    /// True when there is nothing to search (empty, or only punctuation).
    public var isEmpty: Bool { phrases.isEmpty }

    public init(phrases: [[String]], prefixLast: Bool) {
        self.phrases = phrases
        self.prefixLast = prefixLast
    }

    /// Parses what the user typed.
    ///
    /// - Throws: ``SearchTextError`` when the text is longer than ``maxCharacters`` or has more than ``maxTerms``
    ///   terms.
    public static func parse(_ raw: String) throws(SearchTextError) -> SearchText {
        let count = raw.unicodeScalars.count
        guard count <= maxCharacters else { throw .tooLong(count) }
        var phrases: [[String]] = []
        var terms = 0
        for word in raw.split(whereSeparator: { $0.isWhitespace }) {
            let text = String(word)
            let phrase: [String]
            if let event = EventID(text) {
                phrase = [event.rawValue]
            } else {
                phrase = pieces(of: text)
            }
            guard !phrase.isEmpty else { continue }
            terms += phrase.count
            phrases.append(phrase)
        }
        guard terms <= maxTerms else { throw .tooManyTerms(terms) }
        let last = phrases.last?.last ?? ""
        return SearchText(phrases: phrases, prefixLast: last.count >= minPrefixCharacters)
    }

    /// The runs of letters, digits and marks of `word`, lowercased.
    public static func pieces(of word: String) -> [String] {
        var result: [String] = []
        var current = String.UnicodeScalarView()
        for scalar in word.unicodeScalars {
            if isTermScalar(scalar) {
                current.append(scalar)
            } else if !current.isEmpty {
                result.append(String(current).lowercased())
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { result.append(String(current).lowercased()) }
        return result
    }

    /// Letters, numbers, marks and private-use characters: what SQLite's `unicode61` tokenizer keeps in a token.
    public static func isTermScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark, .privateUse:
            return true
        default:
            return false
        }
    }
}

/// One page of search results.
public struct SearchResults: Sendable, Equatable {
    /// Matching reports of this page, newest first.
    public var reports: [ReportSummary]
    /// How many reports match, counted up to ``SearchResults/countLimit``.
    public var reportCount: Int
    /// True when more than `reportCount` reports match (counting stopped there).
    public var reportCountIsLowerBound: Bool
    /// The issues of the newest matching reports (up to ``SearchResults/countLimit`` of them), most recently
    /// seen first.
    public var issues: [IssueSummary]
    /// True when the issues were taken from the newest `countLimit` matching reports only.
    public var issuesFromNewestOnly: Bool

    /// Most matching reports counted (and looked at for their issues): beyond it the page says "more than".
    public static let countLimit = 1000

    public init(
        reports: [ReportSummary], reportCount: Int, reportCountIsLowerBound: Bool, issues: [IssueSummary],
        issuesFromNewestOnly: Bool
    ) {
        self.reports = reports
        self.reportCount = reportCount
        self.reportCountIsLowerBound = reportCountIsLowerBound
        self.issues = issues
        self.issuesFromNewestOnly = issuesFromNewestOnly
    }
}

/// Searches a project's reports and issues in the full-text index.
public protocol SearchReader: Sendable {
    /// The reports of `project` matching `text` (page `page`, 1-based, of `pageSize`, newest first), how many match,
    /// and their issues. Never returns another project's data. An empty `text` matches nothing.
    func search(_ text: SearchText, project: ProjectID, page: Int, pageSize: Int, now: Date) async throws
        -> SearchResults
}
