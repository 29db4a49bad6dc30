#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an issuer's discovery document (`{issuer}/.well-known/openid-configuration`) says, as far as login needs
/// it, checked: the document's `issuer` is exactly the configured one (OpenID Connect Discovery §4.3: otherwise a
/// document could send our logins elsewhere), every endpoint is an https URL (plain http only on loopback, for a
/// provider on the same machine), and S256 is among the PKCE methods when the document lists them.
public struct OIDCProviderMetadata: Sendable, Equatable {
    public static let maxBytes = 64 * 1024

    public var issuer: String
    public var authorizationEndpoint: String
    public var tokenEndpoint: String
    public var jwksURI: String
    /// Send the client secret in the token request's body (`client_secret_post`) rather than as HTTP basic auth
    /// (`client_secret_basic`, the default of the standard): only when the issuer lists the one and not the other.
    public var secretInBody: Bool

    public init(
        issuer: String, authorizationEndpoint: String, tokenEndpoint: String, jwksURI: String,
        secretInBody: Bool = false
    ) {
        self.issuer = issuer
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.jwksURI = jwksURI
        self.secretInBody = secretInBody
    }

    /// The document at `{issuer}/.well-known/openid-configuration`.
    public static func discoveryURL(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/openid-configuration"
    }

    /// Reads and checks a discovery document for `issuer`.
    public static func parse(_ bytes: [UInt8], issuer: String) -> Result<OIDCProviderMetadata, SingleSignOnError> {
        func bad(_ why: String) -> Result<OIDCProviderMetadata, SingleSignOnError> {
            .failure(SingleSignOnError(.discovery, "the issuer's discovery document is unusable: \(why)"))
        }
        guard bytes.count <= maxBytes else { return bad("longer than \(maxBytes) bytes") }
        guard JSONNesting.within(bytes), let document = try? JSONDecoder().decode(Document.self, from: Data(bytes))
        else { return bad("not a JSON object with the required endpoints") }
        guard document.issuer == issuer else { return bad("its issuer is not \(Printable.short(issuer))") }
        for endpoint in [document.authorizationEndpoint, document.tokenEndpoint, document.jwksURI] {
            guard OIDCURL.acceptable(endpoint) else {
                return bad("\(Printable.short(endpoint)) is not an https URL")
            }
        }
        if let methods = document.codeChallengeMethods, !methods.contains("S256") {
            return bad("it does not offer PKCE with S256")
        }
        let auth = document.authMethods ?? []
        return .success(
            OIDCProviderMetadata(
                issuer: issuer, authorizationEndpoint: document.authorizationEndpoint,
                tokenEndpoint: document.tokenEndpoint, jwksURI: document.jwksURI,
                secretInBody: auth.contains("client_secret_post") && !auth.contains("client_secret_basic")))
    }

    struct Document: Decodable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
        var codeChallengeMethods: [String]?
        var authMethods: [String]?

        enum CodingKeys: String, CodingKey {
            case issuer
            case authorizationEndpoint = "authorization_endpoint"
            case tokenEndpoint = "token_endpoint"
            case jwksURI = "jwks_uri"
            case codeChallengeMethods = "code_challenge_methods_supported"
            case authMethods = "token_endpoint_auth_methods_supported"
        }
    }
}

/// The URLs single sign-on talks to.
public enum OIDCURL {
    /// An `https://` URL, or `http://` to a loopback host (`127.0.0.1`, `[::1]`, `localhost`); at most 2 KB of
    /// printable ASCII, no fragment.
    public static func acceptable(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, !url.contains("#"),
            url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7f })
        else { return false }
        let lower = url.lowercased()
        if lower.hasPrefix("https://") { return lower.count > "https://".count }
        for host in ["http://127.0.0.1", "http://localhost", "http://[::1]"] where lower.hasPrefix(host) {
            let rest = lower.dropFirst(host.count)
            if rest.isEmpty || rest.first == ":" || rest.first == "/" { return true }
        }
        return false
    }
}

/// Single sign-on's settings (`faultline serve --oidc-…` or its config file): the issuer and this server's client
/// there, and who may get an account.
public struct SingleSignOnConfiguration: Sendable, Equatable {
    /// The issuer URL, exactly as the provider's tokens carry it in `iss`.
    public var issuer: String
    public var clientID: String
    /// The client secret, read from the environment or a file (never a command-line argument, which `ps` shows).
    public var clientSecret: String
    /// The provider's name on the login page's button: "Sign in with \(displayName)".
    public var displayName: String
    /// The scopes asked for; `openid` is always among them.
    public var scopes: [String]
    /// Whether a first login of someone without an account makes one (when a role rule matches them).
    public var allowSignup: Bool
    /// Default roles of accounts made by a first login.
    public var roleRules: [RoleRule]
    /// Clock difference tolerated with the issuer, in seconds.
    public var leeway: TimeInterval

    public init(
        issuer: String, clientID: String, clientSecret: String, displayName: String = "single sign-on",
        scopes: [String] = ["openid", "email", "profile"], allowSignup: Bool = false, roleRules: [RoleRule] = [],
        leeway: TimeInterval = 60
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.displayName = displayName
        self.scopes = scopes.contains("openid") ? scopes : ["openid"] + scopes
        self.allowSignup = allowSignup
        self.roleRules = roleRules
        self.leeway = leeway
    }

    /// Why these settings cannot work, or nil.
    public var problem: String? {
        if !OIDCURL.acceptable(issuer) { return "the issuer must be an https URL (http only on loopback)" }
        if clientID.isEmpty || clientID.utf8.count > 512 { return "the client id must be 1–512 bytes" }
        if clientSecret.isEmpty { return "the client secret is empty" }
        if displayName.isEmpty || displayName.utf8.count > 64 { return "the provider's name must be 1–64 bytes" }
        return nil
    }
}

/// A default role: when a person's first single sign-on login matches, their new account gets `role` in `project`.
///
/// Written `PROJECT:ROLE:MATCH`, where MATCH is `email_domain=example.com` (the verified e-mail's domain),
/// `CLAIM=VALUE` (a string claim equal to VALUE, or a list claim such as `groups` holding it), or `*` (anyone the
/// issuer signs in).
public struct RoleRule: Sendable, Equatable, CustomStringConvertible {
    public enum Match: Sendable, Equatable {
        case everyone
        case emailDomain(String)
        case claim(name: String, value: String)
    }
    public var project: ProjectSlug
    public var role: ProjectRole
    public var match: Match

    public init(project: ProjectSlug, role: ProjectRole, match: Match) {
        self.project = project
        self.role = role
        self.match = match
    }

    /// Reads `PROJECT:ROLE:MATCH`; the error says which part is wrong.
    public static func parse(_ text: String) -> Result<RoleRule, SingleSignOnError> {
        func bad(_ why: String) -> Result<RoleRule, SingleSignOnError> {
            .failure(SingleSignOnError(.notConfigured, "role rule \(Printable.short(text)): \(why)"))
        }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3 else { return bad("write PROJECT:ROLE:MATCH") }
        guard let project = ProjectSlug(parts[0]) else {
            return bad("\(Printable.short(parts[0])) is not a project slug")
        }
        guard let role = ProjectRole(rawValue: parts[1]) else { return bad("the role is viewer, member or admin") }
        if parts[2] == "*" { return .success(RoleRule(project: project, role: role, match: .everyone)) }
        let pair = parts[2].split(separator: "=", maxSplits: 1).map(String.init)
        guard pair.count == 2, !pair[0].isEmpty, !pair[1].isEmpty else {
            return bad("the match is email_domain=DOMAIN, CLAIM=VALUE or *")
        }
        if pair[0] == "email_domain" {
            return .success(RoleRule(project: project, role: role, match: .emailDomain(pair[1].lowercased())))
        }
        return .success(RoleRule(project: project, role: role, match: .claim(name: pair[0], value: pair[1])))
    }

    /// Whether the rule applies to a person with these verified claims and e-mail.
    public func matches(_ claims: IDTokenClaims, email: PersonLogin) -> Bool {
        switch match {
        case .everyone: true
        case .emailDomain(let domain): email.rawValue.split(separator: "@").last.map(String.init) == domain
        case .claim(let name, let value): claims.all[name]?.holds(value) ?? false
        }
    }

    public var description: String {
        let match =
            switch self.match {
            case .everyone: "*"
            case .emailDomain(let domain): "email_domain=\(domain)"
            case .claim(let name, let value): "\(name)=\(value)"
            }
        return "\(project):\(role.rawValue):\(match)"
    }
}

/// Who a verified single sign-on login is, decided from its claims and the accounts that exist. Pure.
public enum SingleSignOnAccount {
    /// What to do with a verified login.
    public enum Decision: Sendable, Equatable {
        /// Sign in the existing person with this verified e-mail (their roles stay as they are).
        case link(PersonID)
        /// Make an account for `login`, named `name`, with these roles (by project slug), then sign it in.
        case create(login: PersonLogin, name: String, roles: [RoleRule])
    }

    /// The person the login is for: an existing account with the verified e-mail, else a new one when sign-up is on and
    /// a rule gives it a role; refused otherwise.
    public static func decide(
        _ claims: IDTokenClaims, existing: (PersonLogin) -> PersonID?, configuration: SingleSignOnConfiguration
    ) -> Result<Decision, SingleSignOnError> {
        guard let address = claims.email, let login = PersonLogin(address), login.rawValue.contains("@") else {
            return .failure(SingleSignOnError(.noEmail, "the provider sent no e-mail address"))
        }
        guard claims.emailVerified else {
            return .failure(SingleSignOnError(.noEmail, "the provider has not verified \(login.rawValue)"))
        }
        if let person = existing(login) { return .success(.link(person)) }
        let roles = configuration.roleRules.filter { $0.matches(claims, email: login) }
        // One role per project: the first rule that matches a project wins.
        var seen: Set<ProjectSlug> = []
        let firstPerProject = roles.filter { seen.insert($0.project).inserted }
        guard configuration.allowSignup, !firstPerProject.isEmpty else {
            return .failure(
                SingleSignOnError(
                    .noAccount, "\(login.rawValue) has no account here; ask an owner to invite you"))
        }
        let name = (try? PersonName.checked(claims.name ?? "").get()) ?? ""
        return .success(.create(login: login, name: name, roles: firstPerProject))
    }
}
