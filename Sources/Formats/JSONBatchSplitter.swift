import FaultlineCore

/// Finds where each report sits in a request body without decoding it.
///
/// A body is one report object, `{"reports": [ ... ]}`, or a bare array of reports. Splitting first
/// (one linear pass over the bytes, no allocation per value) lets every report be decoded, size-checked
/// and rejected on its own, and lets storage remember each report's byte range inside the raw payload.
/// Only the structure is checked here; each element's JSON is validated by the decoder afterwards.
public enum JSONBatchSplitter {
    public enum Shape: Equatable, Sendable {
        /// The body is a single report occupying `range`.
        case single(Range<Int>)
        /// The body is a batch; one range per element.
        case batch([Range<Int>])
    }

    /// Splits `bytes`; throws `FormatError.malformedJSON` naming the byte offset when the structure is broken.
    public static func split(_ array: [UInt8], batchKey: String = "reports") throws -> Shape {
        try array.withUnsafeBufferPointer { try split(buffer: $0, batchKey: batchKey) }
    }

    static func split(buffer bytes: UnsafeBufferPointer<UInt8>, batchKey: String) throws -> Shape {
        var scanner = Scanner(bytes: bytes)
        scanner.skipWhitespace()
        guard let first = scanner.peek() else { throw FormatError(.malformedJSON, "empty body") }
        switch first {
        case UInt8(ascii: "["):
            let ranges = try scanner.arrayElements()
            try scanner.expectEnd()
            return .batch(ranges)
        case UInt8(ascii: "{"):
            let start = scanner.index
            let key = Array(batchKey.utf8)
            var batch: [Range<Int>]?
            scanner.index += 1
            scanner.skipWhitespace()
            if scanner.peek() == UInt8(ascii: "}") {
                scanner.index += 1
            } else {
                while true {
                    scanner.skipWhitespace()
                    let keyRange = try scanner.string()
                    scanner.skipWhitespace()
                    try scanner.expect(UInt8(ascii: ":"))
                    scanner.skipWhitespace()
                    if bytes[keyRange].elementsEqual(key), scanner.peek() == UInt8(ascii: "[") {
                        batch = try scanner.arrayElements()
                    } else {
                        _ = try scanner.value()
                    }
                    scanner.skipWhitespace()
                    if scanner.peek() == UInt8(ascii: ",") {
                        scanner.index += 1
                        continue
                    }
                    try scanner.expect(UInt8(ascii: "}"))
                    break
                }
            }
            let end = scanner.index
            try scanner.expectEnd()
            if let batch { return .batch(batch) }
            return .single(start..<end)
        default:
            throw FormatError(.malformedJSON, "expected a JSON object or array at byte \(scanner.index)")
        }
    }

    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0a, 0x0d: index += 1
                case 0xef where index + 2 < bytes.count && bytes[index + 1] == 0xbb && bytes[index + 2] == 0xbf:
                    index += 3  // UTF-8 byte order mark
                default: return
                }
            }
        }

        mutating func expect(_ c: UInt8) throws {
            guard peek() == c else {
                throw FormatError(.malformedJSON, "expected '\(Character(Unicode.Scalar(c)))' at byte \(index)")
            }
            index += 1
        }

        mutating func expectEnd() throws {
            skipWhitespace()
            guard index == bytes.count else {
                throw FormatError(.malformedJSON, "unexpected data after the JSON value at byte \(index)")
            }
        }

        /// Skips a string starting at `index`; returns the range of its raw contents (without quotes).
        mutating func string() throws -> Range<Int> {
            try expect(UInt8(ascii: "\""))
            let start = index
            while index < bytes.count {
                index = JSONBytes.skipPlain(bytes, from: index, end: bytes.count)
                guard index < bytes.count else { break }
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return start..<(index - 1)
                case UInt8(ascii: "\\"):
                    index += 2
                default:
                    index += 1
                }
            }
            throw FormatError(.malformedJSON, "unterminated string starting at byte \(start - 1)")
        }

        /// Skips one value of any type; returns its range.
        mutating func value() throws -> Range<Int> {
            let start = index
            guard let c = peek() else { throw FormatError(.malformedJSON, "expected a value at byte \(index)") }
            switch c {
            case UInt8(ascii: "\""):
                _ = try string()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        _ = try string()
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return start..<index
                        }
                    default:
                        break
                    }
                    index += 1
                }
                throw FormatError(.malformedJSON, "unterminated object or array starting at byte \(start)")
            default:
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0a, 0x0d:
                        break
                    default:
                        index += 1
                        continue
                    }
                    break
                }
                guard Self.isScalar(bytes[start..<index]) else {
                    throw FormatError(.malformedJSON, "expected a value at byte \(start)")
                }
            }
            return start..<index
        }

        /// Whether `token` is `true`, `false`, `null` or a JSON number.
        static func isScalar(_ token: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
            if token.elementsEqual("true".utf8) || token.elementsEqual("false".utf8) || token.elementsEqual("null".utf8)
            {
                return true
            }
            var i = token.startIndex
            func digits() -> Bool {
                let start = i
                while i < token.endIndex, token[i] >= 48, token[i] <= 57 { i += 1 }
                return i > start
            }
            if i < token.endIndex, token[i] == UInt8(ascii: "-") { i += 1 }
            let intStart = i
            guard digits() else { return false }
            guard token[intStart] != UInt8(ascii: "0") || i - intStart == 1 else { return false }
            if i < token.endIndex, token[i] == UInt8(ascii: ".") {
                i += 1
                guard digits() else { return false }
            }
            if i < token.endIndex, token[i] == UInt8(ascii: "e") || token[i] == UInt8(ascii: "E") {
                i += 1
                if i < token.endIndex, token[i] == UInt8(ascii: "+") || token[i] == UInt8(ascii: "-") { i += 1 }
                guard digits() else { return false }
            }
            return i == token.endIndex
        }

        /// Skips an array starting at `index`; returns the range of each element.
        mutating func arrayElements() throws -> [Range<Int>] {
            try expect(UInt8(ascii: "["))
            var ranges: [Range<Int>] = []
            skipWhitespace()
            if peek() == UInt8(ascii: "]") {
                index += 1
                return ranges
            }
            while true {
                skipWhitespace()
                ranges.append(try value())
                skipWhitespace()
                if peek() == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return ranges
            }
        }
    }
}
