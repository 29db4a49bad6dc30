import FaultlineCore
import Foundation
import Testing

/// The pure parts of OpenID Connect login: base64url, the token's parts, the key set, the claim checks, role rules
/// and who a login is for. (The signatures with real keys and the whole flow: SingleSignOnEndToEndTests.)
@Suite struct SingleSignOnTests {
    static func part(_ json: String) -> String { Base64URL.encode(Array(json.utf8)) }
    static func token(header: String = #"{"alg":"RS256","kid":"k1"}"#, claims: String, signature: String = "c2ln")
        -> String
    {
        part(header) + "." + part(claims) + "." + signature
    }

    @Test func base64urlIsCanonical() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("QQ") == [0x41])
        // The same byte with non-zero leftover bits, padding, the standard alphabet, an impossible length: refused.
        for bad in ["QR", "QQ==", "a+b/", "QUJDR", "Q"] { #expect(Base64URL.decode(bad) == nil, "\(bad)") }
    }

    @Test func aTokenIsSplitAndItsClaimsRead() throws {
        let claims =
            #"{"iss":"https://id.example.com","aud":["faultline","other"],"azp":"faultline","exp":2000000000.5,"iat":1,"nonce":"n","email":"Ada@Example.com","email_verified":"true","groups":["crash-admins","staff"],"nested":{"a":[1]}}"#
        let jwt = try JSONWebToken.parse(Self.token(claims: claims)).get()
        #expect(jwt.algorithm == .rs256 && jwt.keyID == "k1")
        #expect(jwt.signature == Array("sig".utf8))
        #expect(jwt.signingInput == Array((Self.part(#"{"alg":"RS256","kid":"k1"}"#) + "." + Self.part(claims)).utf8))
        #expect(jwt.claims.audiences == ["faultline", "other"])
        #expect(jwt.claims.expiresAt == 2_000_000_000.5)
        #expect(jwt.claims.emailVerified)
        #expect(jwt.claims.all["groups"]?.holds("crash-admins") == true)
        #expect(jwt.claims.all["nested"] == .other)
    }

    @Test func hostileTokensAreRefusedWithAReason() {
        let claims = #"{"iss":"x"}"#
        let cases: [(String, SingleSignOnError.Code)] = [
            (Self.token(header: #"{"alg":"none"}"#, claims: claims), .unsupportedAlgorithm),
            (Self.token(header: #"{"alg":"HS256"}"#, claims: claims), .unsupportedAlgorithm),
            (Self.token(header: #"{"alg":"RS256","crit":["exp"]}"#, claims: claims), .malformedToken),
            (Self.token(claims: claims, signature: ""), .malformedToken),
            (Self.token(header: #"{"kid":"k"}"#, claims: claims), .malformedToken),
            (Self.token(claims: "[1]"), .malformedToken),
            (
                Self.token(claims: String(repeating: "[", count: 40) + String(repeating: "]", count: 40)),
                .malformedToken
            ),
            ("a.b", .malformedToken), ("a.b.c.d", .malformedToken), ("", .malformedToken),
            (Self.token(claims: String(repeating: " ", count: JSONWebToken.maxBytes)), .malformedToken),
        ]
        for (token, code) in cases {
            guard case .failure(let error) = JSONWebToken.parse(token) else {
                Issue.record("accepted \(token.prefix(80))")
                continue
            }
            #expect(error.code == code, "\(token.prefix(80)): \(error)")
        }
    }

    @Test func theKeySetKeepsUsableSigningKeysOnly() throws {
        let modulus = Base64URL.encode([0] + [UInt8](repeating: 0xC5, count: 256))
        let x = Base64URL.encode([UInt8](repeating: 1, count: 32))
        let document = """
            {"keys":[
             {"kty":"RSA","kid":"r1","use":"sig","alg":"RS256","n":"\(modulus)","e":"AQAB"},
             {"kty":"RSA","kid":"small","n":"\(Base64URL.encode([UInt8](repeating: 7, count: 128)))","e":"AQAB"},
             {"kty":"RSA","kid":"enc","use":"enc","n":"\(modulus)","e":"AQAB"},
             {"kty":"EC","kid":"e1","crv":"P-256","x":"\(x)","y":"\(x)"},
             {"kty":"EC","kid":"p384","crv":"P-384","x":"\(x)","y":"\(x)"},
             {"kty":"oct","kid":"h","k":"c2VjcmV0"}, {"kty":7}, 3]}
            """
        let set = try JSONWebKeySet.parse(Array(document.utf8)).get()
        #expect(set.keys.map(\.keyID) == ["r1", "e1"])
        if case .rsa(let n, _) = set.keys[0].material { #expect(n.count == 256) }  // the leading zero dropped
        #expect(set.key(for: .rs256, keyID: "r1")?.keyID == "r1")
        #expect(set.key(for: .es256, keyID: "r1") == nil)  // an RSA key never verifies ES256
        #expect(set.key(for: .es256, keyID: nil)?.keyID == "e1")
        #expect(set.key(for: .rs256, keyID: "unknown") == nil)
        for bad in [#"{"keys":[]}"#, "[]", #"{"keys":[{"kty":"oct"}]}"#, "{"] {
            guard case .failure = JSONWebKeySet.parse(Array(bad.utf8)) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
    }

    @Test func theClaimChecksFollowTheStandard() {
        let check = IDTokenCheck(issuer: "https://id.example.com", clientID: "faultline", leeway: 60)
        let now = Date(timeIntervalSince1970: 1_000_000)
        func claims(_ changes: [String: ClaimValue] = [:]) -> IDTokenClaims {
            var all: [String: ClaimValue] = [
                "iss": .string("https://id.example.com"), "aud": .string("faultline"), "exp": .number(1_000_300),
                "iat": .number(999_990), "nonce": .string("n1"),
            ]
            for (key, value) in changes { all[key] = value }
            return IDTokenClaims(all)
        }
        #expect(check.problem(claims(), nonce: "n1", now: now) == nil)
        // A minute of clock difference either way is tolerated.
        #expect(check.problem(claims(["exp": .number(999_950)]), nonce: "n1", now: now) == nil)
        #expect(check.problem(claims(["iat": .number(1_000_050)]), nonce: "n1", now: now) == nil)
        let refused: [([String: ClaimValue], SingleSignOnError.Code)] = [
            (["iss": .string("https://id.example.com/")], .wrongIssuer),
            (["aud": .string("other")], .wrongAudience),
            (["aud": .strings(["faultline", "other"])], .wrongAudience),  // several audiences need azp
            (["aud": .strings(["faultline", "other"]), "azp": .string("other")], .wrongAudience),
            (["exp": .number(999_900)], .expired), (["exp": .string("2000000000")], .expired),
            (["iat": .number(1_000_100)], .notYetValid), (["nbf": .number(1_000_100)], .notYetValid),
            (["nonce": .string("n2")], .wrongNonce), (["nonce": .other], .wrongNonce),
        ]
        for (changes, code) in refused {
            #expect(check.problem(claims(changes), nonce: "n1", now: now)?.code == code, "\(changes)")
        }
        #expect(
            check.problem(
                claims(["aud": .strings(["faultline", "x"]), "azp": .string("faultline")]), nonce: "n1", now: now)
                == nil)
    }

    @Test func roleRulesParseAndMatch() throws {
        let domain = try RoleRule.parse("shop:member:email_domain=Example.com").get()
        #expect(domain.match == .emailDomain("example.com"))
        let group = try RoleRule.parse("shop:admin:groups=crash-admins").get()
        let anyone = try RoleRule.parse("docs:viewer:*").get()
        #expect(anyone.description == "docs:viewer:*")
        for bad in ["shop:member", "shop:owner:*", "Bad Slug:viewer:*", "shop:viewer:", "shop:viewer:=x"] {
            guard case .failure = RoleRule.parse(bad) else {
                Issue.record("accepted \(bad)")
                continue
            }
        }
        let claims = IDTokenClaims(["groups": .strings(["crash-admins"])])
        let ada = try #require(PersonLogin("ada@example.com"))
        #expect(domain.matches(claims, email: ada) && group.matches(claims, email: ada))
        let eve = try #require(PersonLogin("eve@notexample.com"))
        #expect(!domain.matches(IDTokenClaims([:]), email: eve) && !group.matches(IDTokenClaims([:]), email: eve))
    }

    @Test func aLoginLinksAVerifiedEmailOrMakesAnAccountOnlyWhenAllowed() throws {
        let rules = [
            try RoleRule.parse("shop:member:email_domain=example.com").get(),
            try RoleRule.parse("shop:admin:*").get(),
        ]
        var configuration = SingleSignOnConfiguration(
            issuer: "https://id.example.com", clientID: "c", clientSecret: "s", allowSignup: true, roleRules: rules)
        func claims(_ email: String, verified: Bool = true) -> IDTokenClaims {
            IDTokenClaims(["email": .string(email), "email_verified": .bool(verified), "name": .string("Ada")])
        }
        let known = PersonID(7)
        let existing: (PersonLogin) -> PersonID? = { $0.rawValue == "bob@example.com" ? known : nil }
        #expect(
            try SingleSignOnAccount.decide(claims("Bob@Example.com"), existing: existing, configuration: configuration)
                .get() == .link(known))
        // A new account gets one role a project: the first rule that matches.
        let made = try SingleSignOnAccount.decide(
            claims("ada@example.com"), existing: existing, configuration: configuration
        ).get()
        #expect(made == .create(login: try #require(PersonLogin("ada@example.com")), name: "Ada", roles: [rules[0]]))
        // An unverified address links nobody and makes nothing.
        #expect(throws: SingleSignOnError.self) {
            try SingleSignOnAccount.decide(
                claims("bob@example.com", verified: false), existing: existing, configuration: configuration
            ).get()
        }
        configuration.allowSignup = false
        #expect(throws: SingleSignOnError.self) {
            try SingleSignOnAccount.decide(claims("ada@example.com"), existing: existing, configuration: configuration)
                .get()
        }
        configuration.allowSignup = true
        configuration.roleRules = [rules[0]]
        #expect(throws: SingleSignOnError.self) {
            try SingleSignOnAccount.decide(
                claims("eve@elsewhere.org"), existing: existing, configuration: configuration
            ).get()
        }
    }

    @Test func discoveryMustNameOurIssuerAndSafeEndpoints() throws {
        func document(issuer: String = "https://id.example.com", token: String = "https://id.example.com/token")
            -> [UInt8]
        {
            Array(
                #"{"issuer":"\#(issuer)","authorization_endpoint":"https://id.example.com/auth","token_endpoint":"\#(token)","jwks_uri":"https://id.example.com/keys","token_endpoint_auth_methods_supported":["client_secret_post"]}"#
                    .utf8)
        }
        let metadata = try OIDCProviderMetadata.parse(document(), issuer: "https://id.example.com").get()
        #expect(metadata.tokenEndpoint == "https://id.example.com/token" && metadata.secretInBody)
        for bad in [document(issuer: "https://evil.example.com"), document(token: "http://id.example.com/token")] {
            guard case .failure = OIDCProviderMetadata.parse(bad, issuer: "https://id.example.com") else {
                Issue.record("accepted \(String(decoding: bad, as: UTF8.self))")
                continue
            }
        }
        #expect(OIDCURL.acceptable("http://127.0.0.1:8080/x") && OIDCURL.acceptable("http://localhost"))
        #expect(!OIDCURL.acceptable("http://127.0.0.1.evil.com/") && !OIDCURL.acceptable("http://localhostx/"))
        #expect(!OIDCURL.acceptable("javascript:alert(1)") && !OIDCURL.acceptable("https://"))
    }
}
