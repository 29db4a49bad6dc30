/// A JSON value, for assembling the event a minidump request describes out of pieces (an attached event in
/// JSON or MessagePack, a `sentry` form field, flattened `sentry[…]` fields, other fields as `extra`).
///
/// Objects keep their keys in insertion order so the assembled event reads back in the order it was built.
/// Depth is bounded by the parsers that make values (`JSONValue.maxDepth`, `MessagePack.maxDepth`).
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
    ///
    /// Linear in the keys on both sides (a `sentry` field may hold tens of thousands): each key is found through an
    /// index, and the members are changed in place. As `subscript` and `set` do, a key given twice is read at its
    /// last place and written at its first.
    mutating func merge(_ other: JSONValue) {
        guard case .object(let theirs) = other, case .object(var members) = self else {
            self = other
            return
        }
        self = .null  // so that `members` is the only reference and changes in place
        var first: [String: Int] = [:]
        var last: [String: Int] = [:]
        for (i, (key, _)) in members.enumerated() {
            if first[key] == nil { first[key] = i }
            last[key] = i
        }
        for (key, value) in theirs {
            var mine = last[key].map { members[$0].1 } ?? .null
            if case .object = mine, case .object = value {
                mine.merge(value)
            } else {
                mine = value
            }
            if let i = first[key] {
                members[i].1 = mine
                last[key] = i
            } else {
                first[key] = members.count
                last[key] = members.count
                members.append((key, mine))
            }
        }
        self = .object(members)
    }

    /// Parses JSON text (strict RFC 8259, through the ingest path's `JSONReader`), keeping object keys in the order
    /// they came; a key given twice keeps its first place and its last value.
    /// - Throws: `FormatError(.malformedJSON)` when it is not JSON or nests deeper than `maxDepth`.
    static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        do {
            return try JSONReader.with(bytes, range: 0..<bytes.count) { reader in
                let value = try read(&reader, depth: 0)
                try reader.expectEnd()
                return value
            }
        } catch let error as FormatError where error.message == tooDeep {
            throw FormatError(.malformedJSON, tooDeep)
        } catch {
            throw FormatError(.malformedJSON, "not JSON")
        }
    }

    /// Nesting allowed in parsed JSON (the reader and the writer recurse once a level).
    static let maxDepth = 64
    static let tooDeep = "JSON nested deeper than \(maxDepth)"

    /// One value; `depth` counts the arrays and objects around it.
    static func read(_ reader: inout JSONReader, depth: Int) throws -> JSONValue {
        switch try reader.peek() {
        case .null:
            try reader.literal("null")
            return .null
        case .bool: return .bool(try reader.readBool())
        case .string: return .string(try reader.readString())
        case .number: return try number(reader.numberToken())
        case .array:
            guard depth < maxDepth else { throw FormatError(.malformedJSON, tooDeep) }
            var values: [JSONValue] = []
            try reader.readArray { r, _ in values.append(try read(&r, depth: depth + 1)) }
            return .array(values)
        case .object:
            guard depth < maxDepth else { throw FormatError(.malformedJSON, tooDeep) }
            var members: [(String, JSONValue)] = []
            var places: [String: Int] = [:]
            try reader.readObject { r, key in
                let name = key.string
                let value = try read(&r, depth: depth + 1)
                if let i = places[name] {
                    members[i].1 = value
                } else {
                    places[name] = members.count
                    members.append((name, value))
                }
            }
            return .object(members)
        }
    }

    /// A number as the narrowest case that holds it exactly: `.int`, then `.uint`, else `.double` (so `1.0` and
    /// `1e3` are whole numbers, as `JSONDecoder` reads them).
    static func number(_ token: Slice<UnsafeBufferPointer<UInt8>>) throws -> JSONValue {
        let text = String(decoding: token, as: UTF8.self)
        if let i = Int64(text) { return .int(i) }
        if let u = UInt64(text) { return .uint(u) }
        guard let d = Double(text), d.isFinite else { throw FormatError(.malformedJSON, "number out of range") }
        if let i = Int64(exactly: d) { return .int(i) }
        if let u = UInt64(exactly: d) { return .uint(u) }
        return .double(d)
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
        case .string(let s): JSONScrubbing.encodeString(s.utf8, into: &out)
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
                JSONScrubbing.encodeString(key.utf8, into: &out)
                out.append(UInt8(ascii: ":"))
                value.write(to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }
}
