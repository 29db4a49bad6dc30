import FaultlineCore

/// A pull parser over UTF-8 JSON bytes, for the ingest hot path.
///
/// Foundation's `JSONDecoder` spent over half of the server's CPU on the native report format (generic
/// `Codable` machinery per field). This reader decodes straight into domain values: object keys are
/// compared as raw bytes, nothing is allocated for values that are skipped, and numbers are parsed in
/// place. It is strict JSON (RFC 8259): no comments, no trailing commas, no control characters in
/// strings. Errors carry a message; callers add the field path (`FormatError.prefixed`) as they unwind,
/// which costs nothing when decoding succeeds.
///
/// The reader works on an `UnsafeBufferPointer` (no bounds check per byte, which measurably mattered in
/// these loops); it must not outlive the `withUnsafeBufferPointer` call that made it, so entry points
/// take arrays and open the buffer themselves (`JSONReader.with`).
struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    var index: Int
    let end: Int
    /// Set while parsing scrubs as it goes (`ScrubAsYouParse`); nil for plain reading.
    var scrubbing: ScrubAsYouParse?
    var isScrubbing: Bool { scrubbing != nil }

    /// Runs `body` with a reader over `range` of `array`.
    static func with<T>(_ array: [UInt8], range: Range<Int>, _ body: (inout JSONReader) throws -> T) throws -> T {
        try array.withUnsafeBufferPointer { buffer in
            var reader = JSONReader(bytes: buffer, range: range)
            return try body(&reader)
        }
    }

    init(bytes: UnsafeBufferPointer<UInt8>, range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= bytes.count, "range outside the buffer")
        self.bytes = bytes
        self.index = range.lowerBound
        self.end = range.upperBound
    }

    /// An object key as it appears in the input (escapes undecoded).
    struct Key {
        let raw: Slice<UnsafeBufferPointer<UInt8>>
        let hasEscapes: Bool

        /// Whether the key is `name` (compared without allocating when the key has no escapes).
        func matches(_ name: StaticString) -> Bool {
            if hasEscapes { return string == name.description }
            guard raw.count == name.utf8CodeUnitCount else { return false }
            return name.withUTF8Buffer { JSONReader.equal(raw, $0) }
        }

        var string: String {
            guard hasEscapes else { return String(decoding: raw, as: UTF8.self) }
            let copy = Array(raw)
            return
                (try? JSONReader.with(copy, range: 0..<copy.count) { try $0.stringBody(closingQuoteRequired: false) })
                ?? String(decoding: raw, as: UTF8.self)
        }
    }

    enum Kind {
        case object, array, string, number, bool, null
    }

    /// Whether two byte runs are equal: a plain loop over the pointers (the generic `elementsEqual` on a slice was
    /// 6 % of an ingest's instructions, in key matching).
    @inline(__always)
    static func equal(_ a: Slice<UnsafeBufferPointer<UInt8>>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard let base = a.base.baseAddress, let other = b.baseAddress else { return a.isEmpty }
        let start = base + a.startIndex
        for i in 0..<b.count where start[i] != other[i] { return false }
        return true
    }

    // MARK: structure

    mutating func skipWhitespace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0a, 0x0d: index += 1
            default: return
            }
        }
    }

    mutating func peek() throws -> Kind {
        skipWhitespace()
        guard index < end else { throw FormatError(.malformedJSON, "unexpected end of JSON") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object
        case UInt8(ascii: "["): return .array
        case UInt8(ascii: "\""): return .string
        case UInt8(ascii: "t"), UInt8(ascii: "f"): return .bool
        case UInt8(ascii: "n"): return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number
        default: throw FormatError(.malformedJSON, "unexpected character at byte \(index)")
        }
    }

    /// Consumes `null` if it is next; JSON null means "absent" for every optional field.
    mutating func consumeNull() throws -> Bool {
        guard try peek() == .null else { return false }
        try literal("null")
        return true
    }

    mutating func literal(_ text: StaticString) throws {
        let n = text.utf8CodeUnitCount
        guard index + n <= end, text.withUTF8Buffer({ JSONReader.equal(bytes[index..<(index + n)], $0) }) else {
            throw FormatError(.malformedJSON, "invalid literal at byte \(index)")
        }
        index += n
    }

    mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard index < end, bytes[index] == byte else {
            throw FormatError(.malformedJSON, "expected '\(Character(Unicode.Scalar(byte)))' at byte \(index)")
        }
        index += 1
    }

    /// Reads an object, calling `body` for each key; `body` must consume the value.
    mutating func readObject(_ body: (inout JSONReader, Key) throws -> Void) throws {
        guard try peek() == .object else { throw FormatError(.invalidField, "expected an object") }
        index += 1
        skipWhitespace()
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard index < end, bytes[index] == UInt8(ascii: "\"") else {
                throw FormatError(.malformedJSON, "expected a key at byte \(index)")
            }
            let key = try rawString()
            try expect(UInt8(ascii: ":"))
            try scrubbingMember(key, body)
            skipWhitespace()
            guard index < end else { throw FormatError(.malformedJSON, "unterminated object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return
            }
            throw FormatError(.malformedJSON, "expected ',' or '}' at byte \(index)")
        }
    }

    /// Reads an array, calling `body` with each element's index; `body` must consume the element.
    mutating func readArray(_ body: (inout JSONReader, Int) throws -> Void) throws {
        guard try peek() == .array else { throw FormatError(.invalidField, "expected an array") }
        index += 1
        skipWhitespace()
        if index < end, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var n = 0
        while true {
            do {
                try scrubbingElement(n, body)
            } catch let error as FormatError {
                throw error.prefixed("[\(n)]")
            }
            n += 1
            skipWhitespace()
            guard index < end else { throw FormatError(.malformedJSON, "unterminated array") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            throw FormatError(.malformedJSON, "expected ',' or ']' at byte \(index)")
        }
    }

    /// Skips one value of any type, checking that it is well-formed.
    mutating func skipValue(depth: Int = 0) throws {
        if isScrubbing { return try scrubbingSkip() }
        guard depth < 512 else { throw FormatError(.malformedJSON, "nesting deeper than 512 levels") }
        switch try peek() {
        case .object: try readObject { reader, _ in try reader.skipValue(depth: depth + 1) }
        case .array: try readArray { reader, _ in try reader.skipValue(depth: depth + 1) }
        case .string: _ = try rawString()
        case .number: _ = try numberToken()
        case .bool: _ = try readBool()
        case .null: try literal("null")
        }
    }

    /// Checks that nothing but whitespace follows.
    mutating func expectEnd() throws {
        skipWhitespace()
        guard index == end else {
            throw FormatError(.malformedJSON, "unexpected data after the JSON value at byte \(index)")
        }
    }

    // MARK: scalars

    mutating func readBool() throws -> Bool {
        switch try peek() {
        case .bool:
            try scrubbingCheckScalar()
            if bytes[index] == UInt8(ascii: "t") {
                try literal("true")
                return true
            }
            try literal("false")
            return false
        default:
            throw FormatError(.invalidField, "expected a bool")
        }
    }

    mutating func readString() throws -> String {
        guard try peek() == .string else { throw FormatError(.invalidField, "expected a string") }
        if isScrubbing { return try scrubbingString() }
        index += 1
        return try stringBody(closingQuoteRequired: true)
    }

    /// A string, or a number/bool turned into its text (for fields clients send either way).
    mutating func readLooseString() throws -> String {
        switch try peek() {
        case .string: return try readString()
        case .number: return String(decoding: try numberToken(), as: UTF8.self)
        case .bool: return try readBool() ? "true" : "false"
        default: throw FormatError(.invalidField, "expected a string or a number")
        }
    }

    mutating func readDouble() throws -> Double {
        guard try peek() == .number else { throw FormatError(.invalidField, "expected a number") }
        let token = try numberToken()
        if let small = Self.smallInteger(token) { return Double(small) }
        guard let value = Double(String(decoding: token, as: UTF8.self)), value.isFinite else {
            throw FormatError(.invalidField, "number out of range")
        }
        return value
    }

    mutating func readInt() throws -> Int {
        guard try peek() == .number else { throw FormatError(.invalidField, "expected a whole number") }
        let token = try numberToken()
        guard let value = Self.smallInteger(token) ?? Int(String(decoding: token, as: UTF8.self)) else {
            throw FormatError(.invalidField, "expected a whole number")
        }
        return value
    }

    mutating func readUInt64() throws -> UInt64 {
        guard try peek() == .number else { throw FormatError(.invalidField, "expected a whole number") }
        let token = try numberToken()
        guard let value = UInt64(String(decoding: token, as: UTF8.self)) else {
            throw FormatError(.invalidField, "expected a non-negative whole number")
        }
        return value
    }

    /// Digits-only tokens up to 18 digits, parsed without allocating.
    static func smallInteger(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Int? {
        var i = token.startIndex
        var negative = false
        if i < token.endIndex, token[i] == UInt8(ascii: "-") {
            negative = true
            i += 1
        }
        guard token.endIndex - i > 0, token.endIndex - i <= 18 else { return nil }
        var value = 0
        while i < token.endIndex {
            let d = Int(token[i]) - 48
            guard d >= 0, d <= 9 else { return nil }
            value = value * 10 + d
            i += 1
        }
        return negative ? -value : value
    }

    /// Consumes a JSON number and returns its bytes.
    mutating func numberToken() throws -> Slice<UnsafeBufferPointer<UInt8>> {
        try scrubbingCheckScalar()
        let start = index
        func digits() -> Bool {
            let s = index
            while index < end, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            return index > s
        }
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let intStart = index
        guard digits() else { throw FormatError(.malformedJSON, "invalid number at byte \(start)") }
        guard bytes[intStart] != UInt8(ascii: "0") || index - intStart == 1 else {
            throw FormatError(.malformedJSON, "invalid number (leading zero) at byte \(start)")
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() else { throw FormatError(.malformedJSON, "invalid number at byte \(start)") }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() else { throw FormatError(.malformedJSON, "invalid number at byte \(start)") }
        }
        return bytes[start..<index]
    }

    /// Consumes a string (opening quote next) and returns its raw contents.
    mutating func rawString() throws -> Key {
        index += 1
        let start = index
        var escapes = false
        while index < end {
            index = JSONBytes.skipPlain(bytes, from: index, end: end)
            guard index < end else { break }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return Key(raw: bytes[start..<(index - 1)], hasEscapes: escapes)
            }
            if b == UInt8(ascii: "\\") {
                escapes = true
                index += 2
                continue
            }
            guard b >= 0x20 else { throw FormatError(.malformedJSON, "control character in a string at byte \(index)") }
            index += 1
        }
        throw FormatError(.malformedJSON, "unterminated string starting at byte \(start - 1)")
    }

    /// Decodes string contents from `index` up to the closing quote (or the end when it is not required).
    mutating func stringBody(closingQuoteRequired: Bool) throws -> String {
        let start = index
        // Fast path: no escapes.
        while index < end {
            index = JSONBytes.skipPlain(bytes, from: index, end: end)
            guard index < end else { break }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                let text = String(decoding: bytes[start..<index], as: UTF8.self)
                index += 1
                return text
            }
            if b == UInt8(ascii: "\\") { break }
            guard b >= 0x20 else { throw FormatError(.malformedJSON, "control character in a string at byte \(index)") }
            index += 1
        }
        if index >= end {
            if closingQuoteRequired { throw FormatError(.malformedJSON, "unterminated string") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }
        var out = Array(bytes[start..<index])
        while index < end {
            let b = bytes[index]
            switch b {
            case UInt8(ascii: "\""):
                index += 1
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index + 1 < end else { throw FormatError(.malformedJSON, "unterminated escape") }
                let e = bytes[index + 1]
                index += 2
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5c)
                case UInt8(ascii: "/"): out.append(0x2f)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0c)
                case UInt8(ascii: "n"): out.append(0x0a)
                case UInt8(ascii: "r"): out.append(0x0d)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800...0xDBFF).contains(scalar), index + 1 < end, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    {
                        index += 2
                        let low = try hex4()
                        if (0xDC00...0xDFFF).contains(low) {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            out.append(contentsOf: [0xEF, 0xBF, 0xBD])  // lone high surrogate
                            scalar = low
                        }
                    }
                    // U+0000 (`\u0000`) becomes U+FFFD, as a lone surrogate does: no client means it, C code cuts text at
                    // it, and PostgreSQL's text columns refuse it (docs/protocol.md, "Text").
                    if scalar == 0 { scalar = 0xFFFD }
                    out.append(contentsOf: Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8))
                default:
                    throw FormatError(.malformedJSON, "invalid escape at byte \(index - 2)")
                }
            default:
                guard b >= 0x20 else {
                    throw FormatError(.malformedJSON, "control character in a string at byte \(index)")
                }
                out.append(b)
                index += 1
            }
        }
        if closingQuoteRequired { throw FormatError(.malformedJSON, "unterminated string") }
        return String(decoding: out, as: UTF8.self)
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= end else { throw FormatError(.malformedJSON, "invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let d: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - 48)
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - 87)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - 55)
            default: throw FormatError(.malformedJSON, "invalid \\u escape")
            }
            value = value << 4 | d
            index += 1
        }
        return value
    }
}

extension JSONReader {
    /// Reads an optional array field, each element with `element`; absent or `null` is empty.
    mutating func list<T>(_ field: String, _ element: (inout JSONReader) throws -> T) throws -> [T] {
        try optional(field) { r in
            var out: [T] = []
            try r.readArray { r, _ in out.append(try element(&r)) }
            return out
        } ?? []
    }

    /// Reads an optional object of register name → address, keeping the client's order.
    mutating func registers(_ field: String) throws -> [Register] {
        try optional(field) { r in
            var out: [Register] = []
            try r.readObject { r, key in
                let name = key.string
                if let value = try r.optional(name, { try $0.readAddress() }) {
                    out.append(Register(name: name, value: value))
                }
            }
            return out
        } ?? []
    }

    /// Reads an optional field value with `read`, treating `null` as absent and prefixing errors with `field`.
    mutating func optional<T>(_ field: String, _ read: (inout JSONReader) throws -> T) throws -> T? {
        do {
            if try consumeNull() { return nil }
            return try read(&self)
        } catch let error as FormatError {
            throw error.prefixed(field)
        }
    }
}
