#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The signature algorithms an `id_token` may use: RS256 (every issuer supports it) and ES256.
///
/// Nothing else is accepted, on purpose: `none` would let anyone write a token, and an HMAC algorithm (`HS256`) keyed
/// with a public key is the classic algorithm-confusion forgery. The key's type must fit the algorithm too
/// (``JSONWebKey/fits(_:)``).
public enum JOSEAlgorithm: String, Sendable, CaseIterable {
    case rs256 = "RS256"
    case es256 = "ES256"
}

/// A signed JSON Web Token in compact form (`header.payload.signature`, RFC 7519), split and decoded but NOT yet
/// verified: ``signingInput`` and ``signature`` go to a ``JWSVerifying`` with the issuer's key, and the claims to
/// ``IDTokenCheck``.
///
/// Every byte is hostile: the token is at most ``maxBytes``, each part canonical base64url, the header and the claims
/// JSON objects nested at most ``JSONNesting/maxDepth`` deep, and a header naming extensions we must understand
/// (`crit`) or an unknown algorithm is refused.
public struct JSONWebToken: Sendable {
    /// Longest token read (Google's are ~1 KB; a token with many group claims a few KB).
    public static let maxBytes = 16 * 1024

    public var algorithm: JOSEAlgorithm
    /// The key id the header names, if any.
    public var keyID: String?
    public var claims: IDTokenClaims
    /// `base64url(header) "." base64url(payload)`: the bytes the signature covers.
    public var signingInput: [UInt8]
    public var signature: [UInt8]

    /// Splits and decodes `token`; the error says which part is wrong.
    public static func parse(_ token: some Collection<UInt8>) -> Result<JSONWebToken, SingleSignOnError> {
        func malformed(_ why: String) -> Result<JSONWebToken, SingleSignOnError> {
            .failure(SingleSignOnError(.malformedToken, "the id_token is malformed: \(why)"))
        }
        guard token.count <= maxBytes else { return malformed("longer than \(maxBytes) bytes") }
        let parts = token.split(separator: UInt8(ascii: "."), maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return malformed("not three parts") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payload = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return malformed("a part is not base64url") }
        guard JSONNesting.within(headerBytes), JSONNesting.within(payload),
            let header = try? JSONDecoder().decode(JOSEHeader.self, from: Data(headerBytes)),
            let claims = try? JSONDecoder().decode(IDTokenClaims.self, from: Data(payload))
        else { return malformed("the header or the claims are not a JSON object") }
        guard !header.critical else {
            return .failure(SingleSignOnError(.malformedToken, "the id_token names critical extensions"))
        }
        guard let algorithm = JOSEAlgorithm(rawValue: header.algorithm) else {
            return .failure(
                SingleSignOnError(
                    .unsupportedAlgorithm,
                    "the id_token is signed with \(Printable.short(header.algorithm)); only RS256 and ES256 are accepted"
                ))
        }
        guard !signature.isEmpty else { return malformed("no signature") }
        var signingInput = Array(parts[0])
        signingInput.append(UInt8(ascii: "."))
        signingInput.append(contentsOf: parts[1])
        return .success(
            JSONWebToken(
                algorithm: algorithm, keyID: header.keyID, claims: claims, signingInput: signingInput,
                signature: signature))
    }

    public static func parse(_ token: String) -> Result<JSONWebToken, SingleSignOnError> { parse(Array(token.utf8)) }
}

/// The JOSE header fields that matter here; any `crit` member is refused (we implement no extension).
struct JOSEHeader: Decodable {
    var algorithm: String
    var keyID: String?
    var critical: Bool

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        algorithm = try container.decode(String.self, forKey: AnyCodingKey("alg"))
        keyID = try container.decodeIfPresent(String.self, forKey: AnyCodingKey("kid"))
        critical = container.contains(AnyCodingKey("crit"))
    }
}

/// One top-level claim, as far as login needs to know it: role rules compare strings and lists of strings.
public enum ClaimValue: Sendable, Equatable {
    case string(String)
    case strings([String])
    case number(Double)
    case bool(Bool)
    /// Null, an object, a mixed list: present, but never equal to a rule's value.
    case other

    /// Whether the claim is `value` or a list holding it.
    public func holds(_ value: String) -> Bool {
        switch self {
        case .string(let text): text == value
        case .strings(let list): list.contains(value)
        default: false
        }
    }
}

/// The claims of an `id_token`: every top-level claim (``all``), and the standard ones read from it.
public struct IDTokenClaims: Sendable, Decodable, Equatable {
    public var all: [String: ClaimValue]

    public init(_ all: [String: ClaimValue]) { self.all = all }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var all: [String: ClaimValue] = [:]
        for key in container.allKeys {
            if let value = try? container.decode(Bool.self, forKey: key) {
                all[key.stringValue] = .bool(value)
            } else if let value = try? container.decode(String.self, forKey: key) {
                all[key.stringValue] = .string(value)
            } else if let value = try? container.decode(Double.self, forKey: key) {
                all[key.stringValue] = .number(value)
            } else if let value = try? container.decode([String].self, forKey: key) {
                all[key.stringValue] = .strings(value)
            } else {
                all[key.stringValue] = .other
            }
        }
        self.all = all
    }

    func string(_ name: String) -> String? {
        if case .string(let value) = all[name] { return value }
        return nil
    }

    func number(_ name: String) -> Double? {
        if case .number(let value) = all[name], value.isFinite { return value }
        return nil
    }

    public var issuer: String? { string("iss") }
    public var subject: String? { string("sub") }
    /// `aud`: one string or a list of them.
    public var audiences: [String] {
        switch all["aud"] {
        case .string(let value): [value]
        case .strings(let values): values
        default: []
        }
    }
    public var authorizedParty: String? { string("azp") }
    public var expiresAt: Double? { number("exp") }
    public var issuedAt: Double? { number("iat") }
    public var notBefore: Double? { number("nbf") }
    public var nonce: String? { string("nonce") }
    public var email: String? { string("email") }
    /// `email_verified`: a boolean, or the strings `"true"`/`"false"` some issuers send.
    public var emailVerified: Bool {
        switch all["email_verified"] {
        case .bool(let value): value
        case .string(let value): value == "true"
        default: false
        }
    }
    public var name: String? { string("name") }
}

/// A coding key of any name (JSON objects whose members are not known in advance).
struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// A cheap scan that bounds how deeply a JSON text nests before a decoder recurses into it.
public enum JSONNesting {
    /// Deepest nesting read: claims and keys are flat objects; 32 leaves room for any real token.
    public static let maxDepth = 32

    /// Whether `bytes` never opens more than `limit` arrays or objects at once (brackets inside strings do not count).
    public static func within(_ bytes: some Sequence<UInt8>, limit: Int = maxDepth) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in bytes {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > limit { return false }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return true
    }
}

/// Text from a token or a provider, made safe to put in a message: at most 64 printable ASCII characters.
public enum Printable {
    public static func short(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(64).map { $0.isASCII && $0.value >= 0x20 && $0.value < 0x7f ? $0 : "?" }
        return "\"" + String(String.UnicodeScalarView(kept)) + "\""
    }
}
