import Formats
import HTTPTypes
import Hummingbird

/// The small JSON answers of the ingest routes written straight into bytes, without Foundation's `JSONEncoder`.
/// Under one report per request, encoding a receipt of one id with `JSONEncoder` (a `Codable` walk through boxed
/// containers, then a copy into a buffer) was ~2 % of the server's CPU; writing it is a few appends.
///
/// Members are written in the order they are called; a caller writes each key once. Strings are escaped as JSON
/// requires (quote, backslash, control characters: `JSONScrubbing.encodeString`); everything else is copied as UTF-8.
struct JSONAnswer {
    private(set) var bytes: [UInt8] = []
    /// Whether the innermost open object or array has a member already (a comma goes before the next one).
    private var filled: [Bool] = [false]

    init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

    /// `{ body }`.
    mutating func object(_ body: (inout JSONAnswer) -> Void) {
        open(UInt8(ascii: "{"))
        body(&self)
        close(UInt8(ascii: "}"))
    }

    /// `[ body ]`.
    mutating func array(_ body: (inout JSONAnswer) -> Void) {
        open(UInt8(ascii: "["))
        body(&self)
        close(UInt8(ascii: "]"))
    }

    /// `"name":`; the value written next belongs to it.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        filled[filled.count - 1] = false
    }

    mutating func string(_ value: String) {
        separate()
        JSONScrubbing.encodeString(value.utf8, into: &bytes)
    }

    mutating func int(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// `"name": value` (or `null`).
    mutating func field(_ name: StaticString, _ value: String?) {
        key(name)
        if let value { string(value) } else { null() }
    }

    mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        int(value)
    }

    /// `"name": [values]`.
    mutating func field(_ name: StaticString, _ values: [String]) {
        key(name)
        array { for value in values { $0.string(value) } }
    }

    /// The answer: `status`, the JSON content type and length, these bytes.
    func response(status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json; charset=utf-8", .contentLength: String(bytes.count)],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    private mutating func separate() {
        if filled[filled.count - 1] { bytes.append(UInt8(ascii: ",")) }
        filled[filled.count - 1] = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        filled.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        filled.removeLast()
    }
}
