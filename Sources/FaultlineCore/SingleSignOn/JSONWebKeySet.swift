#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One public signing key of an issuer's JWKS (RFC 7517): an RSA key (`n`, `e`) or a P-256 key (`x`, `y`).
public struct JSONWebKey: Sendable, Equatable {
    public enum Material: Sendable, Equatable {
        /// The modulus and exponent, big-endian, without leading zero bytes.
        case rsa(modulus: [UInt8], exponent: [UInt8])
        /// A P-256 point's coordinates, 32 bytes each.
        case p256(x: [UInt8], y: [UInt8])
    }
    public var keyID: String?
    /// The algorithm the key is for (`alg`), when the set says.
    public var algorithm: String?
    public var material: Material

    /// Fewest and most RSA modulus bytes taken: 2048 to 8192 bits (smaller keys are forgeable, larger ones only cost).
    public static let rsaModulusBytes = 256...1024

    /// Whether the key may verify a signature of `algorithm`: the key type fits, and its own `alg` (if any) agrees.
    public func fits(_ algorithm: JOSEAlgorithm) -> Bool {
        if let own = self.algorithm, own != algorithm.rawValue { return false }
        switch (material, algorithm) {
        case (.rsa, .rs256), (.p256, .es256): return true
        default: return false
        }
    }
}

/// An issuer's key set (`jwks_uri`), read from hostile bytes: at most ``maxBytes`` and ``maxKeys`` keys. Keys that
/// are not for signatures (`use` other than `sig`), of another type or curve, or malformed are skipped, so that one
/// key of a kind we do not use does not make the whole set unusable; a set with no usable key is an error.
public struct JSONWebKeySet: Sendable, Equatable {
    public static let maxBytes = 64 * 1024
    public static let maxKeys = 32

    public var keys: [JSONWebKey]

    public init(keys: [JSONWebKey]) { self.keys = keys }

    /// The keys a JWKS document holds.
    public static func parse(_ bytes: [UInt8]) -> Result<JSONWebKeySet, SingleSignOnError> {
        func bad(_ why: String) -> Result<JSONWebKeySet, SingleSignOnError> {
            .failure(SingleSignOnError(.keySet, "the issuer's key set is unusable: \(why)"))
        }
        guard bytes.count <= maxBytes else { return bad("longer than \(maxBytes) bytes") }
        guard JSONNesting.within(bytes), let document = try? JSONDecoder().decode(Document.self, from: Data(bytes))
        else { return bad("not a JSON object with a \"keys\" list") }
        guard document.keys.count <= maxKeys else { return bad("more than \(maxKeys) keys") }
        let keys = document.keys.compactMap { $0.raw?.key }
        guard !keys.isEmpty else { return bad("no RSA or P-256 signing key") }
        return .success(JSONWebKeySet(keys: keys))
    }

    /// The key to verify a token signed with `algorithm` under `keyID`: the key with that id, or, when the token names
    /// none, the only key that fits. Nil when there is no such key (the caller may fetch the set again once).
    public func key(for algorithm: JOSEAlgorithm, keyID: String?) -> JSONWebKey? {
        if let keyID {
            return keys.first { $0.keyID == keyID && $0.fits(algorithm) }
        }
        let fitting = keys.filter { $0.fits(algorithm) }
        return fitting.count == 1 ? fitting[0] : nil
    }

    struct Document: Decodable {
        var keys: [Entry]
    }

    /// A member of `keys` that is not even an object is skipped like any other unusable key.
    struct Entry: Decodable {
        var raw: RawKey?
        init(from decoder: any Decoder) throws { raw = try? RawKey(from: decoder) }
    }

    /// One member of `keys`, every field optional and checked in ``key``.
    struct RawKey: Decodable {
        var kty: String?
        var use: String?
        var kid: String?
        var alg: String?
        var crv: String?
        var n: String?
        var e: String?
        var x: String?
        var y: String?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: AnyCodingKey.self)
            func text(_ name: String) -> String? {
                try? container.decodeIfPresent(String.self, forKey: AnyCodingKey(name))
            }
            (kty, use, kid, alg, crv) = (text("kty"), text("use"), text("kid"), text("alg"), text("crv"))
            (n, e, x, y) = (text("n"), text("e"), text("x"), text("y"))
        }

        var key: JSONWebKey? {
            guard use == nil || use == "sig" else { return nil }
            switch kty {
            case "RSA":
                guard var modulus = n.flatMap(Base64URL.decode), var exponent = e.flatMap(Base64URL.decode) else {
                    return nil
                }
                modulus = Array(modulus.drop { $0 == 0 })
                exponent = Array(exponent.drop { $0 == 0 })
                guard JSONWebKey.rsaModulusBytes.contains(modulus.count), (1...8).contains(exponent.count) else {
                    return nil
                }
                return JSONWebKey(keyID: kid, algorithm: alg, material: .rsa(modulus: modulus, exponent: exponent))
            case "EC":
                guard crv == "P-256", let x = x.flatMap(Base64URL.decode), let y = y.flatMap(Base64URL.decode),
                    x.count == 32, y.count == 32
                else { return nil }
                return JSONWebKey(keyID: kid, algorithm: alg, material: .p256(x: x, y: y))
            default:
                return nil
            }
        }
    }
}

/// Checks a signature with a key: the cryptography behind the port lives at the edge (swift-crypto in FaultlineHTTP).
public protocol JWSVerifying: Sendable {
    /// Whether `signature` is a valid `algorithm` signature of `signingInput` under `key`. A key the library refuses
    /// (a modulus too small, a point not on the curve) verifies nothing.
    func verify(_ signature: [UInt8], of signingInput: [UInt8], with key: JSONWebKey, algorithm: JOSEAlgorithm) -> Bool
}
