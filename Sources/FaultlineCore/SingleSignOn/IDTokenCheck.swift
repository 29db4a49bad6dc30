#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a single sign-on login was refused. The message is shown on the login page: it names what was wrong, never a
/// secret or what the provider said beyond a short printable excerpt.
public struct SingleSignOnError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case notConfigured = "not_configured"
        case discovery
        case keySet = "key_set"
        case wrongState = "wrong_state"
        case providerRefused = "provider_refused"
        case tokenEndpoint = "token_endpoint"
        case malformedToken = "malformed_token"
        case unsupportedAlgorithm = "unsupported_algorithm"
        case unknownKey = "unknown_key"
        case badSignature = "bad_signature"
        case wrongIssuer = "wrong_issuer"
        case wrongAudience = "wrong_audience"
        case expired
        case notYetValid = "not_yet_valid"
        case wrongNonce = "wrong_nonce"
        case noEmail = "no_email"
        case noAccount = "no_account"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { message }
}

/// The claim checks of OpenID Connect Core §3.1.3.7 on an `id_token` whose signature was verified: the issuer is
/// ours, we are an audience (and the authorized party when there are several), it has not expired, was not issued in
/// the future, and carries the nonce of this login. Pure: the time is passed in.
public struct IDTokenCheck: Sendable {
    public var issuer: String
    public var clientID: String
    /// Clock difference tolerated between us and the issuer, in seconds.
    public var leeway: TimeInterval

    public init(issuer: String, clientID: String, leeway: TimeInterval = 60) {
        self.issuer = issuer
        self.clientID = clientID
        self.leeway = leeway
    }

    /// Nil when `claims` pass for a login that sent `nonce` at `now`; else the first failed check.
    public func problem(_ claims: IDTokenClaims, nonce: String, now: Date) -> SingleSignOnError? {
        guard claims.issuer == issuer else {
            return SingleSignOnError(.wrongIssuer, "the id_token was issued by another issuer")
        }
        let audiences = claims.audiences
        guard audiences.contains(clientID) else {
            return SingleSignOnError(.wrongAudience, "the id_token is not for this client")
        }
        if audiences.count > 1 || claims.authorizedParty != nil, claims.authorizedParty != clientID {
            return SingleSignOnError(.wrongAudience, "the id_token's authorized party is not this client")
        }
        let seconds = now.timeIntervalSince1970
        guard let expiry = claims.expiresAt, expiry + leeway > seconds else {
            return SingleSignOnError(.expired, "the id_token has expired")
        }
        guard let issued = claims.issuedAt, issued - leeway <= seconds else {
            return SingleSignOnError(.notYetValid, "the id_token has no issue time or was issued in the future")
        }
        if let notBefore = claims.notBefore, notBefore - leeway > seconds {
            return SingleSignOnError(.notYetValid, "the id_token is not valid yet")
        }
        guard let presented = claims.nonce, ConstantTime.equal(Array(presented.utf8), Array(nonce.utf8)) else {
            return SingleSignOnError(.wrongNonce, "the id_token's nonce is not this login's")
        }
        return nil
    }
}
