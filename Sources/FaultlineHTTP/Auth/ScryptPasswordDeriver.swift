import Crypto
import FaultlineCore
import _CryptoExtras

/// scrypt through swift-crypto's `KDF.Scrypt` (BoringSSL's `EVP_PBE_scrypt`): how people's passwords are hashed.
public struct ScryptPasswordDeriver: PasswordDeriving {
    public init() {}

    /// - Throws: ``PeopleError`` `.weakPassword` for parameters outside ``ScryptParameters/isAccepted`` (never
    ///   derived: they would take too much time or memory), or BoringSSL's error.
    public func derive(password: String, salt: [UInt8], parameters: ScryptParameters, length: Int) throws -> [UInt8] {
        guard parameters.isAccepted, (16...64).contains(length) else {
            throw PeopleError(.weakPassword, "scrypt parameters out of bounds")
        }
        let key = try KDF.Scrypt.deriveKey(
            from: Array(password.utf8), salt: salt, outputByteCount: length, rounds: 1 << parameters.log2N,
            blockSize: parameters.r, parallelism: parameters.p)
        return key.withUnsafeBytes { Array($0) }
    }
}
