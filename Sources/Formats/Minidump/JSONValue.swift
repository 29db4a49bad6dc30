#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A JSON value, for assembling the event a minidump request describes out of pieces (an attached event in
/// JSON or MessagePack, a `sentry` form field, flattened `sentry[…]` fields, other fields as `extra`).
///
/// Objects keep their keys in insertion order so the assembled event reads back in the order it was built.
/// Depth is bounded by the decoders that make values (`JSONDecoder`'s nesting limit, `MessagePack.maxDepth`).
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.uint(let x), .uint(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)): return x.elementsEqual(y) { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    /// The value of `key` in an object.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.0 == key }?.1
    }

    var string: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// Sets `key` in an object (replacing an earlier value in place); a non-object becomes an object first.
    mutating func set(_ key: String, _ value: JSONValue) {
        guard case .object(var members) = self else {
            self = .object([(key, value)])
            return
        }
        if let i = members.firstIndex(where: { $0.0 == key }) {
            members[i].1 = value
        } else {
            members.append((key, value))
        }
        self = .object(members)
    }

    /// Sets the value at `path` (`["tags", "k"]`), making objects on the way and replacing what is not one.
    mutating func set(path: ArraySlice<String>, _ value: JSONValue) {
        guard let first = path.first else {
            self = value
            return
        }
        var child = self[first] ?? .object([])
        if case .object = child {} else { child = .object([]) }
        child.set(path: path.dropFirst(), value)
        set(first, child)
    }

    /// Relay's merge: objects merge key by key, recursively; anything else in `other` replaces what is here.
    mutating func merge(_ other: JSONValue) {
        guard case .object(let theirs) = other, case .object = self else {
            self = other
            return
        }
        for (key, value) in theirs {
            var mine = self[key] ?? .null
            if case .object = mine, case .object = value {
                mine.merge(value)
            } else {
                mine = value
            }
            set(key, mine)
        }
    }

    /// Parses JSON text.
    /// - Throws: `FormatError(.malformedJSON)` when it is not JSON.
    static func parse(_ bytes: some Collection<UInt8>) throws -> JSONValue {
        guard nestingDepth(bytes) <= maxDepth else {
            throw FormatError(.malformedJSON, "JSON nested deeper than \(maxDepth)")
        }
        do {
            return try JSONDecoder().decode(Decoded.self, from: Data(bytes)).value
        } catch {
            throw FormatError(.malformedJSON, "not JSON")
        }
    }

    /// Nesting allowed in parsed JSON (the decoder and the writer recurse once a level).
    static let maxDepth = 64

    /// How deep brackets nest in JSON text, strings skipped (a scan before decoding, so that decoding never
    /// recurses deeper than `maxDepth`).
    static func nestingDepth(_ bytes: some Collection<UInt8>) -> Int {
        var depth = 0
        var deepest = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                deepest = max(deepest, depth)
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return deepest
    }

    /// UTF-8 JSON text of the value (non-finite numbers, which JSON cannot spell, become `null`).
    var serialized: [UInt8] {
        var out: [UInt8] = []
        write(to: &out)
        return out
    }

    func write(to out: inout [UInt8]) {
        switch self {
        case .null: out += Array("null".utf8)
        case .bool(let b): out += Array((b ? "true" : "false").utf8)
        case .int(let i): out += Array(String(i).utf8)
        case .uint(let u): out += Array(String(u).utf8)
        case .double(let d): out += Array((d.isFinite ? "\(d)" : "null").utf8)
        case .string(let s): Self.writeString(s, to: &out)
        case .array(let values):
            out.append(UInt8(ascii: "["))
            for (i, value) in values.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ s: String, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: out += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `Decodable` glue: tries each JSON type in turn.
    struct Decoded: Decodable {
        let value: JSONValue

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            if var array = try? decoder.unkeyedContainer() {
                var values: [JSONValue] = []
                while !array.isAtEnd { values.append(try array.decode(Decoded.self).value) }
                value = .array(values)
                return
            }
            if let object = try? decoder.container(keyedBy: Key.self) {
                value = .object(
                    try object.allKeys.map { ($0.stringValue, try object.decode(Decoded.self, forKey: $0).value) })
                return
            }
            let single = try decoder.singleValueContainer()
            if single.decodeNil() {
                value = .null
            } else if let b = try? single.decode(Bool.self) {
                value = .bool(b)
            } else if let i = try? single.decode(Int64.self) {
                value = .int(i)
            } else if let u = try? single.decode(UInt64.self) {
                value = .uint(u)
            } else if let d = try? single.decode(Double.self) {
                value = .double(d)
            } else {
                value = .string(try single.decode(String.self))
            }
        }
    }
}
