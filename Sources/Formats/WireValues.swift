import FaultlineCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A timestamp field: an ISO 8601 string or unix seconds.
struct WireTimestamp: Codable, Equatable {
    var date: Date
    init(_ date: Date) { self.date = date }
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let seconds = try? c.decode(Double.self) {
            guard seconds.isFinite, abs(seconds) < 1e11 else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "unix seconds out of range")
            }
            date = Date(timeIntervalSince1970: seconds)
        } else if let text = try? c.decode(String.self), let parsed = Timestamps.parseISO8601(text) {
            date = parsed
        } else {
            throw DecodingError.dataCorruptedError(
                in: c, debugDescription: "expected an ISO 8601 date-time string or unix seconds")
        }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Timestamps.formatISO8601(date))
    }
}

/// An address: a `0x`-prefixed hex string (the safe form: JSON numbers lose precision past 2^53) or a
/// non-negative integer.
struct WireAddress: Codable, Equatable {
    var value: UInt64
    init(_ value: UInt64) { self.value = value }
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let text = try? c.decode(String.self) {
            guard let v = Hex.parseUInt64(text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a hex address like \"0x1a2b\"")
            }
            value = v
        } else if let v = try? c.decode(UInt64.self) {
            value = v
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a hex address string or an integer")
        }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode("0x" + String(value, radix: 16))
    }
}

/// A string that clients sometimes send as a number (error codes, builds).
struct WireLooseString: Codable, Equatable {
    var value: String
    init(_ value: String) { self.value = value }
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let s = try? c.decode(String.self) {
            value = s
        } else if let i = try? c.decode(Int64.self) {
            value = String(i)
        } else if let d = try? c.decode(Double.self) {
            value = String(d)
        } else if let b = try? c.decode(Bool.self) {
            value = String(b)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a string or a number")
        }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// A custom key's value: string, number or bool.
struct WireCustomValue: Codable, Equatable {
    var value: CustomValue
    init(_ value: CustomValue) { self.value = value }
    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let b = try? c.decode(Bool.self) {
            value = .bool(b)
        } else if let d = try? c.decode(Double.self) {
            value = .number(d)
        } else if let s = try? c.decode(String.self) {
            value = .string(s)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a string, number or bool")
        }
    }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .bool(let b): try c.encode(b)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        }
    }
}

extension DecodingError {
    /// The failing field as `threads[0].frames[2].address`, and a client-readable reason.
    var fieldAndReason: (field: String, reason: String) {
        let path: [any CodingKey]
        let reason: String
        switch self {
        case .typeMismatch(let type, let ctx):
            path = ctx.codingPath
            reason = ctx.debugDescription.hasPrefix("Expected") ? "expected \(Self.typeName(type))" : ctx.debugDescription
        case .valueNotFound(let type, let ctx):
            path = ctx.codingPath
            reason = "expected \(Self.typeName(type)), found null"
        case .keyNotFound(let key, let ctx):
            path = ctx.codingPath + [key]
            reason = "is required"
        case .dataCorrupted(let ctx):
            path = ctx.codingPath
            reason = ctx.codingPath.isEmpty ? "is not valid JSON" : ctx.debugDescription
        @unknown default:
            path = []
            reason = "is invalid"
        }
        return (Self.render(path), reason)
    }

    static func render(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let i = key.intValue {
                out += "[\(i)]"
            } else {
                out += out.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return out
    }

    static func typeName(_ type: Any.Type) -> String {
        if type == String.self { return "a string" }
        if type == Bool.self { return "a bool" }
        if type == Int.self || type == Int64.self || type == UInt64.self || type == Double.self { return "a number" }
        let name = "\(type)"
        if name.hasPrefix("Array") { return "an array" }
        if name.hasPrefix("Dictionary") { return "an object" }
        return "a value of type \(name)"
    }
}

/// Decodes one JSON value, turning decoder errors into `FormatError`s that name the field.
func decodeJSON<T: Decodable>(_ type: T.Type, from bytes: ArraySlice<UInt8>) throws -> T {
    do {
        return try JSONDecoder().decode(T.self, from: Data(bytes))
    } catch let error as DecodingError {
        let (field, reason) = error.fieldAndReason
        if field.isEmpty, case .dataCorrupted = error {
            throw FormatError(.malformedJSON, "the body is not valid JSON")
        }
        if field.isEmpty {
            throw FormatError(.malformedJSON, "expected a JSON object: \(reason)")
        }
        throw FormatError(.invalidField, reason, field: field)
    }
}
