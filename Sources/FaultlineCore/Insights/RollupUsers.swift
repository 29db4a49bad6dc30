/// Makes a project's `IdentityHashing` from its identity key (`Project.identityKey`, 32 random bytes the database made).
///
/// The core does no cryptography: the server passes HMAC-SHA-256 (swift-crypto, `IdentityHashers.hmacSHA256` in
/// FaultlineHTTP) to both storage engines at their composition, where it keys the per-user rollups (`RollupUser`).
public struct IdentityHashers: Sendable {
    private let make: @Sendable ([UInt8]) -> any IdentityHashing

    /// - Parameter make: the hasher keyed with a project's identity key.
    public init(_ make: @escaping @Sendable ([UInt8]) -> any IdentityHashing) { self.make = make }

    /// The hasher keyed with `key`.
    public func hasher(key: [UInt8]) -> any IdentityHashing { make(key) }
}

/// The key a per-user rollup row stores for a user: a keyed hash, never the user id itself.
///
/// Reports and sessions are pruned by retention, but the per-user rollups (`issue_users`, `issue_release_users`,
/// `issue_day_users`, `issue_tag_users`, `health_day_users`, `health_release_users`) keep distinct-user counts exact
/// for all time. They hold `RollupUser.key`, an HMAC-SHA-256 of the user id under the project's own identity key, so
/// that what survives retention cannot be read back as a user id, nor matched against another project's rollups (two
/// projects have two keys). The same id always gives the same key in a project, so the counts stay exact; 128 bits
/// make two users of one project sharing a key a non-concern (a database upgraded to keyed hashes sums rows that
/// would).
///
/// Break the rule (store an id, or hash without the project's key) and a pruned user id is readable in the database for
/// ever; change the hashed message or the key and every user is counted again as new.
public enum RollupUser {
    /// What a stored key starts with: the version of the rule below (a later rule gets another prefix).
    public static let prefix = "h1:"
    /// Hex digits of the keyed hash kept (128 bits).
    static let hexDigits = 32
    /// What the hashed message starts with: a user id's rollup key never equals the keyed hash of an e-mail pseudonym
    /// (`Scrubber.identity(of:)`), which uses the same project key.
    static let domain = Array("faultline.rollup-user\u{0}".utf8)

    /// `h1:` and the first 32 hex digits of HMAC-SHA-256(project key, "faultline.rollup-user\0" + the user's UTF-8 bytes),
    /// for a report's `userKey` or a session's distinct id as stored (an e-mail already pseudonymous).
    public static func key(of user: String, hasher: any IdentityHashing) -> String {
        let code = hasher.authenticationCode(for: domain + Array(user.utf8))
        return prefix + Hex.encode(code.prefix(hexDigits / 2))
    }

    /// `contribution` with its user replaced by the user's rollup key.
    public static func keyed(_ contribution: IssueContribution, hasher: any IdentityHashing) -> IssueContribution {
        var keyed = contribution
        keyed.user = contribution.user.map { key(of: $0, hasher: hasher) }
        return keyed
    }

    /// `contribution` with its user replaced by the user's rollup key.
    public static func keyed(_ contribution: SessionContribution, hasher: any IdentityHashing) -> SessionContribution {
        var keyed = contribution
        keyed.user = contribution.user.map { key(of: $0, hasher: hasher) }
        return keyed
    }
}

extension RollupUser {
    /// The issue reports an issue page's "Events by user" counts: its latest this many still retained. The breakdown
    /// names users, which the rollups cannot (they hold keys): it is counted from reports, so a user whose reports
    /// retention pruned leaves it with them (the distinct-user counts, from the rollups, cover all time). Bounded so
    /// that an issue of millions of reports costs one index range of this size.
    public static let breakdownReports = 10_000
}
