/// Makes the keyed hash behind a pseudonymous user id. Implemented with HMAC-SHA-256 under the project's
/// `identityKey` at the edge (the core does no cryptography of its own).
///
/// A class protocol on purpose: the scrubber is copied into every JSON reader that scrubs, and an optional
/// existential of a struct made each such copy (and every `isScrubbing` check) go through value witnesses —
/// the strict reader's validating pass was measured 2x slower with it (tools/bench/scrub/run).
public protocol IdentityHashing: AnyObject, Sendable {
    /// HMAC-SHA-256 of `message` under the project's identity key (32 bytes).
    func authenticationCode(for message: [UInt8]) -> [UInt8]
}

/// Pseudonymous user ids: an e-mail address that identifies a user (the teams' rule is "never log full e-mail
/// addresses") is replaced where the protocol puts user ids, so that a user stays one user in the crash-free numbers
/// and the rollups without their address being stored, searchable or shown.
extension Scrubber {
    /// The prefix of a pseudonymous user id.
    public static let identityPrefix = "email:"
    /// Hex digits of the keyed hash kept in an id (128 bits: collisions between a project's users are not a concern).
    static let identityHexDigits = 32

    /// The stored form of a user id value: for a whole value that is an e-mail address, with masking on,
    /// `email:<32 hex digits of HMAC-SHA-256(project key, the address trimmed and lowercased)>:<mask>`, e.g.
    /// `email:3f2a…:j***@example.com` — the same address always gives the same id, and the id shows the mask. Nil
    /// for anything else (the value rules apply then), and without a key (the address is masked like any value).
    public func identity(of value: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard settings.maskEmailsAndPhones, let identities else { return nil }
        var start = 0
        var end = value.count
        while start < end, value[start] == 0x20 { start += 1 }
        while end > start, value[end - 1] == 0x20 { end -= 1 }
        guard end - start <= 320, let at = (start..<end).first(where: { value[$0] == UInt8(ascii: "@") }) else {
            return nil
        }
        let trimmed = UnsafeBufferPointer(rebasing: value[start..<end])
        guard let (range, mask) = Self.email(trimmed, at: at - start, after: 0), range == 0..<trimmed.count else {
            return nil
        }
        let normalised = trimmed.map { $0 >= 0x41 && $0 <= 0x5a ? $0 &+ 0x20 : $0 }
        let code = identities.authenticationCode(for: normalised)
        var out = Array(Self.identityPrefix.utf8) + Hex.encodedBytes(code.prefix(Self.identityHexDigits / 2))
        out.append(UInt8(ascii: ":"))
        out.append(contentsOf: mask)
        return out
    }

    /// Session updates whose distinct id (the session's user) is an e-mail address, with that id made pseudonymous as
    /// a report's user id is, so that crash-free users count one user once (native sessions are not rewritten JSON).
    public func pseudonymous(_ updates: [SessionUpdate]) -> [SessionUpdate] {
        guard settings.maskEmailsAndPhones, identities != nil else { return updates }
        return updates.map { update in
            var update = update
            if let id = update.distinctID, let pseudonym = identity(of: id) { update.distinctID = pseudonym }
            return update
        }
    }

    /// `identity(of:)` for a `String`.
    public func identity(of value: String) -> String? {
        Array(value.utf8).withUnsafeBufferPointer { identity(of: $0) }.map { String(decoding: $0, as: UTF8.self) }
    }
}
