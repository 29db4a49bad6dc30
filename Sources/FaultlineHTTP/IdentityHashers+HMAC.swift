import FaultlineCore

extension IdentityHashers {
    /// HMAC-SHA-256 under a project's identity key (`IdentityHMAC`, swift-crypto): what the server gives both storage
    /// engines for the keyed per-user rollups (`RollupUser`), and what keys the e-mail pseudonyms of the scrubber.
    public static let hmacSHA256 = IdentityHashers { IdentityHMAC(key: $0) }
}
