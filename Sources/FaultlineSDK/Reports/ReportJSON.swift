/// The small JSON toolkit the report builder needs, without Foundation: a writer that produces exactly the
/// bytes the native v1 routes take, and a bounded reader for Swift runtime crash files (hostile input: depth,
/// size and element counts are capped, nothing traps).

/// Appends JSON text to a byte buffer. Keys are written as given; callers write each key once.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma: [Bool] = [false]

    init() { bytes.reserveCapacity(4096) }

    mutating func beginObject() { separator(); bytes.append(UInt8(ascii: "{")); needsComma.append(false) }
    mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma.removeLast() }
    mutating func beginArray() { separator(); bytes.append(UInt8(ascii: "[")); needsComma.append(false) }
    mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma.removeLast() }

    /// Writes `"name":`; the value call that follows does not add a comma.
    mutating func key(_ name: String) {
        separator()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma[needsComma.count - 1] = false
    }

    mutating func string(_ value: String) { separator(); writeString(value) }
    mutating func bool(_ value: Bool) { separator(); bytes.append(contentsOf: (value ? "true" : "false").utf8) }
    mutating func int(_ value: Int64) { separator(); bytes.append(contentsOf: String(value).utf8) }
    mutating func uint(_ value: UInt64) { separator(); bytes.append(contentsOf: String(value).utf8) }
    /// A finite number; a NaN or infinity (which JSON cannot hold) is written as a string.
    mutating func double(_ value: Double) {
        guard value.isFinite else { string(String(value)); return }
        separator()
        if value == value.rounded(), abs(value) < 1e15 {
            bytes.append(contentsOf: String(Int64(value)).utf8)
        } else {
            bytes.append(contentsOf: String(value).utf8)
        }
    }
    /// `"0x1a2b"`: lowercase, no leading zeros.
    mutating func address(_ value: UInt64) { string("0x" + String(value, radix: 16)) }

    mutating func field(_ name: String, _ value: String?) { if let value { key(name); string(value) } }
    mutating func field(_ name: String, _ value: Double?) { if let value { key(name); double(value) } }

    /// The writer's buffer; the members above keep it balanced.
    mutating func raw(_ text: [UInt8]) { separator(); bytes.append(contentsOf: text) }

    private mutating func separator() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func writeString(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: bytes.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: bytes.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0..<0x20, 0x7f:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5c, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xf)]])
            default: bytes.append(b)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A parsed JSON value. Numbers keep their text (crash files write addresses as strings, but a later runtime
/// might not).
indirect enum JSONValue: Equatable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.number(let x), .number(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The first value of `key` in an object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.0 == key }?.1
    }

    var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }

    /// A `0x` hex string of 1–16 digits (any string is read as hex, as the server does), or a non-negative integer.
    var addressValue: UInt64? {
        switch self {
        case .string(let s):
            var digits = Substring(s)
            if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
            guard (1...16).contains(digits.utf8.count) else { return nil }
            return UInt64(digits, radix: 16)
        case .number(let text):
            guard text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return UInt64(text)
        default:
            return nil
        }
    }
}

/// A strict, bounded JSON reader (RFC 8259) for files another process wrote.
struct BoundedJSONReader {
    struct Failure: Error { var message: String }

    static let maxDepth = 64
    static let maxValues = 1_000_000

    private let bytes: [UInt8]
    private var index = 0
    private var values = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        var reader = BoundedJSONReader(bytes)
        reader.skipWhitespace()
        // A UTF-8 byte order mark is tolerated.
        if bytes.count >= 3, bytes[0] == 0xef, bytes[1] == 0xbb, bytes[2] == 0xbf { reader.index = 3 }
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.index == bytes.count else {
            throw Failure(message: "unexpected bytes after the JSON value at \(reader.index)")
        }
        return value
    }

    private mutating func value(depth: Int) throws -> JSONValue {
        guard depth < Self.maxDepth else { throw Failure(message: "nested more than \(Self.maxDepth) levels") }
        values += 1
        guard values <= Self.maxValues else { throw Failure(message: "more than \(Self.maxValues) values") }
        skipWhitespace()
        guard index < bytes.count else { throw Failure(message: "unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            index += 1
            var members: [(String, JSONValue)] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { throw Failure(message: "expected a key at \(index)") }
                let key = try string()
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { throw Failure(message: "expected ':' at \(index)") }
                index += 1
                members.append((key, try value(depth: depth + 1)))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                if peek() == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw Failure(message: "expected ',' or '}' at \(index)")
            }
        case UInt8(ascii: "["):
            index += 1
            var elements: [JSONValue] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                skipWhitespace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                if peek() == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw Failure(message: "expected ',' or ']' at \(index)")
            }
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        default:
            return .number(try number())
        }
    }

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count,
            bytes[index] == 0x20 || bytes[index] == 0x0a || bytes[index] == 0x0d || bytes[index] == 0x09
        { index += 1 }
    }

    private mutating func literal(_ word: String) throws {
        let w = Array(word.utf8)
        guard index + w.count <= bytes.count, bytes[index..<(index + w.count)].elementsEqual(w) else {
            throw Failure(message: "unexpected text at \(index)")
        }
        index += w.count
    }

    private mutating func number() throws -> String {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        var digits = 0
        while let b = peek(), b >= 0x30 && b <= 0x39 { index += 1; digits += 1 }
        guard digits > 0 else { throw Failure(message: "unexpected character at \(start)") }
        if peek() == UInt8(ascii: ".") {
            index += 1
            var frac = 0
            while let b = peek(), b >= 0x30 && b <= 0x39 { index += 1; frac += 1 }
            guard frac > 0 else { throw Failure(message: "bad number at \(start)") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            var exp = 0
            while let b = peek(), b >= 0x30 && b <= 0x39 { index += 1; exp += 1 }
            guard exp > 0 else { throw Failure(message: "bad number at \(start)") }
        }
        guard index - start <= 64 else { throw Failure(message: "number too long at \(start)") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw Failure(message: "truncated \\u escape") }
        var v: UInt32 = 0
        for b in bytes[index..<(index + 4)] {
            let d: UInt8
            switch b {
            case 0x30...0x39: d = b - 0x30
            case 0x61...0x66: d = b - 0x57
            case 0x41...0x46: d = b - 0x37
            default: throw Failure(message: "bad \\u escape at \(index)")
            }
            v = v << 4 | UInt32(d)
        }
        index += 4
        return v
    }

    private mutating func string() throws -> String {
        index += 1  // the opening quote
        var out: [UInt8] = []
        var plainStart = index
        while true {
            guard index < bytes.count else { throw Failure(message: "unterminated string") }
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[plainStart..<index])
                index += 1
                break
            }
            if b < 0x20 { throw Failure(message: "control character in a string at \(index)") }
            if b != UInt8(ascii: "\\") { index += 1; continue }
            out.append(contentsOf: bytes[plainStart..<index])
            index += 1
            guard index < bytes.count else { throw Failure(message: "unterminated escape") }
            let e = bytes[index]
            index += 1
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0c)
            case UInt8(ascii: "n"): out.append(0x0a)
            case UInt8(ascii: "r"): out.append(0x0d)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if (0xd800..<0xdc00).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                        bytes[index + 1] == UInt8(ascii: "u")
                    else {
                        throw Failure(message: "lone surrogate in a string")
                    }
                    index += 2
                    let low = try hex4()
                    guard (0xdc00..<0xe000).contains(low) else { throw Failure(message: "bad surrogate pair") }
                    scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
                }
                guard let u = Unicode.Scalar(scalar) else { throw Failure(message: "bad \\u escape") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            default:
                throw Failure(message: "bad escape at \(index)")
            }
            plainStart = index
        }
        // Invalid UTF-8 is repaired (U+FFFD), never trusted.
        return String(decoding: out, as: UTF8.self)
    }
}
