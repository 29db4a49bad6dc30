/// Base64url without padding (RFC 7515 §2), the encoding of every part of a JSON Web Token and of a JSON Web Key's
/// numbers.
///
/// The decoder reads hostile bytes: any byte outside the alphabet, a length that cannot come from whole bytes
/// (`count % 4 == 1`), padding, or bits left over in the last character makes it return nil. Accepting non-zero
/// leftover bits would let two spellings decode to one value, so a token could be changed without changing what it
/// says.
public enum Base64URL {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// The value of one base64url character, or nil.
    static func value(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// The bytes `text` encodes; nil when it is not canonical unpadded base64url.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 2)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in text {
            guard let value = value(byte) else { return nil }
            accumulator = (accumulator << 6) | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        // What is left are the low bits of the last character, which must be zero in the one canonical spelling.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// The bytes a string encodes; nil when it is not canonical unpadded base64url.
    public static func decode(_ text: String) -> [UInt8]? { decode(Array(text.utf8)) }

    /// `bytes` as unpadded base64url.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in bytes {
            accumulator = (accumulator << 8) | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                out.append(alphabet[Int((accumulator >> UInt32(bits)) & 63)])
            }
            accumulator &= (1 << UInt32(bits)) - 1
        }
        if bits > 0 { out.append(alphabet[Int((accumulator << UInt32(6 - bits)) & 63)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
