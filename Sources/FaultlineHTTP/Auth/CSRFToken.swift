import Crypto
import FaultlineCore

/// The CSRF token of a dashboard login session: an HMAC-SHA256 of a fixed label keyed with the session's
/// server-side secret (``AdminSession/secret``, never sent to the browser). A page served to the session carries it
/// in its forms; another site can neither read it (same-origin policy) nor compute it.
enum CSRFToken {
    static let label = Array("faultline dashboard form v1".utf8)

    /// The token for `session`, hex encoded.
    static func token(for session: AdminSession) -> String {
        let key = SymmetricKey(data: Array(session.secret.utf8))
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: label, using: key))
    }

    /// Whether `presented` is `session`'s token, compared in constant time (no early exit on the first difference).
    static func verify(_ presented: String?, session: AdminSession) -> Bool {
        guard let presented else { return false }
        return ConstantTime.equal(Array(presented.utf8), Array(token(for: session).utf8))
    }
}
