import Crypto
import FaultlineCore

/// HMAC-SHA-1 through swift-crypto, for TOTP codes (``TOTP``). SHA-1 is what RFC 6238 and every authenticator app
/// use; as an HMAC over a counter it keeps its strength (collisions of SHA-1 do not help forge an HMAC).
public struct CryptoHMACSHA1: HMACSHA1Computing {
    public init() {}
    public func hmacSHA1(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
