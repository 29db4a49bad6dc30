import Crypto
import FaultlineCore
import Pipeline

/// SHA-256 of the secret's UTF-8 bytes, hex encoded: how every secret is stored.
public struct SHA256SecretHasher: SecretHashing {
    public init() {}
    public func hash(_ secret: String) -> SecretHash {
        SecretHash(hex: Hex.encode(SHA256.hash(data: Array(secret.utf8))))
    }
}

/// Secrets from the system's cryptographic random source.
public struct SystemSecretGenerator: SecretGenerating {
    public init() {}
    public func randomHex(bytes: Int) -> String {
        var rng = SystemRandomNumberGenerator()
        return Hex.encode((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &rng) })
    }
}
