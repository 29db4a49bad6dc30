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
        #expect(try SearchText.parse("7077E450-FA6F-4594-850B-FED9428D1D98").phrases == [["7077e450fa6f4594850bfed9428d1d98"]])
        #expect(try SearchText.parse("7077e450fa6f4594850bfed9428d1d98").phrases == [["7077e450fa6f4594850bfed9428d1d98"]])
    }

    @Test func syntaxIsText() throws {
        #expect(try SearchText.parse("\"a\" OR b* NEAR(c, 2) {user}: d ^e -f").phrases
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
        #expect(throws: SearchTextError.tooManyTerms(17)) { try SearchText.parse(Array(repeating: "a", count: 17).joined(separator: ".")) }
    }

    @Test func aDocumentHoldsEveryIndexedFieldOnce() {
        var report = Report(eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .nonfatal, timestamp: Date(timeIntervalSince1970: 0))
        report.userID = "alice"
        report.installID = "install-1"
        report.environment = "production"
        report.app = AppInfo(version: "2.0", build: "5")
        report.error = ErrorInfo(type: "NSURLErrorDomain", code: "-1001", message: "timed out")
        report.crashMessage = "Fatal error: boom"
        report.customKeys = [(key: "plan", value: .string("gold")), (key: "retries", value: .number(3)), (key: "beta", value: .bool(true))]
        report.threads = [
            ThreadInfo(crashed: false, frames: [Frame(address: 0x10), Frame(function: "main")]),
            ThreadInfo(crashed: false, frames: [Frame(function: "main")]),
        ]
        let full = "shop.Inventory.item(at: Swift.Int) -> Swift.Int"
        let symbols = SymbolicatedReport(
            state: .partial,
            threads: [[SymbolicatedFrameSlot(frames: [ResolvedFrame(function: full)], buildID: "aa", status: "dwarf"),
                       SymbolicatedFrameSlot(frames: [], buildID: nil, status: "client")]],
            missing: [])
        let document = SearchDocument.make(report, symbols: symbols, grouping: nil)
        #expect(document.event == "7077e450fa6f4594850bfed9428d1d98")
        #expect(document.user == "alice\ninstall-1")
        #expect(document.release.contains("2.0") && document.release.contains("production"))
        #expect(document.error == "NSURLErrorDomain\n-1001\ntimed out\nFatal error: boom")
        #expect(document.keys == "plan gold\nretries 3\nbeta true")
        // The symbolicated name (full and short), and the client's own name where nothing was resolved; each once.
        #expect(document.functions.split(separator: "\n") == [Substring(full), Substring(FunctionNames.simplified(full)), "main"])
    }

    /// A field is cut at `maxFieldCharacters` characters, not bytes: multi-byte text under that many characters
    /// stays whole, longer text is cut to exactly that many characters, never inside a character.
    @Test func aFieldIsCutAtItsCharacterLimit() {
        let limit = SearchDocument.maxFieldCharacters
        var report = Report(eventID: EventID("7077e450fa6f4594850bfed9428d1d98")!, kind: .nonfatal, timestamp: Date(timeIntervalSince1970: 0))
        for (value, expected) in [
            (String(repeating: "a", count: limit - 2), limit),  // "k " and the value: exactly the limit
            (String(repeating: "a", count: limit * 2), limit),
            (String(repeating: "é", count: limit - 2), limit),  // twice the limit in bytes, not cut
            (String(repeating: "e\u{301}", count: limit), limit),  // a character of two scalars
            (String(repeating: "👍🏽", count: limit / 2), limit / 2 + 2),  // eight bytes a character: whole
        ] {
            report.customKeys = [(key: "k", value: .string(value))]
            let keys = SearchDocument.make(report, symbols: nil, grouping: nil).keys
            #expect(keys.count == expected)
            #expect(("k " + value).hasPrefix(keys))
        }
    }
}
