import FaultlineCore
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An answer from an OpenID provider: the status and the body (never more than the caller's limit).
public struct OIDCResponse: Sendable {
    public var status: Int
    public var body: [UInt8]
    public init(status: Int, body: [UInt8]) {
        self.status = status
        self.body = body
    }
}

/// How single sign-on talks to the provider (AsyncHTTPClient in the composition root; a fake in unit tests).
public protocol OIDCFetching: Sendable {
    /// GETs `url`; a body longer than `maxBytes` throws.
    func get(_ url: String, maxBytes: Int) async throws -> OIDCResponse
    /// POSTs `fields` as `application/x-www-form-urlencoded` to `url`, with HTTP basic auth when `basic` is given; a
    /// body longer than `maxBytes` throws.
    func postForm(_ url: String, fields: [(String, String)], basic: (user: String, password: String)?, maxBytes: Int)
        async throws -> OIDCResponse
}

/// OpenID Connect login (issue #37): the authorization code flow with PKCE (S256), `state` and `nonce`, the code
/// exchanged at the token endpoint, the `id_token` verified against the issuer's JWKS and its claims checked
/// (``IDTokenCheck``); then the person is found or made (``SingleSignOnAccount``) and gets the same kind of session as a
/// password login (``PeopleService``), which removing them ends at once.
///
/// - A login's `state`, `nonce` and PKCE verifier are random and travel in a short-lived `HttpOnly` cookie of this
///   browser (``Pending``), not in server memory: any node of several may answer the callback, and a callback without
///   this browser's cookie (login CSRF, a link sent to someone else) has no state to match. The cookie is sealed
///   (``LoginStateSealing``, authenticated encryption under the server's key): the browser can neither read the nonce
///   and verifier nor change them, and a cookie this server did not seal is refused before anything else. Each state is also spent
///   once per node (``spentStates``), so a replayed callback is refused here, before the provider refuses its code.
/// - The discovery document and the key set are cached for ``cacheLifetime``; a token naming a key id not in the
///   cached set fetches the set again (key rotation), at most once per ``minKeyRefresh``, so tokens with made-up key
///   ids cannot make the server hammer the provider.
/// - Nothing the provider sends is trusted before it is checked: every answer is size-limited, the token is parsed as
///   hostile bytes (``JSONWebToken``), and messages quote it only in short printable excerpts.
public final class SingleSignOnService: Sendable {
    public let configuration: SingleSignOnConfiguration
    let fetcher: any OIDCFetching
    let verifier: any JWSVerifying
    let people: PeopleService
    let projects: ProjectService
    let hasher: any SecretHashing
    let generator: any SecretGenerating
    let clock: any WallClock
    /// Seals the login cookie.
    let sealer: any LoginStateSealing
    /// This server's callback URL (`{public URL}/login/sso/callback`); nil until the server knows its address.
    let redirectURI: @Sendable () -> String?
    let cacheLifetime: TimeInterval
    let minKeyRefresh: TimeInterval
    /// How long a started login may take to come back.
    public let pendingLifetime: TimeInterval = 600
    let cache = Mutex(Cache())
    /// States whose callback this node has taken, with when; at most ``maxSpentStates``.
    let spentStates = Mutex<[String: Date]>([:])
    static let maxSpentStates = 10_000

    struct Cache {
        var metadata: (value: OIDCProviderMetadata, at: Date)?
        var keys: (value: JSONWebKeySet, at: Date)?
    }

    public init(
        configuration: SingleSignOnConfiguration, fetcher: any OIDCFetching, verifier: any JWSVerifying,
        people: PeopleService, projects: ProjectService, hasher: any SecretHashing, generator: any SecretGenerating,
        clock: any WallClock, sealer: any LoginStateSealing, redirectURI: @escaping @Sendable () -> String?,
        cacheLifetime: TimeInterval = 3600, minKeyRefresh: TimeInterval = 10
    ) {
        self.sealer = sealer
        self.configuration = configuration
        self.fetcher = fetcher
        self.verifier = verifier
        self.people = people
        self.projects = projects
        self.hasher = hasher
        self.generator = generator
        self.clock = clock
        self.redirectURI = redirectURI
        self.cacheLifetime = cacheLifetime
        self.minKeyRefresh = minKeyRefresh
    }

    /// Where to send the browser to sign in, and the cookie that remembers this login until it comes back.
    public struct Start: Sendable {
        public var location: String
        public var cookie: String
    }

    /// Starts a login that returns to `next` (a local path the caller checked).
    public func start(next: String) async throws -> Start {
        let metadata = try await providerMetadata()
        guard let redirect = redirectURI() else {
            throw SingleSignOnError(.notConfigured, "the server does not know its own address yet")
        }
        let pending = Pending(
            state: generator.randomHex(bytes: 32), nonce: generator.randomHex(bytes: 32),
            verifier: generator.randomHex(bytes: 32), next: next)
        let query: [(String, String)] = [
            ("response_type", "code"), ("client_id", configuration.clientID), ("redirect_uri", redirect),
            ("scope", configuration.scopes.joined(separator: " ")), ("state", pending.state),
            ("nonce", pending.nonce), ("code_challenge", challenge(pending.verifier)),
            ("code_challenge_method", "S256"),
        ]
        let endpoint = metadata.authorizationEndpoint
        let location = endpoint + (endpoint.contains("?") ? "&" : "?") + FormEncoding.encode(query)
        return Start(location: location, cookie: try await sealer.seal(pending.cookie))
    }

    /// The PKCE S256 challenge of `verifier`: base64url(SHA-256(verifier)).
    func challenge(_ verifier: String) -> String {
        Base64URL.encode(Hex.bytes(hasher.hash(verifier).hex) ?? [])
    }

    /// What the provider's redirect back carried.
    public struct Callback: Sendable {
        public var code: String?
        public var state: String?
        public var error: String?
        public init(code: String?, state: String?, error: String?) {
            self.code = code
            self.state = state
            self.error = error
        }
    }

    /// Finishes a login: checks the callback against this browser's `cookie`, exchanges the code, verifies the token
    /// and signs the person in. Returns the session and the path to go to.
    ///
    /// - Throws: ``SingleSignOnError`` naming the first check that failed (nothing is stored then).
    public func finish(_ callback: Callback, cookie: String?) async throws -> (
        outcome: AdminSessionService.LoginOutcome, next: String
    ) {
        guard let cookie else {
            throw SingleSignOnError(.wrongState, "this sign-in did not start in this browser, or took too long")
        }
        guard let opened = try await sealer.open(cookie), let pending = Pending(cookie: opened) else {
            throw SingleSignOnError(
                .wrongState, "the sign-in cookie was not made by this server, or was changed: sign in again")
        }
        guard let state = callback.state, ConstantTime.equal(Array(state.utf8), Array(pending.state.utf8)) else {
            throw SingleSignOnError(.wrongState, "this sign-in did not start in this browser, or took too long")
        }
        guard spend(pending.state) else {
            throw SingleSignOnError(.wrongState, "this sign-in was already used")
        }
        if let error = callback.error {
            throw SingleSignOnError(.providerRefused, "the provider did not sign you in (\(Printable.short(error)))")
        }
        guard let code = callback.code, (1...4096).contains(code.utf8.count) else {
            throw SingleSignOnError(.providerRefused, "the provider sent no authorization code")
        }
        let token = try await exchange(code: code, verifier: pending.verifier)
        let claims = try await verified(token, nonce: pending.nonce)
        let person = try await account(for: claims)
        return (try await people.startSession(for: person), pending.next)
    }

    /// Takes `state` as used; false when this node took it before.
    func spend(_ state: String) -> Bool {
        let now = clock.now()
        let lifetime = pendingLifetime
        return spentStates.withLock { spent in
            if spent[state] != nil { return false }
            if spent.count >= Self.maxSpentStates {
                spent = spent.filter { now.timeIntervalSince($0.value) < lifetime }
                if spent.count >= Self.maxSpentStates { spent.removeAll() }
            }
            spent[state] = now
            return true
        }
    }

    /// The `id_token` the token endpoint gives for `code`.
    func exchange(code: String, verifier: String) async throws -> String {
        let metadata = try await providerMetadata()
        guard let redirect = redirectURI() else {
            throw SingleSignOnError(.notConfigured, "the server does not know its own address yet")
        }
        var fields = [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", verifier), ("client_id", configuration.clientID),
        ]
        if metadata.secretInBody { fields.append(("client_secret", configuration.clientSecret)) }
        let basic =
            metadata.secretInBody
            ? nil
            : (FormEncoding.component(configuration.clientID), FormEncoding.component(configuration.clientSecret))
        let answer: OIDCResponse
        do {
            answer = try await fetcher.postForm(
                metadata.tokenEndpoint, fields: fields, basic: basic, maxBytes: JSONWebToken.maxBytes * 4)
        } catch {
            throw SingleSignOnError(.tokenEndpoint, "the provider's token endpoint did not answer")
        }
        let body = try? JSONDecoder().decode(TokenAnswer.self, from: Data(answer.body))
        guard answer.status == 200, let token = body?.idToken else {
            let reason = body?.error.map { " (\(Printable.short($0)))" } ?? ""
            throw SingleSignOnError(
                .providerRefused, "the provider refused the authorization code: HTTP \(answer.status)\(reason)")
        }
        return token
    }

    struct TokenAnswer: Decodable {
        var idToken: String?
        var error: String?
        enum CodingKeys: String, CodingKey {
            case idToken = "id_token"
            case error
        }
    }

    /// The claims of `token` once its signature, issuer, audience, times and nonce are checked.
    func verified(_ token: String, nonce: String) async throws -> IDTokenClaims {
        let jwt = try JSONWebToken.parse(token).get()
        var keys = try await keySet(refresh: false)
        var key = keys.key(for: jwt.algorithm, keyID: jwt.keyID)
        if key == nil {
            // A key id we have not seen: the issuer may have rotated its keys since we fetched them.
            keys = try await keySet(refresh: true)
            key = keys.key(for: jwt.algorithm, keyID: jwt.keyID)
        }
        guard let key else {
            throw SingleSignOnError(.unknownKey, "the id_token is signed with a key the issuer does not publish")
        }
        guard verifier.verify(jwt.signature, of: jwt.signingInput, with: key, algorithm: jwt.algorithm) else {
            throw SingleSignOnError(.badSignature, "the id_token's signature does not verify")
        }
        let check = IDTokenCheck(
            issuer: configuration.issuer, clientID: configuration.clientID, leeway: configuration.leeway)
        if let problem = check.problem(jwt.claims, nonce: nonce, now: clock.now()) { throw problem }
        return jwt.claims
    }

    /// The person a verified login is for, made (with its default roles) when the rules allow.
    func account(for claims: IDTokenClaims) async throws -> Person {
        var known: [PersonLogin: Person] = [:]
        if let login = claims.email.flatMap({ PersonLogin(rawValue: $0) }),
            let person = try await people.person(login: login)
        {
            known[login] = person
        }
        switch SingleSignOnAccount.decide(claims, existing: { known[$0]?.id }, configuration: configuration) {
        case .failure(let error):
            throw error
        case .success(.link(let id)):
            guard let person = known.values.first(where: { $0.id == id }) else {
                throw SingleSignOnError(.noAccount, "the account was removed")
            }
            return person
        case .success(.create(let login, let name, let rules)):
            var roles: [(ProjectRole, ProjectID)] = []
            for rule in rules {
                if let project = try await projects.project(slug: rule.project) {
                    roles.append((rule.role, project.id))
                }
            }
            guard !roles.isEmpty else {
                throw SingleSignOnError(.noAccount, "\(login.rawValue) has no account here; ask an owner to invite you")
            }
            return try await people.createAccount(login: login, name: name, roles: roles)
        }
    }

    /// The issuer's discovery document, cached.
    func providerMetadata() async throws -> OIDCProviderMetadata {
        let now = clock.now()
        if let cached = cache.withLock({ $0.metadata }), now.timeIntervalSince(cached.at) < cacheLifetime {
            return cached.value
        }
        let url = OIDCProviderMetadata.discoveryURL(issuer: configuration.issuer)
        let answer = try await fetch(url, maxBytes: OIDCProviderMetadata.maxBytes, what: .discovery)
        let metadata = try OIDCProviderMetadata.parse(answer, issuer: configuration.issuer).get()
        cache.withLock { $0.metadata = (metadata, now) }
        return metadata
    }

    /// The issuer's keys, cached; `refresh` fetches them again unless they were fetched within ``minKeyRefresh``.
    func keySet(refresh: Bool) async throws -> JSONWebKeySet {
        let now = clock.now()
        if let cached = cache.withLock({ $0.keys }) {
            let age = now.timeIntervalSince(cached.at)
            if age < (refresh ? minKeyRefresh : cacheLifetime) { return cached.value }
        }
        let metadata = try await providerMetadata()
        let answer = try await fetch(metadata.jwksURI, maxBytes: JSONWebKeySet.maxBytes, what: .keySet)
        let keys = try JSONWebKeySet.parse(answer).get()
        cache.withLock { $0.keys = (keys, now) }
        return keys
    }

    func fetch(_ url: String, maxBytes: Int, what: SingleSignOnError.Code) async throws -> [UInt8] {
        let answer: OIDCResponse
        do {
            answer = try await fetcher.get(url, maxBytes: maxBytes)
        } catch {
            throw SingleSignOnError(what, "the provider did not answer at \(Printable.short(url))")
        }
        guard answer.status == 200 else {
            throw SingleSignOnError(what, "the provider answered HTTP \(answer.status) at \(Printable.short(url))")
        }
        return answer.body
    }
}

/// A started login as this browser's cookie holds it: `v1.STATE.NONCE.VERIFIER.NEXT` (three 64-digit hex values and
/// the base64url of the local path to return to).
struct Pending: Equatable {
    var state: String
    var nonce: String
    var verifier: String
    var next: String

    var cookie: String { ["v1", state, nonce, verifier, Base64URL.encode(Array(next.utf8))].joined(separator: ".") }

    init(state: String, nonce: String, verifier: String, next: String) {
        self.state = state
        self.nonce = nonce
        self.verifier = verifier
        self.next = next
    }

    /// Reads a cookie value; nil for anything this server did not write.
    init?(cookie: String) {
        guard cookie.utf8.count <= 4096 else { return nil }
        let parts = cookie.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 5, parts[0] == "v1", parts[1...3].allSatisfy(AdminSessionService.looksLikeSessionSecret),
            let next = Base64URL.decode(parts[4]).flatMap({ String(validating: $0, as: UTF8.self) })
        else { return nil }
        (state, nonce, verifier, self.next) = (parts[1], parts[2], parts[3], next)
    }
}

/// `application/x-www-form-urlencoded` (and query strings): unreserved characters as they are, every other byte
/// `%XX`.
public enum FormEncoding {
    public static func component(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return out
    }

    public static func encode(_ fields: [(String, String)]) -> String {
        fields.map { component($0.0) + "=" + component($0.1) }.joined(separator: "&")
    }
}
