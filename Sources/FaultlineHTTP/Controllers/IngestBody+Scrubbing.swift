import Crypto
import FaultlineCore
import Formats

extension IngestBody {
    /// What to store: the client's own bytes (its gzip kept) when scrubbing changed nothing, else the scrubbed
    /// bytes compressed once — never the original bytes, which may hold what was scrubbed.
    func storedPayload(scrubbed: [UInt8]?) throws -> StoredPayload {
        guard let scrubbed else { return try storedPayload() }
        return StoredPayload(
            bytes: try BodyDecoding.deflateForStorage(scrubbed), encoding: .deflate, inflatedSize: scrubbed.count)
    }
}

extension Project {
    /// The scrubber for this project's reports: its privacy settings, and its identity key for pseudonymous user ids
    /// (none when the project has no key: e-mail user ids are then masked like other values).
    public var scrubber: Scrubber {
        Scrubber(settings: privacy, identities: identityKey.isEmpty ? nil : IdentityHMAC(key: identityKey))
    }
}

/// HMAC-SHA-256 under a project's identity key (`Project.identityKey`, 32 random bytes made by the database).
final class IdentityHMAC: IdentityHashing {
    /// The key's bytes (`SymmetricKey` is not `Sendable`; one is made per address hashed, which is rare).
    let key: [UInt8]

    init(key: [UInt8]) { self.key = key }

    func authenticationCode(for message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }
}
