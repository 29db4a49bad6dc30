import FaultlineCore
import Foundation
import Testing

/// What the user types becomes plain terms (never query syntax), and what a processed report puts in the index.
@Suite struct SearchTextTests {
    @Test func wordsBecomePhrasesOfTermsAndTheLastMayBeAPrefix() throws {
        let text = try SearchText.parse("  Inventory.item(at:)   Out-of-RANGE ")
        #expect(text.phrases == [["inventory", "item", "at"], ["out", "of", "range"]])
        #expect(text.prefixLast)
        #expect(try SearchText.parse("crash ab").prefixLast == false)
        #expect(try SearchText.parse("ünïcödé Straße").phrases == [["ünïcödé"], ["straße"]])
    }

    @Test func eventIDsInEitherFormAreOneTerm() throws {
        #expect(
            try SearchText.parse("7077E450-FA6F-4594-850B-FED9428D1D98").phrases == [
                ["7077e450fa6f4594850bfed9428d1d98"]
            ])
        #expect(
            try SearchText.parse("7077e450fa6f4594850bfed9428d1d98").phrases == [["7077e450fa6f4594850bfed9428d1d98"]])
    }

    @Test func syntaxIsText() throws {
        #expect(
            try SearchText.parse("\"a\" OR b* NEAR(c, 2) {user}: d ^e -f").phrases
                == [["a"], ["or"], ["b"], ["near", "c"], ["2"], ["user"], ["d"], ["e"], ["f"]])
        #expect(try SearchText.parse("\"\" * ** : () {}").isEmpty)
        #expect(try SearchText.parse("").isEmpty)
    }

    @Test func limitsAreChecked() throws {
        #expect(throws: SearchTextError.tooLong(257)) { try SearchText.parse(String(repeating: "x", count: 257)) }
        #expect(try SearchText.parse(String(repeating: "x", count: 256)).phrases.count == 1)
        let seventeen = (1...17).map { "w\($0)" }.joined(separator: " ")
        #expect(throws: SearchTextError.tooManyTerms(17)) { try SearchText.parse(seventeen) }
        // Pieces of one word count as terms.
        #expect(throws: SearchTextError.tooManyTerms(17)) {
            try SearchText.parse(Array(repeating: "a", count: 17).joined(separator: "."))
        }
    }

    @Test func aDocumentHoldsEveryIndexedFieldOnce() {
        var report = Report(
            eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .nonfatal,
            timestamp: Date(timeIntervalSince1970: 0))
        report.userID = "alice"
        report.installID = "install-1"
        report.environment = "production"
        report.app = AppInfo(version: "2.0", build: "5")
        report.error = ErrorInfo(type: "NSURLErrorDomain", code: "-1001", message: "timed out")
        report.crashMessage = "Fatal error: boom"
        report.customKeys = [
            (key: "plan", value: .string("gold")), (key: "retries", value: .number(3)),
            (key: "beta", value: .bool(true)),
        ]
        report.threads = [
            ThreadInfo(crashed: false, frames: [Frame(address: 0x10), Frame(function: "main")]),
            ThreadInfo(crashed: false, frames: [Frame(function: "main")]),
        ]
        let full = "shop.Inventory.item(at: Swift.Int) -> Swift.Int"
        let symbols = SymbolicatedReport(
            state: .partial,
            threads: [
                [
                    SymbolicatedFrameSlot(frames: [ResolvedFrame(function: full)], buildID: "aa", status: "dwarf"),
                    SymbolicatedFrameSlot(frames: [], buildID: nil, status: "client"),
                ]
            ],
            missing: [])
        let document = SearchDocument.make(report, symbols: symbols, grouping: nil)
        #expect(document.event == "7077e450fa6f4594850bfed9428d1d98")
        #expect(document.user == "alice\ninstall-1")
        #expect(document.release.contains("2.0") && document.release.contains("production"))
        #expect(document.error == "NSURLErrorDomain\n-1001\ntimed out\nFatal error: boom")
        #expect(document.keys == "plan gold\nretries 3\nbeta true")
        // The symbolicated name (full and short), and the client's own name where nothing was resolved; each once.
        #expect(
            document.functions.split(separator: "\n") == [
                Substring(full), Substring(FunctionNames.simplified(full)), "main",
            ])
    }

    /// A field is cut at `maxFieldBytes` bytes once folded (decomposed, nonspacing marks dropped), after its last
    /// whole character: never inside a character, whatever a character holds.
    @Test func aFieldIsCutAtItsFoldedByteLimit() {
        let limit = SearchDocument.maxFieldBytes
        var report = Report(
            eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .nonfatal,
            timestamp: Date(timeIntervalSince1970: 0))
        // A Hangul leading consonant (ᄀ) joins every one after it, and the syllable after them, into one character.
        let oneCharacter = String(repeating: "\u{1100}", count: limit) + "\u{AC01}"
        for (value, characters) in [
            (String(repeating: "a", count: limit - 2), limit),  // "k " and the value: exactly the limit
            (String(repeating: "a", count: limit * 2), limit),
            (String(repeating: "e\u{301}", count: limit), limit),  // the mark folds away: a byte a character
            (String(repeating: "\u{AC01}", count: limit), 2 + (limit - 2) / 9),  // 각: three jamo once folded
            (String(repeating: "👍🏽", count: limit / 2), 2 + (limit - 2) / 8),  // two scalars of four bytes
            (oneCharacter, 2),  // one character over the limit alone: left out
        ] {
            report.customKeys = [(key: "k", value: .string(value))]
            let keys = SearchDocument.make(report, symbols: nil, grouping: nil).keys
            #expect(keys.count == characters)
            #expect(("k " + value).hasPrefix(keys))
            #expect(keys.unicodeScalars.reduce(0) { $0 + SearchDocument.foldedBytes($1) } <= limit)
        }
    }

    /// `foldedBytes` is at least the UTF-8 bytes of every scalar once decomposed with nonspacing marks dropped (as
    /// PostgreSQL's entries are folded), and lowercasing that adds at most half again: six fields of `maxFieldBytes` stay
    /// far under PostgreSQL's 1 MiB for the lexemes of one entry. Fails, naming it, on a scalar a newer Unicode adds.
    @Test func foldedBytesBoundsTheFoldOfEveryScalar() {
        var under: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            switch scalar.properties.generalCategory {
            case .unassigned, .privateUse, .surrogate: continue
            default: break
            }
            var folded = String.UnicodeScalarView()
            for part in String(scalar).decomposedStringWithCanonicalMapping.unicodeScalars
            where part.properties.generalCategory != .nonspacingMark {
                folded.append(part)
            }
            let bound = SearchDocument.foldedBytes(scalar)
            let bytes = String(folded).utf8.count
            let lowercased = String(folded).lowercased().utf8.count
            if bytes > bound || 2 * lowercased > 3 * bound { under.append(String(value, radix: 16)) }
        }
        #expect(under.isEmpty, "foldedBytes is too small for U+\(under.prefix(20).joined(separator: ", U+"))")
        #expect(6 * SearchDocument.maxFieldBytes * 3 / 2 < 1_048_575)
    }
}
