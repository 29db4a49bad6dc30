import FaultlineCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A timestamp field: an ISO 8601 string or unix seconds.
struct WireTimestamp: Encodable, Equatable {
    var date: Date
    init(_ date: Date) { self.date = date }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(Timestamps.formatISO8601(date))
    }
}

/// An address: a `0x`-prefixed hex string (the safe form: JSON numbers lose precision past 2^53) or a
/// non-negative integer.
struct WireAddress: Encodable, Equatable {
    var value: UInt64
    init(_ value: UInt64) { self.value = value }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode("0x" + String(value, radix: 16))
    }
}

/// A string that clients sometimes send as a number (error codes, builds).
struct WireLooseString: Encodable, Equatable {
    var value: String
    init(_ value: String) { self.value = value }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }
}

/// A custom key's value: string, number or bool.
struct WireCustomValue: Encodable, Equatable {
    var value: CustomValue
    init(_ value: CustomValue) { self.value = value }
    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch value {
        case .bool(let b): try c.encode(b)
        case .number(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        }
    }
}
