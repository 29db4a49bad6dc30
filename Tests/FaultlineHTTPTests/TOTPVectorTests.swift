import FaultlineCore
import FaultlineHTTP
import Foundation
import Testing

/// TOTP codes against RFC 6238's test vectors (Appendix B, SHA-1) with the real HMAC-SHA-1, and the rules of
/// accepting a code: its step or one either side, never twice, never an older one.
@Suite struct TOTPVectorTests {
    static let hmac = CryptoHMACSHA1()
    /// The RFC's SHA-1 seed: the ASCII of "12345678901234567890".
    static let key = Array("12345678901234567890".utf8)

    @Test(arguments: [
        (59, "94287082"), (1_111_111_109, "07081804"), (1_111_111_111, "14050471"), (1_234_567_890, "89005924"),
        (2_000_000_000, "69279037"), (20_000_000_000, "65353130"),
    ])
    func theRFCsEightDigitVectors(_ time: Int64, _ expected: String) {
        let step = TOTP.step(at: Date(timeIntervalSince1970: Double(time)))
        #expect(TOTP.code(key: Self.key, step: step, digits: 8, hmac: Self.hmac) == expected)
        // Six digits are the low six of the same number.
        #expect(TOTP.code(key: Self.key, step: step, hmac: Self.hmac) == String(expected.suffix(6)))
    }

    @Test func aCodeIsAcceptedNearItsStepOnceAndNeverBefore() {
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = TOTP.step(at: now)
        let code = TOTP.code(key: Self.key, step: step, hmac: Self.hmac)
        #expect(TOTP.accepts(code, key: Self.key, now: now, lastStep: 0, hmac: Self.hmac) == step)
        #expect(
            TOTP.accepts(
                String(code.prefix(3)) + " " + code.dropFirst(3), key: Self.key, now: now, lastStep: 0,
                hmac: Self.hmac) == step, "spaces are ignored")
        #expect(TOTP.accepts(code, key: Self.key, now: now, lastStep: step, hmac: Self.hmac) == nil, "not twice")
        // The step before and after are accepted (a clock a little off); two steps away is not.
        #expect(TOTP.accepts(code, key: Self.key, now: now + 30, lastStep: 0, hmac: Self.hmac) == step)
        #expect(TOTP.accepts(code, key: Self.key, now: now - 30, lastStep: 0, hmac: Self.hmac) == step)
        #expect(TOTP.accepts(code, key: Self.key, now: now + 61, lastStep: 0, hmac: Self.hmac) == nil)
        // An older code is refused once a later one was used.
        let next = TOTP.code(key: Self.key, step: step + 1, hmac: Self.hmac)
        #expect(TOTP.accepts(next, key: Self.key, now: now + 30, lastStep: step, hmac: Self.hmac) == step + 1)
        #expect(TOTP.accepts(code, key: Self.key, now: now + 30, lastStep: step + 1, hmac: Self.hmac) == nil)
        for bad in ["", "12345", "1234567", "abcdef", "１２３４５６"] {
            #expect(TOTP.accepts(bad, key: Self.key, now: now, lastStep: 0, hmac: Self.hmac) == nil)
        }
    }

    @Test func base32RoundTripsAndMatchesRFC4648() {
        // RFC 4648 §10 (without padding).
        let vectors = [
            ("", ""), ("f", "MY"), ("fo", "MZXQ"), ("foo", "MZXW6"), ("foob", "MZXW6YQ"),
            ("fooba", "MZXW6YTB"), ("foobar", "MZXW6YTBOI"),
        ]
        for (plain, encoded) in vectors {
            #expect(Base32.encode(Array(plain.utf8)) == encoded)
            #expect(Base32.decode(encoded) == Array(plain.utf8))
            #expect(Base32.decode(encoded.lowercased()) == Array(plain.utf8))
        }
        #expect(Base32.decode("MZXW6===") == Array("foo".utf8))
        #expect(Base32.decode("MZ1W") == nil, "1 is not base32")
        let secret = (0..<20).map { UInt8($0 * 13 & 0xff) }
        #expect(Base32.encode(secret).count == 32)
        #expect(Base32.decode(Base32.encode(secret)) == secret)
    }

    @Test func theURINamesTheAccountIssuerAndParameters() {
        let uri = TOTP.uri(secret: "JBSWY3DPEHPK3PXP", account: "ada@example.org")
        #expect(
            uri == "otpauth://totp/Faultline:ada%40example.org?secret=JBSWY3DPEHPK3PXP&issuer=Faultline"
                + "&algorithm=SHA1&digits=6&period=30")
    }
}
