#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// HMAC-SHA-1, passed in (Core does no cryptography of its own): what TOTP codes are made from.
public protocol HMACSHA1Computing: Sendable {
    /// HMAC-SHA-1 of `message` keyed with `key` (20 bytes).
    func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8]
}

/// Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA-1, 6 digits, 30-second steps, counted
/// from the Unix epoch. The parameters every authenticator app assumes when an `otpauth://` URI names none.
///
/// A code is accepted for the step it was made in and the one before or after (a phone's clock a little off, a
/// code typed as the step turned), and only for a step later than the last one accepted: a code seen once (over a
/// shoulder, in a proxy's log) cannot sign in again, nor can an older one.
public enum TOTP {
    public static let period: Int64 = 30
    public static let digits = 6
    /// Bytes of a new secret: 160 bits, the size of an HMAC-SHA-1 key (RFC 4226 §4 asks for at least 128).
    public static let secretBytes = 20
    /// Steps either side of now a code is accepted for.
    public static let window: Int64 = 1

    /// The time step of `date`: whole periods since the epoch (negative dates are step 0).
    public static func step(at date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return Int64(min(seconds, 1e15)) / period
    }

    /// The code of `step` for `key` (RFC 4226 §5.3: dynamic truncation, then the low `digits` decimal digits).
    public static func code(key: [UInt8], step: Int64, digits: Int = digits, hmac: any HMACSHA1Computing) -> String {
        let counter = UInt64(bitPattern: step)
        let message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * UInt64($0))) }
        let mac = hmac.hmacSHA1(key: key, message: message)
        guard mac.count == 20 else { return "" }
        let offset = Int(mac[19] & 0x0f)
        let value =
            (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8)
            | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<max(1, min(digits, 9)) { modulus *= 10 }
        let text = String(value % modulus)
        return String(repeating: "0", count: max(0, min(digits, 9) - text.count)) + text
    }

    /// The step `presented` is the code of, within ``window`` of `now` and after `lastStep`; nil when it is none
    /// (wrong, too old, or already used). `presented` may hold spaces (`123 456`), which are ignored.
    public static func accepts(
        _ presented: String, key: [UInt8], now: Date, lastStep: Int64, hmac: any HMACSHA1Computing
    ) -> Int64? {
        let typed = presented.filter { $0 != " " }
        guard typed.count == digits, typed.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        let current = step(at: now)
        for candidate in (current - window)...(current + window) where candidate > lastStep {
            if ConstantTime.equal(Array(code(key: key, step: candidate, hmac: hmac).utf8), Array(typed.utf8)) {
                return candidate
            }
        }
        return nil
    }

    /// The `otpauth://totp/…` URI an authenticator app reads (as text or a QR code) for `secret` (base32).
    public static func uri(secret: String, account: String, issuer: String = "Faultline") -> String {
        func escaped(_ text: String) -> String {
            var out = ""
            for byte in text.utf8 {
                let c = Character(Unicode.Scalar(byte))
                if c.isASCII && (c.isLetter || c.isNumber || "-._~".contains(c)) {
                    out.append(c)
                } else {
                    out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
                }
            }
            return out
        }
        return "otpauth://totp/\(escaped(issuer)):\(escaped(account))?secret=\(secret)&issuer=\(escaped(issuer))"
            + "&algorithm=SHA1&digits=\(digits)&period=\(period)"
    }
}

/// RFC 4648 base32 (`A`–`Z`, `2`–`7`, no padding): how TOTP secrets are shown and stored.
public enum Base32 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of `text` (case and spaces ignored, `=` padding allowed); nil for any other character.
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for scalar in text.uppercased().unicodeScalars where scalar != " " && scalar != "=" {
            guard scalar.isASCII, let index = alphabet.firstIndex(of: UInt8(scalar.value)) else { return nil }
            buffer = (buffer << 5) | UInt32(index)
            bits += 5
            if bits >= 8 {
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits - 8)))
                bits -= 8
            }
            buffer &= (1 << UInt32(bits)) - 1
        }
        return out
    }
}
