import Crypto
import FaultlineCore
import _CryptoExtras

/// RS256 (RSASSA-PKCS1-v1_5 with SHA-256) and ES256 (ECDSA P-256 with SHA-256, the signature as `r || s`) with
/// swift-crypto: the signatures of single sign-on's `id_token`s (``JSONWebToken``).
///
/// Key material comes from the network: a key swift-crypto refuses (a point not on the curve, a malformed modulus)
/// verifies nothing, and ``JSONWebKeySet`` has already refused RSA moduli under 2048 bits.
public struct CryptoJWSVerifier: JWSVerifying {
    public init() {}

    public func verify(_ signature: [UInt8], of signingInput: [UInt8], with key: JSONWebKey, algorithm: JOSEAlgorithm)
        -> Bool
    {
        guard key.fits(algorithm) else { return false }
        let digest = SHA256.hash(data: signingInput)
        switch key.material {
        case .rsa(let modulus, let exponent):
            guard signature.count == modulus.count,
                let publicKey = try? _RSA.Signing.PublicKey(n: modulus, e: exponent)
            else { return false }
            return publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: digest, padding: .insecurePKCS1v1_5)
        case .p256(let x, let y):
            guard signature.count == 64, let publicKey = try? P256.Signing.PublicKey(rawRepresentation: x + y),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            else { return false }
            return publicKey.isValidSignature(ecdsa, for: digest)
        }
    }
}
