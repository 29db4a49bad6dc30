import Formats
import Testing

@Suite struct JSONBatchSplitterTests {
    func split(_ text: String, key: String = "reports") throws -> (JSONBatchSplitter.Shape, [UInt8]) {
        let bytes = Array(text.utf8)
        return (try JSONBatchSplitter.split(bytes, batchKey: key), bytes)
    }

    func texts(_ shape: JSONBatchSplitter.Shape, _ bytes: [UInt8]) -> [String] {
        switch shape {
        case .single(let r): return [String(decoding: bytes[r], as: UTF8.self)]
        case .batch(let rs): return rs.map { String(decoding: bytes[$0], as: UTF8.self) }
        }
    }

    @Test func aSingleObjectIsOneReportSpanningTheObject() throws {
        let (shape, bytes) = try split("  {\"event_id\": \"a\", \"x\": [1, {\"y\": \"}\"}]}\n")
        guard case .single = shape else { Issue.record("expected single"); return }
        #expect(texts(shape, bytes) == ["{\"event_id\": \"a\", \"x\": [1, {\"y\": \"}\"}]}"])
    }

    @Test func aBatchObjectYieldsEachElement() throws {
        let (shape, bytes) = try split(#"{"sdk": {"v": "[{"}, "reports": [ {"a": "\"]"} , {"b": [1,2]} ] }"#)
        guard case .batch = shape else { Issue.record("expected batch"); return }
        #expect(texts(shape, bytes) == [#"{"a": "\"]"}"#, #"{"b": [1,2]}"#])
    }

    @Test func aBareArrayIsABatch() throws {
        let (shape, bytes) = try split(#"[{"a":1},{"b":2}]"#)
        #expect(texts(shape, bytes) == [#"{"a":1}"#, #"{"b":2}"#])
    }

    @Test func scalarsAreChecked() throws {
        let (shape, bytes) = try split(#"{"n": -1.5e+3, "t": true, "f": false, "z": null, "reports": [{}]}"#)
        #expect(texts(shape, bytes) == ["{}"])
    }

    @Test func theBatchKeyIsConfigurable() throws {
        let (shape, bytes) = try split(#"{"sessions":[{"s":1}]}"#, key: "sessions")
        guard case .batch = shape else { Issue.record("expected batch"); return }
        #expect(texts(shape, bytes) == [#"{"s":1}"#])
    }

    @Test(arguments: [
        "", "   ", "{\"a\": \"unterminated}", "[{\"a\":1}", "{\"a\":1} trailing", "\"just a string\"",
        "{\"reports\": [1,]}", "{\"reports\": [{}], \"x\": tru}", "[1.]", "[-]", "[01x]",
    ])
    func brokenStructureIsMalformedJSON(_ text: String) {
        #expect(throws: FormatError.self) { try JSONBatchSplitter.split(Array(text.utf8)) }
    }
}
