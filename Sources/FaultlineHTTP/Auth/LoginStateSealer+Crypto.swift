import Crypto
import FaultlineCore

/// Single sign-on's login cookie sealed with AES-256-GCM (``LoginStateSealing``): `v2.` and the base64url of nonce,
/// ciphertext and tag. The key is derived (HKDF-SHA-256, its own label) from the server's stored secret, the one that
/// also keys the unsubscribe links, so every node of one database seals and opens alike, and a key made for one use
/// never serves the other.
public struct AESGCMLoginStateSealer: LoginStateSealing {
    /// The server's stored 32-byte secret (made the first time it is asked for).
    let secret: @Sendable () async throws -> [UInt8]
    static let label = Array("faultline single sign-on login state v1".utf8)
    static let prefix = "v2."
    /// Sealed values longer than this are not opened (a cookie is at most 4 KiB).
    static let maxSealedBytes = 4096

    public init(secret: @escaping @Sendable () async throws -> [UInt8]) {
        self.secret = secret
    }

    func key() async throws -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: try await secret()), info: Self.label, outputByteCount: 32)
    }

    public func seal(_ text: String) async throws -> String {
        let box = try AES.GCM.seal(Array(text.utf8), using: try await key(), authenticating: Self.label)
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return Self.prefix + Base64URL.encode(Array(combined))
    }

    public func open(_ sealed: String) async throws -> String? {
        guard sealed.utf8.count <= Self.maxSealedBytes, sealed.hasPrefix(Self.prefix),
            let bytes = Base64URL.decode(String(sealed.dropFirst(Self.prefix.count))),
            let box = try? AES.GCM.SealedBox(combined: bytes),
            let plain = try? AES.GCM.open(box, using: try await key(), authenticating: Self.label)
        else { return nil }
        return String(validating: Array(plain), as: UTF8.self)
    }
}
