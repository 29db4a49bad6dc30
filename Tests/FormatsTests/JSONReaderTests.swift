import FaultlineCore
import Foundation
import Testing

@testable import Formats

@Suite struct JSONReaderTests {
    /// Runs `body` with a reader over `text` (the reader may not outlive the call).
    func read<T>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> T {
        let bytes = Array(text.utf8)
        return try JSONReader.with(bytes, range: 0..<bytes.count, body)
    }

    @Test(arguments: [
        (#""plain""#, "plain"),
        (#""tab\tquote\"slash\/back\\""#, "tab\tquote\"slash/back\\"),
        (#""\u00e9\u4e2d""#, "é中"),
        (#""\ud83d\ude00 smile""#, "😀 smile"),
        (#""unicode é 中""#, "unicode é 中"),
    ])
    func decodesStrings(_ json: String, _ expected: String) throws {
        let value = try read(json) { r in
            let value = try r.readString()
            try r.expectEnd()
            return value
        }
        #expect(value == expected)
    }

    @Test func decodesStringsLikeFoundation() throws {
        // Every escape Foundation writes must read back identically.
        let samples = [
            "a\u{0001}b", "line\nbreak", "\u{2028}\u{2029}", "quote\"", "emoji 👩‍👩‍👧", String(repeating: "x\\", count: 50),
        ]
        for sample in samples {
            let json = String(decoding: try JSONEncoder().encode([sample]), as: UTF8.self)
            let out = try read(json) { r in
                var out: [String] = []
                try r.readArray { r, _ in out.append(try r.readString()) }
                return out
            }
            #expect(out == [sample])
        }
    }

    /// U+0000 is the one character read differently from Foundation: it becomes U+FFFD, in values and in keys, so that
    /// no stored text holds it (PostgreSQL's text columns refuse it; docs/protocol.md §2.6).
    @Test func theNullCharacterBecomesTheReplacementCharacter() throws {
        let value = try read(#"["a\u0000b", "\u0000"]"#) { r in
            var out: [String] = []
            try r.readArray { r, _ in out.append(try r.readString()) }
            return out
        }
        #expect(value == ["a\u{FFFD}b", "\u{FFFD}"])
        let body = Array(
            #"""
            {"event_id": "0123456789abcdef0123456789abcdef", "kind": "nonfatal", "timestamp": "2026-11-24T06:00:00Z",
             "error": {"type": "boom\u0000", "message": "cut\u0000here"}, "custom_keys": {"k\u0000": "v\u0000"}}
            """#.utf8)
        let report = try NativeReportParser.parse(body, range: 0..<body.count)
        #expect(report.error?.type == "boom\u{FFFD}")
        #expect(report.error?.message == "cut\u{FFFD}here")
        #expect(report.customKeys.first?.key == "k\u{FFFD}")
        #expect(report.customKeys.first.map { "\($0.value)" }?.contains("\u{0}") == false)
    }

    @Test(arguments: ["\"raw\ncontrol\"", #""bad \q escape""#, #""\u12G4""#, #""unterminated"#])
    func rejectsBrokenStrings(_ json: String) {
        #expect(throws: FormatError.self) { try read(json) { try $0.readString() } }
    }

    @Test func numbers() throws {
        let out = try read("[0, -12, 3.5, 1e3, -2.5E-2, 123456789012345678901]") { r in
            var out: [Double] = []
            try r.readArray { r, _ in out.append(try r.readDouble()) }
            return out
        }
        #expect(out == [0, -12, 3.5, 1000, -0.025, 123_456_789_012_345_678_901])
        var got: [Int] = []
        #expect(throws: FormatError.self) {
            try read("[7, -7, 1.5]") { r in try r.readArray { r, _ in got.append(try r.readInt()) } }
        }
        #expect(got == [7, -7])
        for bad in ["01", "-", "1.", ".5", "1e", "+1"] {
            #expect(throws: FormatError.self, "\(bad)") { try read("[\(bad)]") { try $0.skipValue() } }
        }
    }

    @Test func skipsAnyWellFormedValueAndRefusesDeepNesting() throws {
        try read(#"{"a": [1, {"b": null, "c": [true, false, "x\"y"]}], "d": {}}"#) { r in
            try r.skipValue()
            try r.expectEnd()
        }
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: FormatError.self) { try read(deep) { try $0.skipValue() } }
        for bad in [#"{"a" 1}"#, #"{"a":1,}"#, "[1 2]", #"{a:1}"#, "[nul]"] {
            #expect(throws: FormatError.self, "\(bad)") { try read(bad) { try $0.skipValue() } }
        }
    }

    @Test func keysMatchWithAndWithoutEscapes() throws {
        let matched = try read(#"{"event_id": 1, "ev\u0065nt_id": 2, "other": 3}"#) { r in
            var matched: [Int] = []
            try r.readObject { r, key in
                let value = try r.readInt()
                if key.matches("event_id") { matched.append(value) }
            }
            return matched
        }
        #expect(matched == [1, 2])
    }

    @Test func unknownFieldsAndNullsAreIgnoredInReports() throws {
        let body =
            #"{"event_id":"7077e450fa6f4594850bfed9428d1d98","kind":"crash","timestamp":1,"future_field":{"x":[1,2]},"user_id":null,"app":null,"threads":[{"name":null,"frames":[{"address":16,"extra":true}]}]}"#
        let report = try NativeReports.decode(Array(body.utf8), limits: IngestLimits()).items[0].get().report
        #expect(report.userID == nil)
        #expect(report.threads[0].frames[0].address == 16)
    }
}
