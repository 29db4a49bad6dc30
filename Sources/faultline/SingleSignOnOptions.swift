import ArgumentParser
import FaultlineCore
import Foundation

/// OpenID Connect single sign-on for `faultline serve` (docs/people.md): flags, `FAULTLINE_OIDC_*` variables, or a JSON
/// config file (`--oidc-config`); a flag wins over a variable, a variable over the file. The client secret is never a
/// flag (it would show in `ps` and shell history): it comes from `FAULTLINE_OIDC_CLIENT_SECRET` or from the file that
/// `--oidc-client-secret-file` (or the config file's `client_secret_file`) names.
struct SingleSignOnOptions: ParsableArguments {
    @Option(
        help:
            "OpenID issuer URL, as its tokens' iss says (env FAULTLINE_OIDC_ISSUER); https, or http on loopback. Turns single sign-on on."
    )
    var oidcIssuer: String?
    @Option(help: "The client id registered with the issuer (env FAULTLINE_OIDC_CLIENT_ID).")
    var oidcClientId: String?
    @Option(
        help:
            "A file holding the client secret (env FAULTLINE_OIDC_CLIENT_SECRET_FILE; or the secret in FAULTLINE_OIDC_CLIENT_SECRET); one trailing newline is dropped."
    )
    var oidcClientSecretFile: String?
    @Option(help: "The provider's name on the login page: \"Sign in with NAME\" (env FAULTLINE_OIDC_NAME).")
    var oidcName: String?
    @Option(help: "Scopes to ask for, space-separated (env FAULTLINE_OIDC_SCOPES; default \"openid email profile\").")
    var oidcScopes: String?
    @Flag(
        help:
            "Make an account at a first login when an --oidc-role rule matches the person (env FAULTLINE_OIDC_ALLOW_SIGNUP=1)."
    )
    var oidcAllowSignup = false
    @Option(
        help:
            "A new account's default role, PROJECT:ROLE:MATCH with MATCH email_domain=DOMAIN, CLAIM=VALUE or * (repeatable; env FAULTLINE_OIDC_ROLES, comma-separated)."
    )
    var oidcRole: [String] = []
    @Option(help: "A JSON file with the same settings (env FAULTLINE_OIDC_CONFIG; docs/people.md).")
    var oidcConfig: String?

    /// The config file's members.
    struct File: Decodable {
        var issuer: String?
        var clientID: String?
        var clientSecretFile: String?
        var name: String?
        var scopes: [String]?
        var allowSignup: Bool?
        var roles: [String]?
        enum CodingKeys: String, CodingKey {
            case issuer, name, scopes, roles
            case clientID = "client_id"
            case clientSecretFile = "client_secret_file"
            case allowSignup = "allow_signup"
        }
    }

    /// The settings, nil when no issuer is given anywhere; a bad value is a `ValidationError` naming where it came from.
    func configuration(_ env: Environment) throws -> SingleSignOnConfiguration? {
        var file = File()
        if let path = oidcConfig ?? env.string("FAULTLINE_OIDC_CONFIG") {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--oidc-config: cannot read \(path)")
            }
            do {
                file = try JSONDecoder().decode(File.self, from: data)
            } catch {
                throw ValidationError("--oidc-config: \(path) is not the JSON object docs/people.md describes")
            }
        }
        guard let issuer = oidcIssuer ?? env.string("FAULTLINE_OIDC_ISSUER") ?? file.issuer else { return nil }
        guard let clientID = oidcClientId ?? env.string("FAULTLINE_OIDC_CLIENT_ID") ?? file.clientID else {
            throw ValidationError("single sign-on needs --oidc-client-id")
        }
        let secret: String
        if let value = env.string("FAULTLINE_OIDC_CLIENT_SECRET") {
            secret = value
        } else if let path = oidcClientSecretFile ?? env.string("FAULTLINE_OIDC_CLIENT_SECRET_FILE")
            ?? file.clientSecretFile
        {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ValidationError("--oidc-client-secret-file: cannot read \(path)")
            }
            var text = String(decoding: data, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            secret = text
        } else {
            throw ValidationError(
                "single sign-on needs the client secret in FAULTLINE_OIDC_CLIENT_SECRET or --oidc-client-secret-file")
        }
        let scopes =
            (oidcScopes ?? env.string("FAULTLINE_OIDC_SCOPES")).map { $0.split(separator: " ").map(String.init) }
            ?? file.scopes ?? ["openid", "email", "profile"]
        let ruleTexts =
            !oidcRole.isEmpty
            ? oidcRole
            : env.string("FAULTLINE_OIDC_ROLES").map { $0.split(separator: ",").map(String.init) } ?? file.roles ?? []
        let rules = try ruleTexts.map { text in
            switch RoleRule.parse(text) {
            case .success(let rule): return rule
            case .failure(let error): throw ValidationError("--oidc-role: \(error.message)")
            }
        }
        let allowSignup = try oidcAllowSignup || (env.bool("FAULTLINE_OIDC_ALLOW_SIGNUP") ?? file.allowSignup ?? false)
        let configuration = SingleSignOnConfiguration(
            issuer: issuer, clientID: clientID, clientSecret: secret,
            displayName: oidcName ?? env.string("FAULTLINE_OIDC_NAME") ?? file.name ?? "single sign-on",
            scopes: scopes, allowSignup: allowSignup, roleRules: rules)
        if let problem = configuration.problem { throw ValidationError("single sign-on: \(problem)") }
        return configuration
    }
}
