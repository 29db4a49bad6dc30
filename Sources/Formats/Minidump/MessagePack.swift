/// A bounded MessagePack reader: what sentry-native writes into `__sentry-event` (one map, the event) and
/// `__sentry-breadcrumb1`/`2` (breadcrumbs back to back), read into `JSONValue`s.
///
/// Hostile input: every length is checked against the bytes left, nesting is capped at `maxDepth`, and a
/// container's declared count cannot allocate more than the bytes left could hold. Binary values become
/// strings (invalid UTF-8 replaced), extension values `null`, integer map keys their decimal text; other keys are
/// refused (written out as text, nested keys would double their escapes at every level).
struct MessagePack {
    static let maxDepth = 64

    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }

    /// Every value in the input, back to back (at most `limit` of them).
    static func values(_ bytes: [UInt8], limit: Int) throws -> [JSONValue] {
        var reader = MessagePack(bytes)
        var out: [JSONValue] = []
        while !reader.atEnd {
            guard out.count < limit else { throw FormatError(.tooLarge, "more than \(limit) MessagePack values") }
            out.append(try reader.value(depth: 0))
        }
        return out
    }

    mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
        guard count >= 0, count <= bytes.count - position else {
            throw FormatError(.invalidField, "MessagePack value runs past the end")
        }
        defer { position += count }
        return bytes[position..<(position + count)]
    }

    mutating func uint(_ size: Int) throws -> UInt64 {
        try take(size).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func length(_ size: Int) throws -> Int {
        let n = try uint(size)
        guard let count = Int(exactly: n), count <= bytes.count - position else {
            throw FormatError(.invalidField, "MessagePack length \(n) runs past the end")
        }
        return count
    }

    mutating func value(depth: Int) throws -> JSONValue {
        guard depth < Self.maxDepth else {
            throw FormatError(.invalidField, "MessagePack nested deeper than \(Self.maxDepth)")
        }
        let tag = try uint(1)
        switch tag {
        case 0x00...0x7F: return .int(Int64(tag))
        case 0x80...0x8F: return try map(Int(tag & 0x0F), depth: depth)
        case 0x90...0x9F: return try array(Int(tag & 0x0F), depth: depth)
        case 0xA0...0xBF: return .string(text(try take(Int(tag & 0x1F))))
        case 0xC0: return .null
        case 0xC2: return .bool(false)
        case 0xC3: return .bool(true)
        case 0xC4, 0xD9: return .string(text(try take(try length(1))))
        case 0xC5, 0xDA: return .string(text(try take(try length(2))))
        case 0xC6, 0xDB: return .string(text(try take(try length(4))))
        case 0xC7: return try skipExtension(try length(1))
        case 0xC8: return try skipExtension(try length(2))
        case 0xC9: return try skipExtension(try length(4))
        case 0xCA: return .double(Double(Float(bitPattern: UInt32(try uint(4)))))
        case 0xCB: return .double(Double(bitPattern: try uint(8)))
        case 0xCC: return .int(Int64(try uint(1)))
        case 0xCD: return .int(Int64(try uint(2)))
        case 0xCE: return .int(Int64(try uint(4)))
        case 0xCF:
            let u = try uint(8)
            return Int64(exactly: u).map(JSONValue.int) ?? .uint(u)
        case 0xD0: return .int(Int64(Int8(truncatingIfNeeded: try uint(1))))
        case 0xD1: return .int(Int64(Int16(truncatingIfNeeded: try uint(2))))
        case 0xD2: return .int(Int64(Int32(truncatingIfNeeded: try uint(4))))
        case 0xD3: return .int(Int64(bitPattern: try uint(8)))
        case 0xD4: return try skipExtension(1)
        case 0xD5: return try skipExtension(2)
        case 0xD6: return try skipExtension(4)
        case 0xD7: return try skipExtension(8)
        case 0xD8: return try skipExtension(16)
        case 0xDC: return try array(try count(2), depth: depth)
        case 0xDD: return try array(try count(4), depth: depth)
        case 0xDE: return try map(try count(2), depth: depth)
        case 0xDF: return try map(try count(4), depth: depth)
        case 0xE0...0xFF: return .int(Int64(Int8(truncatingIfNeeded: tag)))
        default: throw FormatError(.invalidField, "MessagePack byte 0x\(String(tag, radix: 16)) is not a value")
        }
    }

    /// A container's element count: each element takes at least one byte, so more than the bytes left is a lie.
    mutating func count(_ size: Int) throws -> Int { try length(size) }

    mutating func array(_ count: Int, depth: Int) throws -> JSONValue {
        guard count <= bytes.count - position else {
            throw FormatError(.invalidField, "MessagePack array runs past the end")
        }
        var values: [JSONValue] = []
        values.reserveCapacity(count)
        for _ in 0..<count { values.append(try value(depth: depth + 1)) }
        return .array(values)
    }

    mutating func map(_ count: Int, depth: Int) throws -> JSONValue {
        guard count <= bytes.count - position else {
            throw FormatError(.invalidField, "MessagePack map runs past the end")
        }
        var members: [(String, JSONValue)] = []
        members.reserveCapacity(count)
        for _ in 0..<count {
            let name: String
            switch try value(depth: depth + 1) {
            case .string(let s): name = s
            case .int(let i): name = String(i)
            case .uint(let u): name = String(u)
            default: throw FormatError(.invalidField, "a MessagePack map key is not a string or an integer")
            }
            members.append((name, try value(depth: depth + 1)))
        }
        return .object(members)
    }

    mutating func skipExtension(_ size: Int) throws -> JSONValue {
        _ = try take(1 + size)  // the type byte, then the data
        return .null
    }

    func text(_ slice: ArraySlice<UInt8>) -> String { String(decoding: slice, as: UTF8.self) }
}
