import Foundation
import Testing

@testable import FaultlineHTTP

/// The ingest routes' answers written without `JSONEncoder`: valid JSON that reads back to what was written.
@Suite struct JSONAnswerTests {
    @Test func writesNestedValuesThatAJSONParserReadsBack() throws {
        let awkward = "quote \" backslash \\ newline \n tab \t return \r bell \u{07} nul \u{00} slash / é 💥 \u{7f}"
        var json = JSONAnswer()
        json.object { json in
            json.field("accepted", ["a", awkward])
            json.field("empty", [String]())
            json.field("none", nil as String?)
            json.field("count", -42)
            json.key("rejected")
            json.array { json in
                json.object { $0.field("message", awkward) }
                json.object { _ in }
            }
        }
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any])
        #expect(parsed["accepted"] as? [String] == ["a", awkward])
        #expect(parsed["empty"] as? [String] == [])
        #expect(parsed["none"] is NSNull)
        #expect(parsed["count"] as? Int == -42)
        let rejected = try #require(parsed["rejected"] as? [[String: Any]])
        #expect(rejected.count == 2)
        #expect(rejected[0]["message"] as? String == awkward)
        #expect(rejected[1].isEmpty)
        // Members in the order written, no spaces.
        #expect(
            String(decoding: json.bytes, as: UTF8.self).hasPrefix(
                #"{"accepted":["a","quote \" backslash \\ newline \n tab \t return \r bell \u0007 nul \u0000"#))

        let response = json.response(status: .accepted)
        #expect(response.status == .accepted)
        #expect(response.headers[.contentType] == "application/json; charset=utf-8")
        #expect(response.headers[.contentLength] == String(json.bytes.count))
    }
}
